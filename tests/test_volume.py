"""Volume by voice and by the long press: matched exactly, kept across restarts, heard at the new level."""

from __future__ import annotations

import time

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.deciding.commands import volume_command
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from agent.deciding.undo import Act, opposite
from audio.protocols import AudioChunk
from audio.volume import VolumeSpeaker, gain_of
from tests.fakes import ToneSynthesizer, say
from tests.test_turn import make_deps
from tools.executor import ToolExecutor
from tools.registry import ToolRegistry
from tools.settings import SettingsStore
from tools.volume import Volume, volume_tools


@pytest.mark.parametrize(("text", "args"), [
    ("Turn the volume up.", {"step": 1}),
    ("louder please", {"step": 1}),
    ("a lot louder", {"step": 2}),
    ("Could you turn it down a bit?", {"step": -1}),
    ("that's too loud", {"step": -1}),
    ("Volume 5", {"level": 5}),
    ("set the volume to three", {"level": 3}),
    ("max volume", {"level": 10}),
    ("what's the volume", {"step": 0}),
    ("소리 줄여", {"step": -1}),
    ("소리 좀 키워 줘", {"step": 1}),
    ("볼륨 5로 해줘", {"level": 5}),
    ("볼륨 다섯으로", {"level": 5}),
    ("볼륨 최대로", {"level": 10}),
])
def test_volume_commands(text: str, args: dict) -> None:
    assert volume_command(text, "ko" if any("가" <= c <= "힣" for c in text) else "en") == args


@pytest.mark.parametrize("text", [
    "turn up the heat on the sauce", "what's that noise", "the music next door is too loud", "turn the oven down to 180", "cancel the timer",
    "소리 이상해", "무슨 소리야", "이 소리 뭐야", "",
])
def test_other_requests_are_not_volume_commands(text: str) -> None:
    assert volume_command(text, "en") is None and volume_command(text, "ko") is None


def test_each_level_is_three_db_below_the_next_and_ten_is_untouched() -> None:
    assert gain_of(10) == 1.0
    assert 20 * np.log10(gain_of(7)) == pytest.approx(-9.0)
    assert gain_of(0) == gain_of(1) and gain_of(99) == 1.0


class LevelSink:
    """Records the peak of every chunk it is given."""

    sample_rate = 16000

    def __init__(self) -> None:
        self.peaks: list[float] = []

    async def write(self, chunk: AudioChunk, on_heard=None) -> None:
        if chunk.samples.any():
            self.peaks.append(float(np.abs(chunk.samples).max()))
        if on_heard is not None:
            on_heard(time.monotonic())

    async def drain(self) -> float:
        return time.monotonic()

    def interrupt(self) -> None:
        pass

    async def close(self) -> None:
        pass


async def test_the_speaker_plays_at_its_level_and_passes_the_rest_through() -> None:
    sink = LevelSink()
    speaker = VolumeSpeaker(sink, level=10)
    loud = AudioChunk(np.full(100, 0.5, np.float32), 16000)
    await speaker.write(loud)
    speaker.level = 4
    await speaker.write(loud)
    assert sink.peaks[0] == pytest.approx(0.5)
    assert sink.peaks[1] == pytest.approx(0.5 * gain_of(4))
    assert speaker.sample_rate == 16000  # the real speaker's attributes stay reachable


async def _volume_tools(path, levels: list[int], language: str = "en", default: int = 7):
    store = SettingsStore(path)
    store.open()
    volume = Volume(store, levels.append, default=default)
    spec = volume_tools(volume, language)[0]
    return store, volume, spec


async def test_the_level_is_kept_across_restarts_and_said(tmp_path) -> None:
    applied: list[int] = []
    store, volume, spec = await _volume_tools(tmp_path / "hearth.db", applied)
    assert volume.restore() == 7
    out = await spec.run(spec.args(step=1))
    assert out.text == "Volume 8." and out.data == {"level": 8, "previous": 7}
    store.close()
    # Power cut and start again: the new level is what the speaker gets.
    again: list[int] = []
    store, volume, spec = await _volume_tools(tmp_path / "hearth.db", again)
    assert volume.restore() == 8 and again == [8]
    store.close()


async def test_the_ends_are_said_and_the_long_press_wraps_to_the_quietest(tmp_path) -> None:
    applied: list[int] = []
    store, volume, spec = await _volume_tools(tmp_path / "hearth.db", applied, default=9)
    assert (await spec.run(spec.args(step=2))).text == "Volume 10."
    assert (await spec.run(spec.args(step=1))).text == "Volume 10. That's as loud as I go."
    assert (await spec.run(spec.args(level=15))).text == "Volume 10. That's as loud as I go."
    assert (await spec.run(spec.args(step=1, wrap=True))).text == "Volume 1."
    assert (await spec.run(spec.args(level=0))).text == "Volume 1. That's as quiet as I go."
    assert applied[-1] == 1
    store.close()
    store, volume, spec = await _volume_tools(tmp_path / "ko.db", [], language="ko")
    assert (await spec.run(spec.args(level=10))).text == "볼륨 10."
    assert (await spec.run(spec.args(level=20))).text == "볼륨 10. 가장 큰 소리예요."
    store.close()


async def test_a_broken_stored_level_falls_back_to_the_default(tmp_path) -> None:
    store, volume, _spec = await _volume_tools(tmp_path / "hearth.db", [])
    store.put("volume", "loud")
    assert volume.level == 7
    store.close()


def test_undo_puts_the_volume_back() -> None:
    assert opposite(Act("volume_set", {"step": 1}, {"level": 8, "previous": 7})) == ("volume_set", {"level": 7})


class NoModel:
    """A chat model that must not be asked: commands are heard without it."""

    calls = 0

    async def warm(self, system_prompt: str) -> None:
        pass

    async def stream(self, messages, max_tokens=None, json_schema=None):
        NoModel.calls += 1
        raise AssertionError("a command reached the model")
        yield ""  # pragma: no cover


async def test_louder_by_voice_is_answered_at_the_new_level_without_the_model(tmp_path) -> None:
    sink = LevelSink()
    speaker = VolumeSpeaker(sink, level=5)
    store = SettingsStore(tmp_path / "hearth.db")
    store.open()
    volume = Volume(store, lambda level: setattr(speaker, "level", level), default=5)
    volume.restore()
    registry = ToolRegistry(volume_tools(volume))
    executor = ToolExecutor(registry)
    executor.start()
    chat = NoModel()
    deps = make_deps(chat=chat, synthesizer=ToneSynthesizer(seconds_per_char=0.005))
    deps.speaker = speaker
    deps.tools = ToolUse(ToolCallPlanner(chat, registry.for_model().specs, registry.for_model().tool_call_schema(), "x"), executor, registry)
    try:
        result = await say(Assistant(deps), "Turn the volume up, please.")
    finally:
        await executor.close()
        store.close()
    assert result.spoken == ["Volume 6."]
    assert [c.name for c in result.tool_calls] == ["volume_set"] and result.tool_calls[0].acted
    # The tone is 0.2 at full scale: the reply was heard at level 6, not the 5 it was asked at.
    assert max(sink.peaks) == pytest.approx(0.2 * gain_of(6), rel=1e-3)
    assert NoModel.calls == 0
    assert "volume_set" not in registry.for_model()


@pytest.mark.parametrize(("text", "level"), [("Turn the volume all the way up.", 10), ("turn it all the way down", 1)])
def test_all_the_way(text: str, level: int) -> None:
    assert volume_command(text, "en") == {"level": level}
