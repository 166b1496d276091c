"""Two requests in one breath, one of them for the home: each part read as a request of its own,
"the kitchen one" as the other part's kind; words that join things under one verb stay one request."""

from __future__ import annotations

import pytest

from agent.deciding.home_and_more import home_and_more
from test_home_assistant_tools import household
from tools.home_assistant.names import names_something


def refers(words: str, temperature: bool = False) -> bool:
    return names_something(words, household(), temperature)


@pytest.mark.parametrize("text, language, first, second", [
    ("Lounge light off and put the kitchen one on.", "en", ("off", "lounge light"), ("on", "the kitchen light")),
    ("Switch the hood fan off and the kitchen one on.", "en", ("off", "the hood fan"), ("on", "the kitchen fan")),
    ("거실 불은 끄고 주방 불 켜 줘.", "ko", ("off", "거실 불은"), ("on", "주방 불")),
    ("후드 끄고 거실 불 켜 줘", "ko", ("off", "후드"), ("on", "거실 불")),
])
def test_two_home_acts_are_each_made(text, language, first, second):
    parts = home_and_more(text, language, refers)
    assert parts is not None
    assert [(plan.args["action"], plan.args["target"]) for _, plan in parts] == [first, second]


@pytest.mark.parametrize("text, language, other", [
    ("Hood fan on, and give me a ten minute timer for the stir-fry.", "en", "give me a ten minute timer for the stir-fry."),
    ("Turn on the oven and set a timer for twenty minutes.", "en", "set a timer for twenty minutes."),
    ("환풍기 켜고 삼 분 타이머도 맞춰 줘.", "ko", "삼 분 타이머도 맞춰 줘."),
    ("오븐 켜고 우유 목록에 넣어 줘", "ko", "우유 목록에 넣어 줘"),
])
def test_a_home_act_and_another_request_are_each_asked(text, language, other):
    parts = home_and_more(text, language, refers)
    assert parts is not None and parts[0][1] is not None and parts[0][1].tool == "home_control"
    assert parts[1] == (other, None)


@pytest.mark.parametrize("text, language", [
    ("Turn off the lights and the fan.", "en"),  # one verb, two things
    ("The oven is hot and the fan is loud.", "en"),  # told, not asked
    ("Salt and pepper.", "en"),
    ("Set a timer for ten minutes and add milk to the list.", "en"),  # nothing for the home
    ("불 켜고 나서 생각해 볼게", "ko"),
])
def test_one_request_or_none_for_the_home_stays_as_it_is(text, language):
    assert home_and_more(text, language, refers) is None
