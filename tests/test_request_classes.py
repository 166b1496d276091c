"""The word rules read classes of requests, never one sentence: each class is shown by varied
sentences of its own (kitchen speech written for these tests), in English and Korean where the
class has both, with sentences just outside it that it must leave alone."""

from __future__ import annotations

import pytest

from agent.deciding import intents, routing
from agent.deciding.arguments import repair_arguments
from agent.deciding.extract_lookup import place
from agent.deciding.intents import asks_for_idea, asks_to_know, cued_tools, is_follow_up
from agent.deciding.lexicon import LANGUAGES
from agent.deciding.routing import knows_how


def language_of(text: str) -> str:
    return "ko" if any("가" <= c <= "힣" for c in text) else "en"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_rule_is_made_from_its_lexicon(language):
    # Each rule names its classes by name: one the lexicon lacks fails here, not in a turn.
    assert intents._rules(language) and routing._rules(language)
    assert intents.cues(language)["timer_start"] and "shopping_add" in intents.command_cues(language)


# ---- which model answers: the classes of know-how questions ---------------------------------------


@pytest.mark.parametrize("text", [
    # A hedge before the question changes nothing it asks.
    "Roughly how long does a soft-boiled egg take?",
    "Approximately how many eggs go into a sponge cake?",
    "Out of curiosity, how hot does a pizza stone get?",
    "About how often should I feed a sourdough starter?",
    # A sign of readiness or freshness.
    "How can you tell if an avocado is ripe?",
    "How will I know the jam has set?",
    "How do we tell when the frying oil is hot enough?",
    "How can I check that the chicken is cooked through?",
    # The way or the means of doing something.
    "What's the easiest way to peel garlic?",
    "What is the proper way to season a wok?",
    "What's the quickest way to soften butter?",
    # When to do something.
    "When should the basil go into the sauce?",
    "When's the best time to salt a steak?",
    "When is it safe to put warm soup in the fridge?",
])
def test_questions_of_the_know_how_classes_go_to_the_reasoner(text):
    assert knows_how(text, "en")


@pytest.mark.parametrize("text", [
    "Roughly how long has the pie timer got?",          # the household's timer
    "About how many grams in a cup of rice?",           # the converter
    "When should the timer go off?",
    "How do you make a Spanish omelette?",              # the recipe tools
    "When is the bin collection?",                      # no know-how opening
])
def test_questions_the_tools_answer_stay_with_the_talker(text):
    assert not knows_how(text, "en")


@pytest.mark.parametrize(("text", "knowing"), [
    # Which thing suits best: a question for knowledge.
    ("Which knife works best for slicing tomatoes?", True),
    ("What goes well with roast pork?", True),
    ("Which pan is better for pancakes, cast iron or nonstick?", True),
    ("What oil pairs nicely with a bitter salad?", True),
    ("프라이팬은 어떤 게 제일 좋아?", True),
    ("고기 구울 땐 어느 게 더 나아?", True),
    ("김치찌개에는 뭐가 잘 어울려?", True),
    ("커피 머신 하나 추천해 줄래?", True),
    # Words of the class in a request or a household question: not one.
    ("Which timer is running?", False),
    ("Add the best butter to the list.", False),
    ("오늘 미세먼지 괜찮아?", False),
    ("우유 대신 두유 넣어 줘", False),
])
def test_a_question_asking_which_thing_is_best_asks_to_know(text, knowing):
    assert asks_to_know(text, language_of(text)) is knowing


# ---- what kind of request it is ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "follow"), [
    # A noun with 도 ("also") before an act: the act of the turn before, done again.
    ("버터도 넣어 줘", True),
    ("두부도 목록에 추가해 줘", True),
    ("키친타월도 사야 돼", True),
    ("양파도추가해줘", True),
    # A word that ends in 도 is no particle: a temperature, a degree, a fruit.
    ("오븐 온도 맞춰 줘", False),
    ("팔십도로 맞춰 줘", False),
    ("포도 사야 돼", False),
    ("오늘 날씨 어때?", False),
    # The same act again, in English.
    ("Same again for the rice.", True),
    ("Do the same thing for the carrots.", True),
    ("One more for the potatoes.", True),
])
def test_a_request_that_asks_for_the_act_before_again_is_a_follow_up(text, follow):
    assert is_follow_up(text, language_of(text)) is follow


