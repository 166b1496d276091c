"""The household's one shopping list in Home Assistant's to-do entity: shared between speakers,
kept while Home Assistant is down, caught up in order when it is back (against a fake; the real
core is in tests/test_home_assistant_core.py)."""

from __future__ import annotations

from pathlib import Path

from fakes import FakeHomeAssistant
from tools.home_assistant.todo import SharedShoppingList
from tools.lists import ListStore, list_tools

ENTITY = "todo.shopping_list"


def speaker(fake: FakeHomeAssistant, folder: Path):
    """One hearth's list tools over its own store, sharing ``fake``'s list."""
    folder.mkdir(parents=True, exist_ok=True)
    store = ListStore(folder / "hearth.db")
    store.open()
    shared = SharedShoppingList(fake, ENTITY, store, folder / "hearth.db")
    shared.open()
    return {spec.name: spec for spec in list_tools(store, "en", shared)}, store, shared


async def say(tools, name: str, **args):
    spec = tools[name]
    return await spec.run(spec.args(**args))


def remote(fake: FakeHomeAssistant) -> list[str]:
    return [i["summary"] for i in fake.todo[ENTITY] if i["status"] == "needs_action"]


async def test_an_item_added_on_one_speaker_is_read_back_on_the_other(tmp_path: Path):
    fake = FakeHomeAssistant([])
    kitchen, _, k_shared = speaker(fake, tmp_path / "kitchen")
    living, _, l_shared = speaker(fake, tmp_path / "living")
    await say(kitchen, "shopping_add", item="oat milk")
    await k_shared.sync()
    assert remote(fake) == ["oat milk"]
    out = await say(living, "shopping_list")
    assert out.text == "1 item on the list: oat milk."
    out = await say(living, "shopping_complete", item="oat milk")
    assert out.text == "Ticked oat milk off the list."
    await l_shared.sync()
    assert remote(fake) == []
    assert (await say(kitchen, "shopping_list")).text == "The shopping list is empty."
    for shared in (k_shared, l_shared):
        await shared.aclose()


async def test_changes_made_while_home_assistant_is_down_are_kept_and_sent_in_order(tmp_path: Path):
    fake = FakeHomeAssistant([])
    tools, store, shared = speaker(fake, tmp_path / "kitchen")
    fake.down = True
    assert (await say(tools, "shopping_add", item="eggs")).text == "Added eggs to the shopping list."
    await say(tools, "shopping_add", item="flour")
    await say(tools, "shopping_complete", item="eggs")
    assert (await say(tools, "shopping_list")).text == "1 item on the list: flour."  # hearth's own copy
    await shared.sync()
    assert [c for _, c, *_ in shared.pending()] == ["add", "add", "complete"]
    # The same outbox survives a restart of hearth.
    shared.close()
    shared.open()
    fake.down = False
    assert await shared.sync()
    assert shared.pending() == [] and remote(fake) == ["flour"]
    assert [i["summary"] for i in fake.todo[ENTITY] if i["status"] == "completed"] == ["eggs"]
    await shared.aclose()


async def test_sending_again_adds_nothing_twice(tmp_path: Path):
    fake = FakeHomeAssistant([])
    fake.todo[ENTITY].append({"summary": "Butter", "status": "needs_action", "description": None})
    tools, store, shared = speaker(fake, tmp_path / "kitchen")
    await say(tools, "shopping_add", item="butter", quantity="2 blocks")
    await shared.sync()
    assert remote(fake) == ["Butter"] and fake.todo[ENTITY][0]["description"] == "2 blocks"
    await shared.aclose()
