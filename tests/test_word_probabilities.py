"""Whisper's tokens made into words with how sure the decoder is of each."""

from __future__ import annotations

from audio.whisper_decode import group_words


def test_a_word_is_as_sure_as_its_least_likely_token() -> None:
    pieces = [" Set", " a", " timer", " for", " forty", "-", "five", " seconds", "."]
    probs = [0.9, 0.95, 0.99, 0.98, 0.4, 0.2, 0.7, 0.97, 0.3]
    words = group_words(pieces, probs)
    assert [(list(span), p) for span, p in words] == [
        ([0], 0.9), ([1], 0.95), ([2], 0.99), ([3], 0.98), ([4, 5, 6], 0.4), ([7, 8], 0.97),
    ]  # the hyphen and the full stop count for nothing


def test_the_first_token_starts_a_word_without_a_space_and_pieces_of_a_character_are_words() -> None:
    words = group_words(["Hey", ",", " \ufffd", "\ufffd", " 분"], [0.8, 0.1, 0.5, 0.6, 0.9])
    assert [(list(span), p) for span, p in words] == [([0, 1], 0.8), ([2, 3], 0.5), ([4], 0.9)]
    assert group_words([], []) == []
