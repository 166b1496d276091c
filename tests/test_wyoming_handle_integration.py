"""Home Assistant's ``handle`` through the real server into hearth's real assistant: talker, tools, stores."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.handle import Handled, HandledChunk

from agent.assistant import Assistant
from agent.text_turns import TextTurns
from audio.wav import WavFileSpeaker
from firmware_py.config import load_config
from firmware_py.home_tools import HomeTools
from firmware_py.wiring import build_turn_deps, close_turn_deps
from firmware_py.wyoming.offer import offer_from
from tests.wyoming_kit import client, read_until, serving

pytestmark = pytest.mark.integration


async def _ask(host: str, port: int, text: str) -> tuple[list[str], str]:
    """One transcript in, as Home Assistant sends it; the streamed chunks and the handled text."""
    async with client(host, port) as c:
        await c.write_event(Transcript(text=text, language="en").event())
        events = await read_until(c, "handled-stop", "not-handled")
    assert events[-1].type == "handled-stop", [(e.type, e.data) for e in events]
    chunks = [HandledChunk.from_event(e).text for e in events if HandledChunk.is_type(e.type)]
    (handled,) = [Handled.from_event(e).text or "" for e in events if Handled.is_type(e.type)]
    return chunks, handled


async def test_a_timer_set_and_the_list_read_over_wyoming_act_on_the_household(models_dir: Path, tmp_path: Path):
    config = load_config(None, {
        "models_dir": str(models_dir), "tools.data_dir": str(tmp_path / "data"), "language": "en",
    })
    speaker = WavFileSpeaker(config.audio.output_rate)
    deps = await build_turn_deps(config, speaker)
    assistant = Assistant(deps, config.history_turns)
    assert deps.tools is not None and isinstance(deps.tools.home, HomeTools)
    home = deps.tools.home
    try:
        await assistant.warm()
        offer = offer_from(answers=TextTurns(assistant), answer_languages=("en",), programs=("handle",))
        async with serving(offer) as (_server, host, port):
            chunks, handled = await _ask(host, port, "Set a timer for ten minutes.")
            assert [t.duration_s for t in home.timers.active()] == [600], handled
            assert "10 minute" in handled or "ten minute" in handled.lower(), handled
            assert handled == " ".join(chunks)

            home.lists.add("oat milk")
            chunks, handled = await _ask(host, port, "What's on my shopping list?")
            assert "oat milk" in handled.lower(), handled
            assert chunks and handled == " ".join(chunks)

            # A client gone before its answer: its turn ends, and the next request is answered.
            async with client(host, port) as c:
                await c.write_event(Transcript(text="How long is left on the timer?", language="en").event())
            chunks, handled = await _ask(host, port, "What's on my shopping list?")
            assert "oat milk" in handled.lower(), handled
        for _ in range(100):
            if assistant.current is None and not [t for t in asyncio.all_tasks() if t.get_name() == "turn"]:
                break
            await asyncio.sleep(0.05)
        assert assistant.current is None and not [t for t in asyncio.all_tasks() if t.get_name() == "turn"]

        entries = assistant.record.entries()
        users = [e.text for e in entries if e.role == "user"]
        # The request of the client that left is answered or cut short, depending on when the
        # server notices; either way its turn has ended, and it came before the next one.
        assert users in (
            ["Set a timer for ten minutes.", "What's on my shopping list?", "How long is left on the timer?", "What's on my shopping list?"],
            ["Set a timer for ten minutes.", "What's on my shopping list?", "What's on my shopping list?"],
        ), users
        ends = [e.status for e in entries if e.role == "turn"]
        assert len(ends) == len(users) and ends[-1] == "answered", ends
        tools = [(e.text, e.status, e.data.get("origin")) for e in entries if e.role == "tool" and e.status != "started"]
        assert ("timer_start", "ok", "user") in tools and ("shopping_list", "ok", "user") in tools, tools
        assert speaker.recording().samples.size == 0  # nothing was played in the kitchen
    finally:
        assistant.close()
        await close_turn_deps(deps)
