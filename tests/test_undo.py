"""The opposite of each act, worked out from what the tool reported."""

from __future__ import annotations

import pytest

from agent.deciding.undo import Act, asks_to_undo, opposite


@pytest.mark.parametrize("text", ["Undo that.", "No, put it back.", "Take that back", "undo", "아니 취소", "방금 거 취소해 줘", "되돌려 줘",
                                  # regret said first asks for nothing else
                                  "Sorry, my bad, take that back.", "Whoops, undo it please.", "앗 실수, 되돌려 줘",
                                  "어 잘못 말했어, 방금 거 취소해.",
                                  # a reason said after asks for nothing else
                                  "Hang on, no, undo that, there's a jar in the cupboard.", "Take that back, I changed my mind.",
                                  "Undo that, we've got loads.", "방금 거 취소해, 아직 많이 있더라."])
def test_asking_to_undo(text: str) -> None:
    assert asks_to_undo(text, "en")


@pytest.mark.parametrize("text", ["Cancel the pasta timer.", "Put it on the list.", "타이머 취소해 줘", "Undo the pasta timer and start a new one",
                                  "Oops, I dropped the spoon.", "아이고, 타이머 취소해 줘",
                                  # something more asked after the undo is its own request
                                  "Undo that, and add oat milk.", "Undo that, what time is it?", "Take that back, can you add pears?"])
def test_other_requests_are_not_undo(text: str) -> None:
    assert not asks_to_undo(text, "en")


def test_opposites() -> None:
    assert opposite(Act("timer_start", {"duration_s": 300}, {"label": None})) == ("timer_cancel", {"label": "last"})
    assert opposite(Act("timer_start", {"duration_s": 300, "label": "rice"}, {"label": "rice"})) == ("timer_cancel", {"label": "rice"})
    cancelled = {"cancelled": [{"label": "pasta", "remaining_s": 420, "duration_s": 600}]}
    assert opposite(Act("timer_cancel", {"label": "pasta"}, cancelled)) == ("timer_start", {"duration_s": 420, "label": "pasta"})
    assert opposite(Act("timer_adjust", {"delta_s": 120}, {"label": "stew"})) == ("timer_adjust", {"delta_s": -120, "label": "stew"})
    assert opposite(Act("timer_pause", {}, {"label": None})) == ("timer_resume", {})
    assert opposite(Act("shopping_add", {"item": "milk"}, {})) == ("shopping_complete", {"item": "milk"})
    assert opposite(Act("note_add", {"text": "x"}, {})) is None
    # Several timers cancelled at once cannot be put back one by one from one "undo".
    assert opposite(Act("timer_cancel", {"all": True}, {"cancelled": [{"remaining_s": 1}, {"remaining_s": 2}]})) is None


def test_a_note_is_taken_back_by_its_number_and_a_removal_writes_it_again() -> None:
    assert opposite(Act("note_add", {"text": "buy basil"}, {"id": 4, "text": "buy basil"})) == ("note_remove", {"id": 4})
    assert opposite(Act("note_remove", {"id": 4}, {"id": 4, "text": "buy basil"})) == ("note_add", {"text": "buy basil"})


async def test_removing_a_note(tmp_path) -> None:
    from tools.lists import ListStore, list_tools

    store = ListStore(tmp_path / "hearth.db")
    store.open()
    tools = {spec.name: spec for spec in list_tools(store)}
    added = await tools["note_add"].run(tools["note_add"].args(text="the oven runs hot"))
    removed = await tools["note_remove"].run(tools["note_remove"].args(id=added.data["id"]))
    assert removed.text == "Note removed." and store.notes() == []
    again = await tools["note_remove"].run(tools["note_remove"].args(id=added.data["id"]))
    assert again.data["error"] == "not_found"
    assert not tools["note_remove"].model_calls
    store.close()
