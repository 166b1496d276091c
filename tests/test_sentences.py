"""Cutting a streamed reply into spoken units."""

from __future__ import annotations

import pytest

from agent.sentences import SentenceSplitter


def split_streamed(text: str, step: int, **kw) -> list[str]:
    splitter = SentenceSplitter(**kw)
    units: list[str] = []
    for i in range(0, len(text), step):
        units += splitter.feed(text[i : i + step])
    return units + splitter.flush()


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_units_concatenate_back_to_the_reply_however_it_is_streamed(step):
    text = "Boil it for 6.5 minutes. Then cool it, e.g. in ice water! Done? Yes.\nEnjoy it"
    units = split_streamed(text, step, first_unit_comma_chars=None)
    assert "".join(units) == text
    assert [u.strip() for u in units] == [
        "Boil it for 6.5 minutes.",
        "Then cool it, e.g. in ice water!",
        "Done?",
        "Yes.",
        "Enjoy it",
    ]


def test_first_unit_ends_at_a_comma_once_long_enough_but_later_units_do_not():
    text = "The most obvious choice is butter, but you can use oil, or even ghee, if you like. Then bake it, slowly."
    units = split_streamed(text, 3)
    assert units[0] == "The most obvious choice is butter, "
    assert units[1] == "but you can use oil, or even ghee, if you like. "
    assert units[2] == "Then bake it, slowly."


def test_thousands_separator_is_not_a_comma_boundary():
    units = split_streamed("There are about 1,000,000 grains of rice in a bag of that size. Wow.", 2)
    assert units[0] == "There are about 1,000,000 grains of rice in a bag of that size. "


def test_korean_sentences_split_at_their_stops():
    units = split_streamed("지금은 오후 3시예요. 타이머를 맞출까요? 네!", 2, first_unit_comma_chars=None)
    assert [u.strip() for u in units] == ["지금은 오후 3시예요.", "타이머를 맞출까요?", "네!"]


def test_a_very_long_sentence_is_cut_at_its_last_comma():
    text = ("word " * 20).strip() + ", " + ("more " * 20).strip() + ", tail without end"
    units = SentenceSplitter(max_chars=120, first_unit_comma_chars=None).feed(text)
    assert units and units[0].endswith(", ") and len(units[0]) <= 120