@pytest.mark.parametrize(("text", "tools"), [
    # A word naming the day asks for the weather or the air of that day, not the date.
    ("What's the weather on Friday?", {"weather"}),
    ("Will it rain this Saturday?", {"weather"}),
    ("How's the air on Sunday?", {"air_quality"}),
    ("금요일에 비 와?", {"weather"}),
    ("토요일 미세먼지 어때?", {"air_quality"}),
    ("일요일 날씨 좀 알려 줘", {"weather"}),
    # Alone, or with a date word of its own, it asks the date.
    ("Is today Thursday?", {"date_today"}),
    ("Could you tell me the date today?", {"date_today"}),
    ("오늘이 무슨 요일인지 알려 줘", {"date_today"}),
])
def test_a_day_named_asks_for_the_date_only_when_nothing_else_is_asked(text, tools):
    assert cued_tools(text, language_of(text)) == tools


@pytest.mark.parametrize(("text", "idea"), [
    # "What should I cook", with when, how, or what from.
    ("What should we make for supper tonight?", True),
    ("What can I cook with some leftover chicken?", True),
    ("What could we eat this evening?", True),
    ("What shall I make using the last of the courgettes?", True),
    ("What should I fix for lunch?", True),
    # Know-how that only looks like it.
    ("What could I use instead of cream?", False),
    ("What should I cook the rice in?", False),
])
def test_what_to_cook_with_its_when_and_what_from_asks_for_an_idea(text, idea):
    assert asks_for_idea(text, "en") is idea


# ---- the forecast's own places ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "known", "found"), [
    # A place the forecast covers is a place, "the" or not.
    ("What's the forecast for the Hague tomorrow?", ["The Hague", "Leiden"], "the Hague"),
    ("Is it snowing in the Bronx?", ["the Bronx"], "the Bronx"),
    ("How windy is it in the Lake District today?", ["The Lake District"], "the Lake District"),
    # Words after "the" that the forecast does not cover are no place.
    ("Is it cold in the garden?", ["The Hague"], None),
    ("How's the weather in the Hague?", [], None),
    ("How hot is it in the oven?", ["The Hague"], None),
])
def test_a_place_beginning_with_the_is_one_when_the_forecast_covers_it(text, known, found):
    assert place(text, known) == found


def test_the_repair_reads_the_places_of_the_forecast():
    places = lambda: ["The Bronx", "Seoul"]  # noqa: E731
    assert repair_arguments("weather", {}, "Is it raining in the Bronx?", places=places) == {"location": "the Bronx"}
    assert repair_arguments("weather", {}, "Is it raining in the Bronx?") == {}  # no forecast covers it
    assert "location" not in repair_arguments("weather", {}, "Is it raining in the garden?", places=places)
    assert repair_arguments("air_quality", {}, "How's the air in the Bronx?", places=places)["location"] == "the Bronx"


@pytest.mark.parametrize(("text", "left"), [
    # How much is left of what is cooking: the running timer answers.
    ("When will the potatoes be ready?", True),
    ("Is the lasagne finished yet?", True),
    ("Hmm, how much more time for the stew?", True),
    ("국 언제 다 돼?", True),
    ("고기 다 익었어?", True),
    ("밥 얼마나 남았어?", True),
    # How long a thing takes in general: know-how.
    ("How long should I roast a chicken?", False),
    ("How long does it take to steam broccoli?", False),
    ("How long to simmer a bolognese?", False),
])
def test_how_much_is_left_of_what_is_cooking_is_told_from_how_long_things_take(text, left):
    assert intents.asks_time_left(text, language_of(text)) is left


@pytest.mark.parametrize("text", [
    "Turn the pasta timer off.",
    "Could you switch that egg timer off?",
    "Shut the big rice timer off, please.",
])
def test_a_phrasal_verb_cues_its_tool_with_the_thing_between(text):
    assert "timer_cancel" in cued_tools(text, "en")


def test_a_particle_far_from_its_verb_cues_nothing():
    assert "timer_cancel" not in cued_tools("Turn to page five of the recipe and then set a timer, it goes off at noon", "en", ["timer_cancel"])
