"""Choosing among Whisper's best hypotheses by the kitchen's words: the lexicon, the choice,
and the recognizer's final (recorded n-best lists, no model)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np

from audio.protocols import AudioChunk
from audio.whisper_asr import WhisperRecognizer, WhisperSettings
from audio.whisper_decode import Decode
from audio.whisper_rescore import NUMBER, Lexicon, RescoreWeights, choose, context_lexicon, lexicon_words
from firmware_py.wiring import kitchen_lexicon

RATE = 16000
KITCHEN = Lexicon.of(["how many grams in two cups of flour", "add eggs to the shopping list", "Grams, cups, ounces."])

# What tiny.en's beam search gave on hearth's own voice saying "How much does a cup of sugar weigh in grams?"
GRAMS = (
    ("How much does a cup of sugar weigh in grants?", -0.103),
    ("How much does a cup of sugar weigh in grams?", -0.125),
    ("How much does a cup of sugar weigh in grands?", -0.242),
)


def test_numbers_are_one_word_class() -> None:
    assert lexicon_words("Add 2 eggs, twenty-five grams and 1.5 cups") == [
        "add", NUMBER, "eggs", NUMBER, NUMBER, "grams", "and", NUMBER, "cups"
    ]
    assert lexicon_words("") == []


def test_coverage_counts_known_words_and_pairs() -> None:
    assert KITCHEN.coverage("how many grams in two cups of flour") == (1.0, 1.0)
    words, pairs = KITCHEN.coverage("how many grands in two cups of flour")
    assert words == 7 / 8
    assert pairs < 1.0
    assert KITCHEN.coverage("...") == (0.0, 0.0)


def test_a_close_kitchen_word_wins_and_a_clear_preference_stands() -> None:
    weights = RescoreWeights()
    assert choose(GRAMS, KITCHEN, weights) == 1
    # The decoder sure of a word outside the kitchen is heard as it heard it.
    sure = (("Call mom.", -0.2), ("Cups, grams.", -2.5))
    assert choose(sure, KITCHEN, weights) == 0
    # Without a lexicon, or without weight, the decoder's best is kept.
    assert choose(GRAMS, Lexicon(), weights) == 0
    assert choose(GRAMS, KITCHEN, RescoreWeights(word=0.0, pair=0.0)) == 0


def test_korean_counts_syllable_pairs_across_spaces() -> None:
    assert lexicon_words("얼마 남았어?") == ["얼마", "마남", "남았", "았어"]
    assert lexicon_words("10분 맞춰") == [f"{NUMBER}분", "분맞", "맞춰"]
    lexicon = Lexicon.of(["타이머 얼마나 남았어?", "타이머 취소해 줘"])
    # Spaced differently, with a particle: still the kitchen's words.
    assert lexicon.coverage("타이머취소 해줘")[0] == 1.0
    # "얼마 남았어?" against "얼마나 맞서?" (the decoder's first choice over a request in Kokoro's voice).
    heard = [("얼마나 맞서?", -0.40), ("얼마 남았어?", -0.45)]
    assert choose(heard, lexicon, RescoreWeights()) == 1


def test_the_context_adds_the_household_names() -> None:
    lexicon = context_lexicon("Kitchen timer, shopping list. pasta, Seoul, chicken curry")
    assert {"pasta", "seoul", "curry"} <= lexicon.words
    assert ("chicken", "curry") in lexicon.pairs
    assert ("pasta", "seoul") not in lexicon.pairs  # separate names are not a phrase


def test_the_kitchen_lexicon_is_built_from_the_requests_hearth_serves() -> None:
    english = kitchen_lexicon("en")
    assert {"grams", "timer", "shopping", "celsius"} <= english.words
    assert kitchen_lexicon("ko").words
    assert not kitchen_lexicon("xx")  # a language without requests weighs nothing


# -- in the recognizer -----------------------------------------------------------------------------


class NBestDecoder:
    """A decoder that gives recorded n-best lists, and records how many hypotheses each call asked for."""

    def __init__(self, alternatives: tuple[tuple[str, float], ...]) -> None:
        self.alternatives = alternatives
        self.asked: list[int] = []

    def __call__(self, samples: np.ndarray, window_s: float, prompt: str, hypotheses: int = 1) -> Decode:
        self.asked.append(hypotheses)
        top = self.alternatives[0][0]
        return Decode(top, 0.01, self.alternatives[0][1], prompted=bool(prompt), alternatives=self.alternatives if hypotheses > 1 else ())


async def _final(recognizer: WhisperRecognizer, context: str) -> str:
    async def audio() -> AsyncIterator[AudioChunk]:
        noise = np.random.default_rng(3).normal(0.0, 0.01, RATE).astype(np.float32)
        for i in range(0, len(noise), 1600):
            yield AudioChunk(noise[i : i + 1600], RATE)
            await asyncio.sleep(0)

    finals = [t for t in [t async for t in recognizer.transcribe(audio(), context)] if t.is_final]
    return finals[-1].text


def _recognizer(decoder: NBestDecoder, hypotheses: int = 5) -> WhisperRecognizer:
    settings = WhisperSettings(model_dir=Path("unused"), partial_interval_s=60.0, lead_silence_s=0.0, hypotheses=hypotheses)
    return WhisperRecognizer(settings, decoder=decoder, lexicon=KITCHEN)


async def test_the_final_is_the_hypothesis_that_fits_the_kitchen() -> None:
    decoder = NBestDecoder(GRAMS)
    recognizer = _recognizer(decoder)
    assert await _final(recognizer, "Grams, cups.") == GRAMS[1][0]
    assert decoder.asked == [5]
    assert recognizer.last_final is not None and "kitchen's words chose" in recognizer.last_final.note


async def test_without_the_households_words_the_final_is_greedy() -> None:
    # No context is what the asr-bias ablation gives: no prompt, no beam, no choice.
    decoder = NBestDecoder(GRAMS)
    assert await _final(_recognizer(decoder), "") == GRAMS[0][0]
    assert decoder.asked == [1]
    decoder = NBestDecoder(GRAMS)
    assert await _final(_recognizer(decoder, hypotheses=1), "Grams.") == GRAMS[0][0]
    assert decoder.asked == [1]


async def test_an_alternative_that_fails_the_checks_is_never_chosen() -> None:
    looped = (("How many grands in two cups", -0.1), ("How many grams in two cups how many grams in two cups", -0.11))
    assert await _final(_recognizer(NBestDecoder(looped)), "Grams.") == looped[0][0]
