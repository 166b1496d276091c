"""Lost sound devices, with scripted fakes: the backoff, the status light, and PortAudio errors
injected under the real microphone and speaker classes (sounddevice's stream classes replaced)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from gpiozero import Device
import sounddevice
from hypothesis import given
from hypothesis import strategies as st

from agent.assistant import Assistant
from agent.events import State
from agent.results import Outcome
from agent.turn import device_lost
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
from audio.protocols import AudioChunk, AudioDeviceError
from audio.stream_guard import LossSettings, StreamWatch
from firmware_py.device import DeviceLoop
from firmware_py.gpio import STATE_COLOURS, ConsoleLight, GpioButton, RgbStatusLight
from firmware_py.recovery import BackoffSettings, DeviceReopener, FaultLight, backoff_delays
from firmware_py.ringing import RingSettings, ring_until_heard
from tests.fakes import ScriptedChatModel, ToneSynthesizer
from tests.test_device import mock_pins, wait_for  # noqa: F401 - mock_pins: a fixture, see usefixtures
from tests.test_turn import make_deps

pytestmark = pytest.mark.timeout(120)

GUARD_S = 30.0
"""Only a guard against hanging."""
QUICK = BackoffSettings(first_s=0.01, max_s=0.05)


# --------------------------------------------------------------------------- the schedule


def test_the_backoff_starts_at_half_a_second_and_doubles_to_thirty() -> None:
    delays = backoff_delays(BackoffSettings(), uniform=lambda: 0.5)  # the middle of the jitter: none
    assert [next(delays) for _ in range(9)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


@given(st.lists(st.floats(min_value=0.0, max_value=0.999999), min_size=12, max_size=12))
def test_jitter_moves_each_wait_by_at_most_its_share(draws: list[float]) -> None:
    settings = BackoffSettings()
    plain = backoff_delays(settings, uniform=lambda: 0.5)
    pending = iter(draws)
    jittered = backoff_delays(settings, uniform=lambda: next(pending))
    for _ in draws:
        nominal, actual = next(plain), next(jittered)
        assert nominal * (1 - settings.jitter) <= actual <= nominal * (1 + settings.jitter)


class ScriptedDevice:
    """start() raises the scripted errors in turn, then works."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        self.starts = 0
        self.closes = 0

    async def start(self) -> None:
        self.starts += 1
        if self.errors:
            raise AudioDeviceError(self.errors.pop(0))

    async def close(self) -> None:
        self.closes += 1


