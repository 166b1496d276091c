"""Each bench scenario is a cooking session of its own: the timers an earlier one left are ended
before it, the household's list and notes are kept."""

from __future__ import annotations

from pathlib import Path

from firmware_py.config import parse_config
from firmware_py.home_tools import open_home_tools


async def test_ending_the_timers_leaves_the_list_and_the_notes(tmp_path: Path) -> None:
    home = await open_home_tools(parse_config({"tools": {"data_dir": str(tmp_path)}}))
    try:
        home.timers.start(600, "rice")
        home.timers.start(2700, "lasagna")
        home.timers.start(90)
        home.timers.pause("rice")
        home.lists.add("eggs", "6")
        home.lists.add_note("the oven runs hot")
        assert home.end_timers() == 3
        assert home.timers.active() == []
        assert home.end_timers() == 0  # none left: nothing to cancel, and no error
        assert [entry.item for entry in home.lists.items()] == ["eggs"]
        assert [note.text for note in home.lists.notes()] == ["the oven runs hot"]
    finally:
        await home.close()
