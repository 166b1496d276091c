"""Every arm of a bench scenario starts from the same household: the list, the notes and the recent
calls as the scenario found them, whatever the arm before it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.loop.household import HouseholdState
from tools.executor import ToolExecutor
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    lists = ListStore(tmp_path / "hearth.db")
    lists.open()
    yield lists
    lists.close()


async def test_an_arm_finds_the_list_as_the_scenario_began(store: ListStore) -> None:
    executor = ToolExecutor(ToolRegistry(list_tools(store)))
    executor.start()
    try:
        await executor.call("shopping_add", {"item": "eggs"})
        await executor.call("note_add", {"text": "the oven door sticks"})
        start = HouseholdState.take(store, executor)

        first = await executor.call("shopping_add", {"item": "milk"})
        assert first.ok and "already" not in first.to_model_text()
        await executor.call("shopping_complete", {"item": "eggs"})
        await executor.call("note_add", {"text": "buy a new kettle"})

        start.restore()
        assert [e.item for e in store.items()] == ["eggs"]
        assert [n.text for n in store.notes()] == ["the oven door sticks"]
        assert [name for name, _ in executor.recent] == ["shopping_add", "note_add"]
        second = await executor.call("shopping_add", {"item": "milk"})
        assert second.ok and second.to_model_text() == first.to_model_text()  # the same reply, not "already on the list"
        start.close()
    finally:
        await executor.close()