async def test_the_reopener_tries_at_once_then_by_the_schedule_and_logs_once_per_reason(caplog) -> None:
    device = ScriptedDevice(["cannot open x: busy"] * 3 + ["cannot open x: gone"])
    waits: list[float] = []

    async def wait(delay: float, wake: asyncio.Event) -> None:
        waits.append(delay)

    reopener = DeviceReopener("the speaker", device, BackoffSettings(), uniform=lambda: 0.5, wait=wait)
    with caplog.at_level(logging.DEBUG, logger="firmware_py.recovery"):
        tries = await reopener.reopen(AudioDeviceError("lost output device 'x': PortAudio ended the stream"))
    assert tries == 5 and device.starts == 5 and device.closes == 1
    assert waits == [0.5, 1.0, 2.0, 4.0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 4  # lost; busy (once, not three times); gone; back
    assert "lost output device" in warnings[0]
    assert "busy" in warnings[1] and "gone" in warnings[2] and "back after 5 tries" in warnings[3]


async def test_a_press_cuts_the_wait_short() -> None:
    device = ScriptedDevice(["cannot open x: gone"])
    reopener = DeviceReopener("the microphone", device, BackoffSettings(first_s=3600.0))
    reopening = asyncio.create_task(reopener.reopen(AudioDeviceError("lost x")))
    await wait_for(lambda: device.starts == 1, GUARD_S)
    reopener.try_now()
    assert await asyncio.wait_for(reopening, GUARD_S) == 2


# --------------------------------------------------------------------------- the light


class SeenLight:
    def __init__(self) -> None:
        self.seen: list[State] = []

    def show(self, state: State) -> None:
        self.seen.append(state)

    def close(self) -> None:
        pass


def test_the_light_shows_the_fault_instead_of_idle_but_a_turn_as_it_goes() -> None:
    inner = SeenLight()
    light = FaultLight(inner)
    light.show(State.IDLE)
    light.fault("speaker")
    light.show(State.LISTENING)
    light.show(State.IDLE)
    light.fault("microphone")
    light.clear("speaker")
    light.clear("microphone")
    assert inner.seen == [State.IDLE, State.FAULT, State.LISTENING, State.FAULT, State.FAULT, State.FAULT, State.IDLE]


@pytest.mark.usefixtures("mock_pins")
async def test_the_led_blinks_red_for_a_fault_and_is_steady_again_after() -> None:
    led = RgbStatusLight((22, 23, 24))
    red = Device.pin_factory.pin(22)
    led.show(State.FAULT)
    await wait_for(lambda: red.state > 0.5, GUARD_S)
    await wait_for(lambda: red.state < 0.5, GUARD_S)  # and dark again: a blink
    assert Device.pin_factory.pin(23).state == 0 and Device.pin_factory.pin(24).state == 0
    led.show(State.LISTENING)
    assert led.colour == STATE_COLOURS[State.LISTENING]
    await asyncio.sleep(0.3)
    assert led.colour == STATE_COLOURS[State.LISTENING]  # the blink stopped
    led.close()


def test_the_console_names_the_fault(capsys) -> None:
    light = ConsoleLight()
    light.show(State.FAULT)
    assert capsys.readouterr().out == "[fault]\n"


# --------------------------------------------------------------------------- telling a loss


async def _watch_a_stream(stall: bool) -> list[AudioDeviceError]:
    """A stream fed every 10 ms; then its callbacks stop (``stall``) or the whole process stands still."""
    lost: list[AudioDeviceError] = []
    watch = StreamWatch("output device 'x'", LossSettings(stall_s=0.4, first_audio_s=0.1), lost.append)
    stream = SimpleNamespace(active=True)
    generation = watch.next_generation()
    watch.begin(stream, generation)
    feeding = True

    async def feed() -> None:
        while feeding:
            watch.fed(generation)
            await asyncio.sleep(0.01)

    feeder = asyncio.create_task(feed())
    await asyncio.sleep(0.3)  # past the first seconds' grace
    if stall:
        feeding = False
        await wait_for(lambda: bool(lost), GUARD_S)
    else:
        time.sleep(1.0)  # noqa: ASYNC251 - the point: the loop and the audio both stand still
        await asyncio.sleep(0.3)
    feeding = False
    await feeder
    watch.end()
    return lost


async def test_callbacks_that_stop_while_the_process_runs_are_a_loss() -> None:
    lost = await _watch_a_stream(stall=True)
    assert len(lost) == 1 and "no audio for" in str(lost[0]) and "output device 'x'" in str(lost[0])


async def test_a_process_starved_of_cpu_is_not_taken_for_a_lost_device() -> None:
    assert await _watch_a_stream(stall=False) == []


# --------------------------------------------------------------------------- PortAudio, scripted


class FakeStream:
    """A running sounddevice stream on a thread of its own, paced like a sound card, until it dies."""

    def __init__(self, streams: FakeStreams, kind: str, callback: Any, finished_callback: Any, samplerate: float,
                 blocksize: int = 0, **_: Any) -> None:
        self.streams, self.kind = streams, kind
        self.callback, self.finished_callback = callback, finished_callback
        self.samplerate = samplerate
        self.blocksize = blocksize or int(samplerate / 100)
        self.latency = 0.01
        self.active = False
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def time(self) -> float:
        return time.monotonic()

    def start(self) -> None:
        self.active = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n, status = self.blocksize, SimpleNamespace(output_underflow=False)
        t = np.arange(n) / self.samplerate
        voice = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)[:, None]
        while not self._halt.wait(n / self.samplerate):
            if self.kind == "input":
                self.callback(voice if self.streams.talking else np.zeros((n, 1), np.float32), n, None, status)
            else:
                out = np.zeros((n, 1), np.float32)
                self.callback(out, n, SimpleNamespace(outputBufferDacTime=time.monotonic() + self.latency), status)
                self.streams.played += float(np.sum(np.abs(out)))

    def die(self) -> None:
        """The device is gone: PortAudio ends the stream."""
        self._halt.set()
        self.active = False
        self.finished_callback()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join()
        if self.active:
            self.active = False
            self.finished_callback()

    def close(self) -> None:
        self._halt.set()


