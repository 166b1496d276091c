"""Sound devices lost and found again, on the real audio path: PortAudio through PulseAudio.

The tests run a PulseAudio server of their own (they kill it, hang it and remove its sinks,
which would break anything else sharing a server) with a null sink per test: the speaker
plays into it, the microphone records its monitor.  Timeouts here only guard against a hang;
what is asserted is what happened.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest
from gpiozero import Device

from agent.assistant import Assistant
from agent.events import State
from agent.results import Outcome
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
from audio.protocols import AudioChunk, AudioDeviceError
from audio.stream_guard import LossSettings
from bench.drills.pulse_server import NullSink, PrivatePulseServer, PulseError
from firmware_py.device import DeviceLoop
from firmware_py.gpio import GpioButton, RgbStatusLight
from firmware_py.recovery import BackoffSettings, DeviceReopener
from tests.fakes import ScriptedChatModel, ToneSynthesizer
from tests.pulse import _rescan_portaudio
from tests.test_device import LiveMicrophone, mock_pins, wait_for  # noqa: F401 - mock_pins: a fixture, see usefixtures
from tests.test_turn import make_deps

pytestmark = [pytest.mark.audio, pytest.mark.timeout(120)]

GUARD_S = 30.0
"""Only a guard against hanging: every wait below ends far sooner when things work."""
FAST = BackoffSettings(first_s=0.2, max_s=1.0)
_names = itertools.count()


@pytest.fixture(scope="module")
def own_pulse() -> Iterator[PrivatePulseServer]:
    server = PrivatePulseServer()
    try:
        server.start()
    except PulseError as exc:
        pytest.fail(str(exc), pytrace=False)
    saved = os.environ.get("PULSE_SERVER")
    os.environ["PULSE_SERVER"] = server.address
    _rescan_portaudio()
    try:
        yield server
    finally:
        if saved is None:
            os.environ.pop("PULSE_SERVER", None)
        else:
            os.environ["PULSE_SERVER"] = saved
        server.close()


@pytest.fixture
def sink(own_pulse: PrivatePulseServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[NullSink]:
    own_pulse.resume()
    own_pulse.start()  # again, if a test before killed it
    sink = NullSink(own_pulse.address, f"hearth_fault_{os.getpid()}_{next(_names)}")
    sink.load()
    monkeypatch.setenv("PULSE_SINK", sink.name)
    monkeypatch.setenv("PULSE_SOURCE", sink.source)
    try:
        yield sink
    finally:
        own_pulse.resume()
        if own_pulse.running:
            sink.unload()


def tone(seconds: float, rate: int, level: float = 0.5) -> AudioChunk:
    t = np.arange(int(seconds * rate)) / rate
    return AudioChunk((level * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32), rate)


async def until_error(chunks: AsyncIterator[AudioChunk]) -> None:
    async for _ in chunks:
        pass


async def keep_playing(speaker: SoundDeviceSpeaker, heard: list[float]) -> None:
    """Play quarter-second tones until cancelled (or the speaker is lost), noting when each is heard."""
    while True:
        await speaker.write(tone(0.25, speaker.sample_rate), heard.append)


async def hears_a_tone(mic: SoundDeviceMicrophone, speaker: SoundDeviceSpeaker) -> bool:
    """Play a tone and read the microphone until it is heard (the guard ends a deaf wait)."""
    heard: list[float] = []

    player = asyncio.create_task(keep_playing(speaker, heard))
    try:
        async def listen() -> bool:
            async for chunk in mic.chunks():
                if heard and np.max(np.abs(chunk.samples)) > 0.2:
                    return True
            return False

        return await asyncio.wait_for(listen(), GUARD_S)
    finally:
        player.cancel()
        await asyncio.gather(player, return_exceptions=True)
        speaker.interrupt()


async def test_a_removed_source_ends_the_microphone_with_an_error_and_it_hears_again_once_back(sink: NullSink) -> None:
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    await mic.start()
    try:
        chunks = mic.chunks()
        await asyncio.wait_for(anext(chunks), GUARD_S)  # audio flows
        sink.unload()
        with pytest.raises(AudioDeviceError) as caught:
            await asyncio.wait_for(until_error(chunks), GUARD_S)
        message = str(caught.value)
        assert "input device" in message and "lost" in message and "\n" not in message
        assert mic.lost is not None
        with pytest.raises(AudioDeviceError):  # a new reader is told too, at once
            await asyncio.wait_for(anext(mic.chunks()), GUARD_S)

        await asyncio.wait_for(mic.close(), GUARD_S)
        with pytest.raises(AudioDeviceError, match="cannot open"):
            await mic.start()  # still gone
        sink.load()
        await mic.start()
        assert mic.lost is None
        speaker = SoundDeviceSpeaker(SpeakerSettings())
        await speaker.start()
        try:
            assert await hears_a_tone(mic, speaker)
        finally:
            await speaker.close()
    finally:
        await mic.close()


async def test_a_removed_sink_fails_the_blocked_write_and_drain_and_it_plays_again_once_back(sink: NullSink) -> None:
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    await speaker.start()
    heard: list[float] = []

    player = asyncio.create_task(keep_playing(speaker, heard))
    try:
        await wait_for(lambda: len(heard) >= 2, GUARD_S)  # playing, and write() waits for room
        sink.unload()
        with pytest.raises(AudioDeviceError) as caught:
            await asyncio.wait_for(player, GUARD_S)
        assert "output device" in str(caught.value) and "\n" not in str(caught.value)
        lost = await asyncio.wait_for(speaker.lost(), GUARD_S)
        assert str(lost) == str(caught.value)
        with pytest.raises(AudioDeviceError):
            await asyncio.wait_for(speaker.drain(), GUARD_S)
        with pytest.raises(AudioDeviceError):
            await speaker.write(tone(0.1, speaker.sample_rate))

        await asyncio.wait_for(speaker.close(), GUARD_S)
        with pytest.raises(AudioDeviceError):  # closed after a loss: still says why, not "not started"
            await speaker.write(tone(0.1, speaker.sample_rate))
        sink.load()
        await speaker.start()
        after: list[float] = []
        await speaker.write(tone(0.2, speaker.sample_rate), after.append)
        end = await asyncio.wait_for(speaker.drain(), GUARD_S)
        assert after and end > after[0]
        mic = SoundDeviceMicrophone(MicrophoneSettings())
        await mic.start()
        try:
            assert await hears_a_tone(mic, speaker)
        finally:
            await mic.close()
    finally:
        player.cancel()
        await asyncio.gather(player, return_exceptions=True)
        await speaker.close()


async def test_a_killed_sound_server_fails_both_devices_and_both_come_back_when_it_does(
    own_pulse: PrivatePulseServer, sink: NullSink
) -> None:
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    await mic.start()
    await speaker.start()
    try:
        chunks = mic.chunks()
        await asyncio.wait_for(anext(chunks), GUARD_S)
        own_pulse.kill()
        sink.forget()
        with pytest.raises(AudioDeviceError):
            await asyncio.wait_for(until_error(chunks), GUARD_S)
        await asyncio.wait_for(speaker.lost(), GUARD_S)
        with pytest.raises(AudioDeviceError):
            await speaker.write(tone(0.1, speaker.sample_rate))

        # The loop's own reopening, as the appliance does it: tries until the server is back.
        mic_back = asyncio.create_task(DeviceReopener("the microphone", mic, FAST).reopen(mic.lost or AudioDeviceError("lost")))
        speaker_back = asyncio.create_task(DeviceReopener("the speaker", speaker, FAST).reopen(await speaker.lost()))
        await asyncio.sleep(0.5)
        assert not mic_back.done() and not speaker_back.done()  # nothing to open yet
        own_pulse.start()
        sink.load()
        assert await asyncio.wait_for(mic_back, GUARD_S) >= 2
        assert await asyncio.wait_for(speaker_back, GUARD_S) >= 2
        assert await hears_a_tone(mic, speaker)
    finally:
        await mic.close()
        await speaker.close()


async def test_a_hung_sound_server_is_noticed_and_neither_closing_nor_opening_hangs(
    own_pulse: PrivatePulseServer, sink: NullSink
) -> None:
    loss = LossSettings(stall_s=1.0, first_audio_s=3.0, open_timeout_s=2.0, close_timeout_s=1.0)
    mic = SoundDeviceMicrophone(MicrophoneSettings(loss=loss))
    speaker = SoundDeviceSpeaker(SpeakerSettings(loss=loss))
    await mic.start()
    await speaker.start()
    try:
        chunks = mic.chunks()
        await asyncio.wait_for(anext(chunks), GUARD_S)
        own_pulse.pause()  # the server stops answering; the streams look active but go quiet
        with pytest.raises(AudioDeviceError, match="no audio for"):
            await asyncio.wait_for(until_error(chunks), GUARD_S)
        assert "no audio for" in str(await asyncio.wait_for(speaker.lost(), GUARD_S))
        await asyncio.wait_for(mic.close(), GUARD_S)  # PortAudio's stop blocks: close() does not
        await asyncio.wait_for(speaker.close(), GUARD_S)
        with pytest.raises(AudioDeviceError, match="did not answer"):
            await asyncio.wait_for(mic.start(), GUARD_S)  # opening blocks too: start() gives up
        own_pulse.resume()
        await asyncio.wait_for(DeviceReopener("the microphone", mic, FAST).reopen(AudioDeviceError("hung")), GUARD_S)
        await asyncio.wait_for(DeviceReopener("the speaker", speaker, FAST).reopen(AudioDeviceError("hung")), GUARD_S)
        assert await hears_a_tone(mic, speaker)
    finally:
        own_pulse.resume()
        await mic.close()
        await speaker.close()


_STUCK_THEN_EXIT = """
import asyncio, logging, time
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone
from audio.stream_guard import LossSettings

