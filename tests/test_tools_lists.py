"""Shopping list and notes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tools.lists import ListStore, list_tools
from tools.timers import TimerStore


@pytest.fixture
def store(tmp_path: Path):
    s = ListStore(tmp_path / "hearth.db")
    s.open()
    yield s
    s.close()


@pytest.fixture
def tools(store: ListStore):
    return {t.name: t for t in list_tools(store)}


async def call(tools, name: str, **kwargs):
    spec = tools[name]
    return await spec.run(spec.args.model_validate(kwargs))


def test_tool_names(tools) -> None:
    assert set(tools) == {"shopping_add", "shopping_complete", "shopping_list", "note_add"}
    assert tools["shopping_list"].side_effects == "read"
    assert set(tools["shopping_add"].schema()["properties"]) == {"item", "quantity"}
    with pytest.raises(ValidationError):
        tools["shopping_add"].args.model_validate({"item": "milk", "count": 2})
    with pytest.raises(ValidationError):
        tools["shopping_list"].args.model_validate({"x": 1})


async def test_empty_list(tools) -> None:
    out = await call(tools, "shopping_list")
    assert out.text == "The shopping list is empty."
    assert out.data == {"items": []}


async def test_add_and_read(tools) -> None:
    out = await call(tools, "shopping_add", item="milk", quantity="2 litres")
    assert out.text == "Added 2 litres milk to the shopping list."
    await call(tools, "shopping_add", item="eggs")
    out = await call(tools, "shopping_list")
    assert out.text == "2 items on the list: 2 litres milk and eggs."
    assert out.data["items"] == [{"item": "milk", "quantity": "2 litres"}, {"item": "eggs", "quantity": None}]


async def test_add_again_updates_quantity(tools, store: ListStore) -> None:
    await call(tools, "shopping_add", item="Oat  Milk", quantity="1")
    out = await call(tools, "shopping_add", item=" oat milk ", quantity="3")
    assert out.data["added"] is False and out.data["quantity"] == "3"
    out = await call(tools, "shopping_add", item="OAT MILK")
    assert out.data["quantity"] == "3"  # no amount said: keep the one said before
    assert len(store.items()) == 1


async def test_complete(tools, store: ListStore) -> None:
    await call(tools, "shopping_add", item="milk")
    await call(tools, "shopping_add", item="eggs")
    out = await call(tools, "shopping_complete", item="MILK")
    assert out.text == "Ticked milk off the list."
    assert [e.item for e in store.items()] == ["eggs"]
    # Ticked off, it can be added again as a fresh entry.
    out = await call(tools, "shopping_add", item="milk")
    assert out.data["added"] is True


async def test_complete_unknown_names_nearest(tools) -> None:
    await call(tools, "shopping_add", item="oat milk")
    await call(tools, "shopping_add", item="tomatoes")
    out = await call(tools, "shopping_complete", item="tomato")
    assert out.data["error"] == "not_found"
    assert out.data["nearest"][0] == "tomatoes"
    assert "Did you mean" in out.text
    out = await call(tools, "shopping_complete", item="milk")
    assert "oat milk" in out.data["nearest"]


async def test_complete_on_empty_list(tools) -> None:
    out = await call(tools, "shopping_complete", item="milk")
    assert out.data["error"] == "not_found"
    assert "empty" in out.text


async def test_note_add(tools, store: ListStore) -> None:
    out = await call(tools, "note_add", text="Call the plumber on Tuesday")
    assert out.text == "Noted."
    assert [n.text for n in store.notes()] == ["Call the plumber on Tuesday"]


def test_persists_and_shares_file_with_timers(tmp_path: Path) -> None:
    path = tmp_path / "hearth.db"
    timers = TimerStore(path)
    timers.open()
    timers.start(60, "tea")
    first = ListStore(path)
    first.open()
    first.add("bread")
    first.close()
    second = ListStore(path)
    second.open()
    assert [e.item for e in second.items()] == ["bread"]
    assert [t.label for t in timers.active()] == ["tea"]
    second.close()
    timers.close()
