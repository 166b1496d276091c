"""Over noise the verb "add" is heard as another word (egg, and, head) and the item swallows it, or
the item swallows where it goes: such an item is asked back, never added as heard."""

from __future__ import annotations

import pytest

from agent.deciding.arguments import asked_back, content_in


@pytest.mark.parametrize(("said", "item", "asked"), [
    ("Egg walnuts and raisins to my shopping list.", "Egg walnuts", "walnuts"),
    ("Head three tins of tomatoes to the list.", "Head three tins of tomatoes", "three tins of tomatoes"),
    ("Egg rice too.", "eggs", None),
    ("And oat milk to the shopping list.", "and oat milk", "oat milk"),
])
def test_an_item_that_begins_with_the_misheard_verb_is_asked_back_without_it(said: str, item: str, asked: str | None) -> None:
    assert not content_in("shopping_add", {"item": item}, said)
    args = asked_back("shopping_add", {"item": item}, said)
    assert args.get("item") == asked


@pytest.mark.parametrize("said", ["Eggs on the list.", "Eggs to the shopping list, please.", "Eggs, on my list."])
def test_eggs_said_as_the_thing_and_nothing_else_are_added(said: str) -> None:
    assert content_in("shopping_add", {"item": "eggs"}, said)


def test_a_thing_that_begins_with_egg_said_first_costs_a_question() -> None:
    # The price of the guard: "Egg noodles…" first in the request is asked back, never added wrong.
    assert not content_in("shopping_add", {"item": "egg noodles"}, "Egg noodles, we're out of egg noodles.")


@pytest.mark.parametrize(("said", "item", "asked"), [
    ("And coriander to the shopping list.", "coriander to the shopping list", "coriander"),
    ("Put the parmesan on my list.", "parmesan on my list", "parmesan"),
    ("We need a shopping list.", "shopping list", None),
])
def test_an_item_that_holds_where_it_goes_is_asked_back_as_the_thing(said: str, item: str, asked: str | None) -> None:
    assert not content_in("shopping_add", {"item": item}, said)
    assert asked_back("shopping_add", {"item": item}, said).get("item") == asked


@pytest.mark.parametrize(("said", "item"), [
    ("Add walnuts to my shopping list.", "walnuts"),
    ("Put two tins of tomatoes on the list.", "two tins of tomatoes"),
    ("Add egg noodles to the list.", "egg noodles"),
])
def test_an_item_heard_whole_is_still_added(said: str, item: str) -> None:
    assert content_in("shopping_add", {"item": item}, said)


@pytest.mark.parametrize("said", [
    "And another one of the broccoli, eight minutes.",
    "One more timer, five minutes, for the eggs.",
    "Could I get a second timer going, ten minutes?",
])
def test_words_that_ask_for_a_timer_more_never_add_time_to_a_running_one(said: str) -> None:
    for delta in (300, 480, 600):
        assert not content_in("timer_adjust", {"delta_s": delta}, said)


@pytest.mark.parametrize(("said", "delta"), [
    ("Add another five minutes to the pasta.", 300), ("Give it eight more minutes.", 480), ("Another ten minutes on the rice, please.", 600),
])
def test_more_time_is_still_more_time(said: str, delta: int) -> None:
    assert content_in("timer_adjust", {"delta_s": delta}, said)


@pytest.mark.parametrize("said", [
    "Eggs, we need a dozen, stick them on the list would you?", "Eggs. Six of them, on the list.", "Eggs; we're nearly out.",
])
def test_a_thing_named_and_then_a_pause_is_the_thing(said: str) -> None:
    assert content_in("shopping_add", {"item": "eggs"}, said)


@pytest.mark.parametrize(("said", "thing"), [
    ("And milk to the shopping list.", "milk"), ("And the parmesan on my list.", "parmesan"), ("Also two lemons onto the list.", "lemons"),
])
def test_a_thing_joined_on_after_an_add_leaves_where_it_goes_out(said: str, thing: str) -> None:
    from agent.deciding.several import continued
    from agent.deciding.undo import Act

    plan = continued(Act("shopping_add", {"item": "pasta"}, {}), said, "en")
    assert plan is not None and plan.tool == "shopping_add"
    assert plan.args["item"] == thing


@pytest.mark.parametrize(("said", "label"), [
    ("You started pasta timer for 11 minutes.", "started pasta"),
    ("Starting bread timer, forty minutes.", "starting bread"),
    ("I set rice timer for ten minutes.", "set rice"),
])
def test_a_timer_name_that_begins_with_the_request_is_asked_back(said: str, label: str) -> None:
    from agent.deciding.spoken_numbers import durations

    length = int(durations(said)[0].value)
    assert not content_in("timer_start", {"duration_s": length, "label": label}, said)
    assert content_in("timer_start", {"duration_s": length, "label": label.split()[1]}, said)
