"""Faults through the real wiring: damaged model files at start-up, and a stage that raises and a
full disk in the middle of the real loop, which then answers the next request as usual."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.record import ConversationRecord
from agent.results import Outcome
from audio.wav import WavFileSpeaker, read_wav
from bench.suites.audio import scenario_audio
from firmware_py.config import parse_config
from firmware_py.demo import play_request
from firmware_py.home_tools import HomeTools
from firmware_py.wiring import StartupError, build_turn_deps, close_turn_deps, required_models, verify_models

pytestmark = pytest.mark.integration


def models_with_a_copy_of(models_dir: Path, tmp_path: Path, names: list[str], copied: str) -> Path:
    """A models folder linking to the installed models, with ``copied`` a copy of its own to damage."""
    root = tmp_path / "models"
    root.mkdir()
    for name in names:
        if name == copied:
            shutil.copytree(models_dir / name, root / name)
        else:
            (root / name).symlink_to(models_dir / name)
    return root


def garble(path: Path, at: int) -> None:
    with path.open("r+b") as out:
        out.seek(at)
        out.write(os.urandom(4096))


def test_a_model_garbled_at_its_head_is_named_with_the_command_that_puts_it_right(models_dir: Path, tmp_path: Path):
    config = parse_config({"reasoner": {"where": "off"}})
    root = models_with_a_copy_of(models_dir, tmp_path, required_models(config), "smart-turn-v3")
    garble(root / "smart-turn-v3" / "smart-turn-v3.2-cpu.onnx", 0)  # onnxruntime raises its own InvalidProtobuf
    config = parse_config({"models_dir": str(root), "reasoner": {"where": "off"}})
    with pytest.raises(StartupError) as info:
        asyncio.run(build_turn_deps(config, WavFileSpeaker()))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("smart-turn-v3 failed to load: model file ") and "is corrupt" in message
    assert "hearth models install smart-turn-v3 --models-dir" in message


def test_a_model_damaged_inside_loads_but_is_found_by_the_start_up_check(models_dir: Path, tmp_path: Path):
    config = parse_config({"reasoner": {"where": "off"}})
    root = models_with_a_copy_of(models_dir, tmp_path, required_models(config), "silero-vad")
    model = root / "silero-vad" / "silero_vad.onnx"
    garble(model, model.stat().st_size // 2)
    config = parse_config({"models_dir": str(root), "reasoner": {"where": "off"}})
    with pytest.raises(StartupError) as info:
        verify_models(config)
    message = str(info.value)
    assert "\n" not in message and "silero_vad.onnx is corrupt" in message and "hearth models install silero-vad" in message


async def test_the_real_loop_apologises_for_a_failed_stage_and_a_full_disk_then_answers_as_usual(models_dir: Path, tmp_path: Path):
    config = parse_config({"models_dir": str(models_dir), "reasoner": {"where": "off"}, "tools": {"data_dir": str(tmp_path)}})
    deps = await build_turn_deps(config, WavFileSpeaker(config.audio.output_rate))
    assistant = Assistant(deps, history_turns=0, record=ConversationRecord.open(tmp_path / "conversation.sqlite3"))
    home = deps.tools.home
    assert isinstance(home, HomeTools)

    async def say(text: str):
        return await play_request(assistant, read_wav(scenario_audio(text, "en"), 16000))

    async def broken(*_args, **_kwargs):
        raise RuntimeError("decoder failed")
        yield  # an async iterator, like the real one

    try:
        deps.recognizer.transcribe = broken  # type: ignore[method-assign]
        heard = await say("What time is it?")
        del deps.recognizer.transcribe
        (pages,) = home.lists.conn.execute("PRAGMA page_count").fetchone()
        home.lists.conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError):
            for n in range(100_000):
                home.lists.add(f"filler {n:05d}")
        full = await say("Add milk to the shopping list.")
        on_list = [item.item.lower() for item in home.lists.items()]
        home.lists.conn.execute("PRAGMA max_page_count = 1073741823")
        after = await say("What time is it?")
    finally:
        await close_turn_deps(deps)
        assistant.record.close()

    assert heard.outcome == Outcome.FAILED
    assert heard.spoken == ["Sorry, something went wrong with hearing you. Please try again."]
    assert [c.name for c in full.tool_calls] == ["shopping_add"] and not full.tool_calls[0].acted
    assert " ".join(full.spoken) == "Sorry, I couldn't save that: the storage is full."
    assert "milk" not in on_list
    assert after.outcome == Outcome.ANSWERED and [c.name for c in after.tool_calls] == ["time_now"]
