"""Home Assistant's ``handle`` through the real server into hearth's real assistant: talker, tools, stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.handle import Handled, HandledChunk

from agent.assistant import Assistant
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
        offer = offer_from(answers=assistant, answer_languages=("en",), programs=("handle",))
        async with serving(offer) as (_server, host, port):
            chunks, handled = await _ask(host, port, "Set a timer for ten minutes.")
            assert [t.duration_s for t in home.timers.active()] == [600], handled
            assert "10 minute" in handled or "ten minute" in handled.lower(), handled
            assert handled == " ".join(chunks)

            home.lists.add("oat milk")
            chunks, handled = await _ask(host, port, "What's on my shopping list?")
            assert "oat milk" in handled.lower(), handled
            assert chunks and handled == " ".join(chunks)

        entries = assistant.record.entries()
        assert [e.text for e in entries if e.role == "user"] == ["Set a timer for ten minutes.", "What's on my shopping list?"]
        tools = [(e.text, e.status, e.data.get("origin")) for e in entries if e.role == "tool" and e.status != "started"]
        assert ("timer_start", "ok", "user") in tools and ("shopping_list", "ok", "user") in tools, tools
        assert speaker.recording().samples.size == 0  # nothing was played in the kitchen
    finally:
        assistant.close()
        await close_turn_deps(deps)
