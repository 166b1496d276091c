"""What the documentation states about the program matches the program."""

from __future__ import annotations

import re
from pathlib import Path

from firmware_py.wyoming import WyomingLimits
from firmware_py.wyoming.wire import MAX_DEPTH, PIECE_BYTES

ROOT = Path(__file__).resolve().parent.parent


def _doc(name: str) -> str:
    # One line per paragraph, so a sentence split over lines is matched whole.
    return re.sub(r"\s*\n\s*", " ", (ROOT / "docs" / name).read_text(encoding="utf-8"))


def test_home_md_states_the_wyoming_size_limits_the_server_applies():
    home, limits = _doc("home.md"), WyomingLimits()
    data = re.search(r"JSON data is over (\d+) KiB", home)
    payload = re.search(r"binary payload \(the audio\) is over (\d+) MiB", home)
    assert data and payload, "home.md no longer says how large an event may be"
    assert int(data.group(1)) * 1024 == limits.max_data_bytes
    assert int(payload.group(1)) * 1024 * 1024 == limits.max_payload_bytes
    assert f"nested more than {MAX_DEPTH} deep" in home
    assert f"nor {PIECE_BYTES // 1024} KiB of a larger one" in home
    assert "larger than 4 MiB" not in home  # the old claim, which the data part never met


def _history_example() -> list[str]:
    """The lines of docs/using.md's ``hearth history`` example, each turn's header without its
    number and time."""
    text = (ROOT / "docs" / "using.md").read_text(encoding="utf-8")
    block = re.search(r"```\n\$ hearth history --last 3\n(.*?)```", text, re.S)
    assert block, "docs/using.md no longer shows `hearth history --last 3`"
    return _anonymous(block.group(1))


def _anonymous(output: str) -> list[str]:
    return [re.sub(r"^#\d+  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ", "#N  WHEN  ", line) for line in output.strip().splitlines()]


async def test_the_history_example_in_using_md_is_what_hearth_history_prints(tmp_path: Path) -> None:
    from agent.deciding.tool_calls import ToolPlan
    from agent.text_turns import TextTurns
    from firmware_py.config import HearthConfig, ToolsConfig
    from firmware_py.history_cli import format_turns
    from firmware_py.home_tools import open_home_tools
    from firmware_py.web.writes import call_from_page
    from tests.fakes import say
    from tests.test_text_turns import _tool_assistant

    home = await open_home_tools(HearthConfig(tools=ToolsConfig(data_dir=tmp_path)))
    try:
        rules = [("add milk", ToolPlan("", "shopping_add", {"item": "milk"})),
                 ("on my shopping list", ToolPlan("", "shopping_list", {}))]
        assistant = _tool_assistant(home, rules, [])
        await say(assistant, "add milk to the shopping list")  # spoken, in the kitchen
        await call_from_page(home.executor, assistant.record, "shopping_add", {"item": "eggs", "quantity": "6"})
        async for _ in TextTurns(assistant).answer_text("what's on my shopping list"):  # from Home Assistant
            pass
        printed = format_turns(assistant.record.entries(), 3)
    finally:
        await home.close()
    assert _history_example() == _anonymous(printed), printed