async def main():
    loss = LossSettings(stall_s=1.0, first_audio_s=3.0, close_timeout_s=0.5)
    mic = SoundDeviceMicrophone(MicrophoneSettings(loss=loss))
    await mic.start()
    chunks, began = mic.chunks(), time.monotonic()
    async for _ in chunks:
        if time.monotonic() - began > loss.first_audio_s + 0.5:
            break
    print("reading", flush=True)
    try:
        async for _ in chunks:
            pass
    except Exception as exc:
        print("lost:", exc, flush=True)
    await mic.close()
    print("closed", flush=True)

logging.basicConfig(level=logging.WARNING)
asyncio.run(main())
"""


async def test_a_stream_stuck_in_a_hung_server_does_not_hold_up_the_exit(own_pulse: PrivatePulseServer, sink: NullSink) -> None:
    repo = Path(__file__).resolve().parents[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _STUCK_THEN_EXIT, cwd=repo, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert proc.stdout is not None
    try:
        while b"reading" not in await asyncio.wait_for(proc.stdout.readline(), GUARD_S):
            pass
        own_pulse.pause()  # and it stays hung while the process closes its stream and exits
        out = (await asyncio.wait_for(proc.stdout.read(), GUARD_S)).decode(errors="replace")
        assert await asyncio.wait_for(proc.wait(), GUARD_S) == 0, out
    finally:
        own_pulse.resume()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "lost: lost the default input device: no audio for" in out
    assert "is stuck in PortAudio" in out and "closed" in out


# --------------------------------------------------------------------------- the whole loop


@pytest.mark.usefixtures("mock_pins")
async def test_the_loop_serves_a_press_after_its_microphone_is_removed_and_comes_back(sink: NullSink) -> None:
    loop = asyncio.get_running_loop()
    deps = make_deps(chat=ScriptedChatModel("Back again."), synthesizer=ToneSynthesizer(seconds_per_char=0.01))
    assistant = Assistant(deps)
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    await mic.start()
    light = RgbStatusLight((22, 23, 24))
    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, loop), light, backoff=FAST)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    pin = Device.pin_factory.pin(17)
    try:
        await wait_for(lambda: len(device.tap._recent) > 0, GUARD_S)  # the microphone is heard
        sink.unload()
        await wait_for(lambda: "microphone" in device.light.faults, GUARD_S)
        assert light._shown == State.FAULT
        pin.drive_low()  # a press while the microphone is lost is not served (and not recorded)
        await asyncio.sleep(0.1)
        pin.drive_high()
        assert assistant.turns_started == 0
        sink.load()
        await wait_for(lambda: not device.light.faults, GUARD_S)
        assert light._shown == State.IDLE and not runner.done()

        voice = SoundDeviceSpeaker(SpeakerSettings(sample_rate=16000))
        await voice.start()
        try:
            pin.drive_low()
            await voice.write(tone(0.8, 16000, level=0.3))
            await voice.drain()
            await asyncio.sleep(0.1)
            pin.drive_high()
            await wait_for(lambda: assistant.results, GUARD_S)
        finally:
            await voice.close()
        result = assistant.results[0]
        assert result.outcome == Outcome.ANSWERED and result.spoken == ["Back again."]
        assert deps.recognizer.audio_seen[0] > 0.5  # it heard the voice through the reopened microphone
    finally:
        stop.set()
        await asyncio.wait_for(runner, GUARD_S)
        await mic.close()


@pytest.mark.usefixtures("mock_pins")
async def test_a_speaker_lost_mid_reply_ends_that_turn_recorded_and_the_next_reply_is_heard(sink: NullSink, tmp_path) -> None:
    from agent.record import ConversationRecord

    loop = asyncio.get_running_loop()
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    await speaker.start()
    reply = "One two three four five. Six seven eight nine ten. Eleven twelve thirteen."
    deps = make_deps(chat=ScriptedChatModel(reply), synthesizer=ToneSynthesizer(seconds_per_char=0.05), speaker=speaker)
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    assistant = Assistant(deps, record=record)
    mic = LiveMicrophone()
    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, loop), RgbStatusLight((22, 23, 24)), speaker=speaker, backoff=FAST)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    pin = Device.pin_factory.pin(17)

    async def ask() -> None:
        pin.drive_low()
        mic.talking = True
        await asyncio.sleep(0.6)
        mic.talking = False
        pin.drive_high()

    try:
        await asyncio.sleep(0.1)  # the loop opens the button
        await ask()
        await wait_for(lambda: assistant.current is not None and assistant.current.timeline.first("first_audio_out") is not None, GUARD_S)
        sink.unload()
        await wait_for(lambda: assistant.results, GUARD_S)
        first = assistant.results[0]
        assert first.outcome == Outcome.FAILED and first.unspoken  # ended, and what was not heard is kept
        await wait_for(lambda: "speaker" in device.light.faults, GUARD_S)
        assert not runner.done()
        sink.load()
        await wait_for(lambda: not device.light.faults, GUARD_S)

        deps.chat = ScriptedChatModel("Heard again.")
        await ask()
        await wait_for(lambda: len(assistant.results) == 2, GUARD_S)
        assert assistant.results[1].outcome == Outcome.ANSWERED and assistant.results[1].spoken == ["Heard again."]
        turns = {(e.turn, e.role, e.status) for e in record.entries()}
        assert (1, "turn", "failed") in turns and (2, "turn", "answered") in turns
        assert any(turn == 1 and role == "assistant" and status == "unspoken" for turn, role, status in turns)
    finally:
        stop.set()
        await asyncio.wait_for(runner, GUARD_S)
        await speaker.close()
        record.close()
