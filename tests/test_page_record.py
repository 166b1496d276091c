"""What the record keeps of changes made on the page: the changes made or tried, each saying why it failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.test_web_page import Rig, open_rig


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    made, _app = await open_rig(tmp_path)
    try:
        yield made
    finally:
        await made.close()


@pytest.mark.parametrize(("path", "body", "says"), [
    ("/api/list/add", {"item": "eggs", "quantity": {"dozen": 1}}, "quantity"),
    ("/api/list/add", {"item": ""}, "item"),
    ("/api/list/add", {"item": ["eggs"]}, "item"),
    ("/api/list/complete", {}, "item"),
])
async def test_a_refused_change_is_answered_422_and_is_no_turn_in_the_record(rig: Rig, path: str, body: object, says: str) -> None:
    answer = await rig.post(path, body)
    assert answer.status_code == 422 and says in answer.json()["text"]
    assert rig.record.entries() == []
    assert (await rig.client.get("/api/state")).json()["kept"]["record"] == []
    # A valid change after it is the record's first turn.
    assert (await rig.post("/api/list/add", {"item": "eggs"})).status_code == 200
    assert {e.turn for e in rig.record.entries()} == {1}


async def test_a_change_that_was_tried_and_failed_is_kept_with_its_reason(rig: Rig) -> None:
    answer = await rig.post("/api/list/complete", {"item": "bread"})
    assert answer.status_code == 409
    (turn,) = (await rig.client.get("/api/state")).json()["kept"]["record"]
    (tool,) = [e for e in turn["entries"] if e["role"] == "tool" and e["status"] != "started"]
    assert tool["status"] == "error" and tool["origin"] == "page"
    assert tool["why"] == answer.json()["text"] and "bread" in tool["why"]
