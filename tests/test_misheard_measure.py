"""Over noise a unit of an amount to buy is heard as another word (litres as "layers", kilos as
"killers"), and the thing swallows it: such an item is asked back, never added as heard."""

from __future__ import annotations

import pytest

from agent.deciding.arguments import content_in
from agent.deciding.extract import is_measure


@pytest.mark.parametrize(("said", "item", "quantity"), [
    ("Two layers of buttermilk for the weekend shop, please.", "layers of buttermilk", "2"),
    ("Put three killers of basmati down for the shop.", "killers of basmati", "3"),
    ("Add two leaders of orange juice.", "leaders of orange juice", "2"),
    ("Add four points of cream to my list.", "points of cream", "4"),
])
def test_a_counted_item_that_begins_with_a_misheard_unit_is_asked_back(said: str, item: str, quantity: str) -> None:
    assert not content_in("shopping_add", {"item": item, "quantity": quantity}, said)


@pytest.mark.parametrize(("said", "item", "quantity"), [
    ("Add two sticks of butter to the list.", "sticks of butter", "2"),
    ("Add three cloves of garlic.", "cloves of garlic", "3"),
    ("We need two pints of cream for the trifle.", "pints of cream", "2"),
    ("Add two loaves of bread.", "loaves of bread", "2"),
])
def test_a_count_of_a_real_measure_is_added(said: str, item: str, quantity: str) -> None:
    assert content_in("shopping_add", {"item": item, "quantity": quantity}, said)


@pytest.mark.parametrize(("said", "item", "quantity"), [
    ("Add cream of tartar to the list.", "cream of tartar", None),
    ("Add two bottles of cream of mushroom soup.", "cream of mushroom soup", "2 bottle"),
    ("Put a bag of ice on the list.", "bag of ice", None),
])
def test_a_thing_whose_name_holds_of_is_added(said: str, item: str, quantity: str | None) -> None:
    # Only a count with no unit before "<word> of" is doubted: a name like "cream of tartar" is not.
    args = {"item": item} if quantity is None else {"item": item, "quantity": quantity}
    assert content_in("shopping_add", args, said)


@pytest.mark.parametrize("word", ["bottles", "boxes", "litres", "kg", "sticks", "halves", "cloves", "pints", "loaves"])
def test_measures_in_the_plural_are_measures(word: str) -> None:
    assert is_measure(word)


@pytest.mark.parametrize("word", ["layers", "killers", "leaders", "points"])
def test_misheard_units_are_no_measures(word: str) -> None:
    assert not is_measure(word)
