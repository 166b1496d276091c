"""A recipe asked for by what is at hand: the dish or the ingredients are the search, not the sentence."""

from __future__ import annotations

import pytest

from agent.deciding.extract_lookup import recipe_query
from agent.deciding.intents import asks_for_idea


@pytest.mark.parametrize(("text", "query"), [
    ("What could I bake with ripe bananas?", "ripe bananas"),
    ("Lunch ideas using some cold chicken?", "cold chicken"),
    ("We have mushrooms and spinach, any thoughts?", "mushrooms and spinach"),
    ("Look up a quick lentil soup.", "quick lentil soup"),
    ("Search for a fish pie.", "fish pie"),
    ("두부랑 김치로 뭐 해 먹지?", "두부 김치"),
    ("계란으로 만들 수 있는 요리 찾아 줘", "계란 요리"),
    ("집에 감자랑 양파 남았는데 뭐 만들까?", "감자 양파"),
])
def test_what_is_at_hand_is_the_search(text: str, query: str) -> None:
    assert recipe_query(text) == query


@pytest.mark.parametrize("text", ["냉장고에 호박이랑 계란 있는데 뭐 해 먹을 수 있어?", "뭐 만들어 먹을 수 있을까?", "오늘 뭐 해 먹지?"])
def test_asking_what_one_could_make_is_asking_for_an_idea(text: str) -> None:
    assert asks_for_idea(text, "ko")