class FakeStreams:
    """sounddevice's InputStream and OutputStream: ``refuse`` more opens fail, as PortAudio's would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refuse = 0
        self.refused = 0
        self.talking = False
        self.played = 0.0
        self.opened: list[FakeStream] = []
        monkeypatch.setattr(sounddevice, "InputStream", lambda **kw: self._open("input", kw))
        monkeypatch.setattr(sounddevice, "OutputStream", lambda **kw: self._open("output", kw))

    def _open(self, kind: str, kw: dict[str, Any]) -> FakeStream:
        if self.refuse > 0:
            self.refuse -= 1
            self.refused += 1
            raise sounddevice.PortAudioError(f"Error opening {kind} stream: Device unavailable", -9985)
        stream = FakeStream(self, kind, **kw)
        self.opened.append(stream)
        return stream

    def current(self, kind: str) -> FakeStream:
        return [s for s in self.opened if s.kind == kind][-1]


async def test_a_microphone_whose_opening_fails_three_times_is_open_on_the_fourth_try(monkeypatch) -> None:
    streams = FakeStreams(monkeypatch)
    mic = SoundDeviceMicrophone(MicrophoneSettings(device="USB mic"))
    await mic.start()
    chunks = mic.chunks()
    await asyncio.wait_for(anext(chunks), GUARD_S)
    streams.current("input").die()
    with pytest.raises(AudioDeviceError, match="USB mic"):
        await asyncio.wait_for(anext(chunks), GUARD_S)

    streams.refuse = 3
    waits: list[float] = []

    async def wait(delay: float, wake: asyncio.Event) -> None:
        waits.append(delay)

    tries = await DeviceReopener("the microphone", mic, wait=wait).reopen(AudioDeviceError("lost"))
    assert tries == 4 and streams.refused == 3 and len(waits) == 3
    chunk = await asyncio.wait_for(anext(mic.chunks()), GUARD_S)
    assert chunk.sample_rate == 16000
    await mic.close()


async def test_a_speaker_that_dies_under_a_waiting_write_raises_instead_of_blocking(monkeypatch) -> None:
    streams = FakeStreams(monkeypatch)
    speaker = SoundDeviceSpeaker(SpeakerSettings(device="USB speaker"))
    await speaker.start()
    heard: list[float] = []
    writer = asyncio.create_task(speaker.write(AudioChunk(np.full(22050 * 2, 0.1, np.float32), 22050), heard.append))
    await writer  # two seconds queued: the next write has to wait for room
    waiting = asyncio.create_task(speaker.write(AudioChunk(np.full(2205, 0.1, np.float32), 22050)))
    await wait_for(lambda: bool(heard), GUARD_S)
    streams.current("output").die()
    with pytest.raises(AudioDeviceError, match="USB speaker"):
        await asyncio.wait_for(waiting, GUARD_S)
    with pytest.raises(AudioDeviceError):
        await asyncio.wait_for(speaker.drain(), GUARD_S)
    assert "USB speaker" in str(await asyncio.wait_for(speaker.lost(), GUARD_S))
    await speaker.close()


@pytest.mark.usefixtures("mock_pins")
async def test_the_loop_rides_out_injected_portaudio_errors_on_both_devices(monkeypatch, caplog) -> None:
    streams = FakeStreams(monkeypatch)
    loop = asyncio.get_running_loop()
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=16000))
    await mic.start()
    await speaker.start()
    deps = make_deps(chat=ScriptedChatModel("One two three four five. Six seven eight nine ten."),
                     synthesizer=ToneSynthesizer(seconds_per_char=0.05), speaker=speaker)
    assistant = Assistant(deps)
    light = SeenLight()
    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, loop), light, speaker=speaker, backoff=QUICK)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    pin = Device.pin_factory.pin(17)
    await asyncio.sleep(0.1)

    async def ask() -> None:
        pin.drive_low()
        streams.talking = True
        await asyncio.sleep(0.6)
        streams.talking = False
        pin.drive_high()

    try:
        # The microphone is lost and refuses to open twice: the light shows the fault meanwhile.
        streams.refuse = 2
        streams.current("input").die()
        await wait_for(lambda: State.FAULT in light.seen, GUARD_S)
        await wait_for(lambda: not device.light.faults, GUARD_S)
        assert streams.refused == 2 and light.seen[-1] == State.IDLE

        # The speaker is lost in the middle of a reply: that turn ends, the loop goes on.
        await ask()
        await wait_for(lambda: assistant.current is not None and assistant.current.timeline.first("first_audio_out"), GUARD_S)
        streams.refuse = 3
        with caplog.at_level(logging.WARNING):
            streams.current("output").die()
            await wait_for(lambda: assistant.results, GUARD_S)
            await wait_for(lambda: not device.light.faults and streams.refused == 5, GUARD_S)
        assert assistant.results[0].outcome == Outcome.FAILED and assistant.results[0].unspoken
        assert not [r for r in caplog.records if r.exc_info], "one line each, no traceback"
        assert not runner.done()

        # Both back: the next press is served and its reply is played.
        deps.chat = ScriptedChatModel("Fine again.")
        before = streams.played
        await ask()
        await wait_for(lambda: len(assistant.results) == 2, GUARD_S)
        assert assistant.results[1].outcome == Outcome.ANSWERED and assistant.results[1].spoken == ["Fine again."]
        assert streams.played > before
        assert light.seen[-1] == State.IDLE
    finally:
        stop.set()
        await asyncio.wait_for(runner, GUARD_S)
        await mic.close()
        await speaker.close()


# --------------------------------------------------------------------------- turns and rings


def test_a_lost_device_is_found_inside_the_groups_a_turn_raises() -> None:
    lost = AudioDeviceError("lost the default output device: the stream stopped")
    assert device_lost(ExceptionGroup("respond", [ExceptionGroup("speak", [lost])])) is lost
    assert device_lost(ExceptionGroup("respond", [lost, ValueError("a bug")])) is None
    assert device_lost(ValueError("a bug")) is None


class SilentKitchen:
    """The speaker is lost for the first ``lost_for`` rings, then plays them."""

    def __init__(self, lost_for: int) -> None:
        self.lost_for = lost_for
        self.tries = 0
        self.turns_started = 0
        self.stops_heard = 0

    async def announce(self, text: str, sound: AudioChunk | None = None) -> bool:
        self.tries += 1
        if self.tries <= self.lost_for:
            raise AudioDeviceError("lost the default output device: PortAudio ended the stream")
        return True

    async def sleep(self, _seconds: float) -> None:
        pass


async def test_a_ring_the_speaker_could_not_play_does_not_count(caplog) -> None:
    kitchen = SilentKitchen(lost_for=3)
    with caplog.at_level(logging.WARNING, logger="firmware_py.ringing"):
        rings = await ring_until_heard(kitchen, "Pasta timer is done.", None, RingSettings(times=2), kitchen.sleep)
    assert rings == 2 and kitchen.tries == 5
    assert len(caplog.records) == 1 and "could not ring" in caplog.records[0].getMessage()
