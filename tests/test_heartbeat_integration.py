"""Heartbeat on the real models: a weather question answered from what was fetched while it was asked."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.results import Outcome
from audio.wav import WavFileSpeaker, read_wav
from bench.suites.audio import scenario_audio
from firmware_py.config import parse_config
from firmware_py.demo import play_request
from firmware_py.wiring import build_turn_deps, close_turn_deps
from tests.test_tools_weather import location

pytestmark = pytest.mark.integration


def _fresh_forecast(folder: Path) -> Path:
    now = datetime.now(timezone.utc).astimezone(timezone(timedelta(hours=9)))
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    cache = {"version": 1, "fetched_at": now.isoformat(), "source": "test",
             "locations": {"seoul": location("Seoul", ["서울"], 16, start), "ilsan": location("Ilsan", ["일산"], 14, start)}}
    path = folder / "forecast.json"
    path.write_text(json.dumps(cache, ensure_ascii=False), encoding="utf-8")
    return path


async def test_a_weather_question_is_answered_from_the_early_look_up(models_dir: Path, tmp_path: Path):
    # The place comes early and the request goes on for a while: on two busy cores the Thinker's
    # first decision takes a second or more, and the look-up must still be made while the rest is said.
    request = ("What's the weather like in Seoul tomorrow? I need to know if I should take an umbrella to work, "
               "because last week I got soaked on the way to the station and I really don't want that again.")
    config = parse_config({"models_dir": str(models_dir), "tools": {"data_dir": str(tmp_path), "forecast_file": str(_fresh_forecast(tmp_path))}})
    deps = await build_turn_deps(config, WavFileSpeaker(config.audio.output_rate))
    assistant = Assistant(deps, history_turns=0)
    await assistant.warm()
    await assistant.keep_heads()  # as the device does after start-up, before the first press
    try:
        result = await play_request(assistant, read_wav(scenario_audio(request, "en"), 16000))
    finally:
        await close_turn_deps(deps)
    tl = result.timeline
    assert result.outcome == Outcome.ANSWERED
    assert [(c.name, c.args.get("location")) for c in result.tool_calls] == [("weather", "Seoul")]
    early = [m for m in tl.all("heartbeat_fetch_start") if m.detail["tool"] == "weather"]
    assert early and early[0].t < tl.last("speech_end").t  # fetched before the user had finished
    assert tl.first("heartbeat_reused") is not None  # and the answer is that result
    assert "seoul" in result.reply.lower()
