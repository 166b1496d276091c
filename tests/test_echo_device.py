"""The device loop listening over hearth's voice, with scripted frames.

A scripted kitchen: the microphone hears hearth's own voice (an echo of what the speaker is
playing, known from the speaker's far-end reports) plus the user's voice when the test says
so; each chunk carries its echo part, so the fake echo filter (behind the same surface as
:class:`audio.echo.EchoFilter`) leaves exactly ``10^(-ERLE/20)`` of it.  The listeners, the
assistant, its turns and the ringing are the real ones.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.events import State
from agent.results import Outcome
from audio.protocols import AudioChunk, CapturedChunk, Transcript
from audio.wav import WavFileSpeaker
from firmware_py.device import DeviceLoop
from firmware_py.ringing import RingSettings, Ringers, ring_until_heard
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer
from tests.test_turn import make_deps

RATE = 16000
BLOCK = 512
ECHO_GAIN = 0.5
"""The room: hearth's voice reaches the microphone at half its level."""
LONG_REPLY = "One two three four five six seven. Eight nine ten eleven twelve. Thirteen fourteen fifteen."


@dataclass(frozen=True)
class KitchenChunk(CapturedChunk):
    """A microphone chunk that also says how much of it is hearth's echo (the scripted truth)."""

    echo: np.ndarray


class Played:
    """The speaker's far-end reports: what hearth played, and when."""

    def __init__(self) -> None:
        self.pieces: list[tuple[float, np.ndarray]] = []

    def played(self, samples: np.ndarray, rate: int, at: float) -> None:
        assert rate == RATE
        self.pieces.append((at, samples.copy()))


class KitchenMicrophone:
    """Hearth's echo (what the speaker plays, cut where it was interrupted), plus the user while ``talking``."""

    sample_rate = RATE

    def __init__(self, played: Played, speaker: WavFileSpeaker) -> None:
        self.played = played
        self.speaker = speaker
        self.talking = False
        self._closed = False

    def hearth_at(self, t: float, n: int = BLOCK) -> np.ndarray:
        out = np.zeros(n, np.float32)
        cuts = self.speaker.interruptions
        for start, samples in self.played.pieces[-16:]:
            end = start + len(samples) / RATE
            cut = min((c for c in cuts if c >= start), default=end)
            a = max(start, t)
            b = min(end, cut, t + n / RATE)
            if b <= a:
                continue
            i, j = round((a - t) * RATE), round((a - start) * RATE)
            k = min(n - i, round((b - a) * RATE), len(samples) - j)
            out[i : i + k] += samples[j : j + k]
        return ECHO_GAIN * out

    def hearth_speaks(self) -> bool:
        return bool(np.any(self.hearth_at(time.monotonic() - BLOCK / RATE)))

    async def chunks(self) -> AsyncIterator[AudioChunk]:
        t = np.arange(BLOCK) / RATE
        user = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
        silence = np.zeros(BLOCK, np.float32)
        while not self._closed:
            start = time.monotonic()
            await asyncio.sleep(BLOCK / RATE)
            echo = self.hearth_at(start)
            yield KitchenChunk(echo + (user if self.talking else silence), RATE, start, echo)

    async def close(self) -> None:
        self._closed = True


class ScriptedEcho:
    """The echo filter's surface: leaves ``10^(-erle_db/20)`` of each chunk's echo; the ERLE is
    reported once some echo was cleaned.  ``fail`` makes ``clean`` raise (a broken library)."""

    def __init__(self, erle_db: float, min_erle_db: float = 10.0, fail: bool = False) -> None:
        self.scripted_erle = erle_db
        self.min_erle_db = min_erle_db
        self.fail = fail
        self.far_rms = 0.0
        self.echo_gain = ECHO_GAIN
        self._heard_echo = False
        self.near_end: list[float | None] = []
        """What the listener told of the user's voice: each onset's lookback, None when it ended."""

    @property
    def erle_db(self) -> float | None:
        return self.scripted_erle if self._heard_echo else None

    def near_end_began(self, lookback_s: float) -> None:
        self.near_end.append(lookback_s)

    def near_end_ended(self) -> None:
        self.near_end.append(None)

    @property
    def erle_worst_db(self) -> float | None:
        return self.erle_db  # the scripted canceller leaves the same share of every frame

    def working(self) -> bool:
        erle = self.erle_db
        return erle is not None and erle >= self.min_erle_db

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk:
        if self.fail:
            raise RuntimeError("the canceller's library crashed")
        assert isinstance(chunk, KitchenChunk) and captured_at == chunk.captured_at
        echo_rms = float(np.sqrt(np.mean(chunk.echo**2)))
        self.far_rms = echo_rms / ECHO_GAIN
        self._heard_echo = self._heard_echo or echo_rms > 0
        left = 10 ** (-self.scripted_erle / 20)
        return AudioChunk(chunk.samples - (1 - left) * chunk.echo, chunk.sample_rate)


class Recognizers(ScriptedRecognizer):
    """Hears the scripted texts in turn (the first turn's request, then what is said over hearth)."""

    def __init__(self, *texts: str) -> None:
        super().__init__(texts[0])
        self.texts = list(texts)

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        self.text = self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]
        async for transcript in super().transcribe(audio, context):
            yield transcript


class Button:
    def open(self, on_press, on_release) -> None:
        self.on_press, self.on_release = on_press, on_release

    def press(self) -> None:
        self.on_press(time.monotonic())

    def release(self) -> None:
        self.on_release(time.monotonic())

    def close(self) -> None:
        pass


class Light:
    def __init__(self) -> None:
        self.shown: list[State] = []

    def show(self, state: State) -> None:
        self.shown.append(state)

    def close(self) -> None:
        pass


@dataclass
class Kitchen:
    assistant: Assistant
    device: DeviceLoop
    mic: KitchenMicrophone
    speaker: WavFileSpeaker
    button: Button
    stop: asyncio.Event
    runner: asyncio.Task[None]

    async def ask(self) -> None:
        """Press, speak 0.5 s, release: the first request."""
        self.button.press()
        self.mic.talking = True
        await asyncio.sleep(0.5)
        self.mic.talking = False
        self.button.release()

    async def close(self) -> None:
        self.stop.set()
        await self.runner


async def kitchen(*heard: str, echo: ScriptedEcho | None, barge_in: str = "stop", ringers: Ringers | None = None,
                  seconds_per_char: float = 0.05) -> Kitchen:
    played = Played()
    speaker = WavFileSpeaker(RATE, reference=played)
    deps = make_deps(chat=ScriptedChatModel(LONG_REPLY), synthesizer=ToneSynthesizer(seconds_per_char=seconds_per_char),
                     speaker=speaker, recognizer=Recognizers(*heard))
    assistant = Assistant(deps, barge_in=barge_in)
    mic = KitchenMicrophone(played, speaker)
    button = Button()
    device = DeviceLoop(assistant, mic, button, Light(), echo=echo, ringers=ringers)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    await asyncio.sleep(0.05)
    return Kitchen(assistant, device, mic, speaker, button, stop, runner)


async def wait_for(predicate, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


async def speak_mid_unit(k: Kitchen, seconds: float) -> None:
    """Talk over hearth while it is saying a unit (not in a pause): the echo is loud meanwhile."""
    await wait_for(
        lambda: k.device.ears.hears_over_voice and k.device._state == State.SPEAKING and k.mic.hearth_speaks()
    )
    k.mic.talking = True
    await asyncio.sleep(seconds)
    k.mic.talking = False


async def test_a_stop_word_over_the_reply_ends_it_and_starts_no_turn(caplog) -> None:
    caplog.set_level(logging.INFO)
    k = await kitchen("how long for the pasta", "stop", echo=ScriptedEcho(30.0))
    await k.ask()
    await wait_for(lambda: k.device.ears.hears_over_voice)  # measured on the first reply: swapped
    await speak_mid_unit(k, 0.4)
    await wait_for(lambda: k.assistant.results and k.assistant.current is None and k.device._state == State.IDLE)
    await asyncio.sleep(0.5)
    first = k.assistant.results[0]
    assert first.outcome == Outcome.INTERRUPTED and first.unspoken, "the reply was cut"
    assert k.speaker.interruptions, "the speaker went silent"
    assert k.assistant.turns_started == 1 and len(k.assistant.results) == 1, "a stop word is no request"
    assert k.assistant.stops_heard == 1
    assert k.device.ears.over_voice is not None and k.device.ears.over_voice.onsets == 1, "hearth's own echo made no onset"
    echo = k.device.echo
    assert isinstance(echo, ScriptedEcho)
    assert echo.near_end == [k.device.ears.over_voice.settings.preroll_s, None], "the canceller was told of the user's voice, then of its end"
    lines = [r.getMessage() for r in caplog.records]
    assert any("echo cancellation on: listening in hearth's pauses until it is measured" in line for line in lines)
    assert any("listening over hearth's voice: echo cancellation measured 30.0 dB" in line for line in lines)
    await k.close()


async def test_other_speech_over_the_reply_is_the_next_request_with_its_first_words() -> None:
    k = await kitchen("how long for the pasta", "and for rice", "and for rice", echo=ScriptedEcho(30.0))
    await k.ask()
    first_turn_audio = 0.5
    await speak_mid_unit(k, 0.8)
    await wait_for(lambda: len(k.assistant.results) == 2, timeout=25)
    first, second = k.assistant.results
    assert first.outcome == Outcome.INTERRUPTED
    assert second.outcome == Outcome.ANSWERED and second.transcript == "and for rice"
    recognizer = k.assistant.deps.recognizer
    assert isinstance(recognizer, Recognizers)
    # The turn heard the words said before it started (the listener's audio from before the onset).
    assert recognizer.audio_seen[-1] > first_turn_audio
    await k.close()


async def test_a_clatter_over_the_reply_stops_it_but_asks_nothing() -> None:
    """An onset too short to be the user (a pan, a burst of hearth's own residual voice) silences
    the reply, as any onset does, but no turn starts from it: nothing was asked."""
    k = await kitchen("how long for the pasta", "stop", echo=ScriptedEcho(30.0))
    await k.ask()
    await speak_mid_unit(k, 0.1)
    await wait_for(lambda: k.assistant.results and k.assistant.current is None and k.device._state == State.IDLE)
    await asyncio.sleep(0.6)
    assert k.assistant.results[0].outcome == Outcome.INTERRUPTED
    assert k.assistant.turns_started == 1 and k.assistant.stops_heard == 0, "no request, no stop word"
    listener = k.device.ears.over_voice
    assert listener is not None and listener.onsets == 1 and not listener.deciding
    await k.close()


async def test_in_rush_mode_speech_over_the_reply_rushes_it_and_a_stop_word_still_stops_it() -> None:
    k = await kitchen("how long for the pasta", "wait", echo=ScriptedEcho(30.0), barge_in="rush")
    await k.ask()
    await speak_mid_unit(k, 0.4)
    await wait_for(lambda: k.assistant.results)
    first = k.assistant.results[0]
    assert first.timeline.first("barge_in").detail["mode"] == "rush"
    assert first.outcome == Outcome.INTERRUPTED and k.assistant.turns_started == 1
    await k.close()


async def test_too_little_cancellation_falls_back_to_the_pauses_and_says_so(caplog) -> None:
    caplog.set_level(logging.INFO)
    k = await kitchen("how long for the pasta", echo=ScriptedEcho(3.0), seconds_per_char=0.02)
    await k.ask()
    await wait_for(lambda: k.assistant.results, timeout=25)
    assert not k.device.ears.hears_over_voice
    # hearth's echo, barely cancelled, is as loud as a voice: heard only in pauses, it stops nothing.
    assert k.assistant.results[0].outcome == Outcome.ANSWERED
    assert any("listening in hearth's pauses only: echo cancellation measured 3.0 dB, less than the 20.0 dB needed" in r.getMessage()
               for r in caplog.records)
    await k.close()


async def test_without_a_canceller_it_listens_in_pauses_and_says_why(caplog) -> None:
    caplog.set_level(logging.INFO)
    k = await kitchen("how long for the pasta", echo=None, seconds_per_char=0.02)
    await k.ask()
    await wait_for(lambda: k.device.speaking_up.is_open)  # the first pause
    k.mic.talking = True
    await wait_for(lambda: k.assistant.results)
    k.mic.talking = False
    assert k.assistant.results[0].outcome == Outcome.INTERRUPTED  # heard in the pause, as before
    assert k.device.ears.over_voice is None and not k.device.ears.hears_over_voice
    assert any("listening in hearth's pauses only: echo cancellation is off in the configuration" in r.getMessage()
               for r in caplog.records)
    await k.close()


async def test_a_canceller_that_fails_falls_back_to_the_pauses_and_the_loop_goes_on(caplog) -> None:
    caplog.set_level(logging.INFO)
    k = await kitchen("how long for the pasta", echo=ScriptedEcho(30.0, fail=True), seconds_per_char=0.02)
    await k.ask()
    await wait_for(lambda: k.assistant.results, timeout=25)
    assert k.assistant.results[0].outcome == Outcome.ANSWERED and k.assistant.results[0].transcript == "how long for the pasta"
    assert not k.device.ears.hears_over_voice
    assert sum("echo cancellation failed; listening in hearth's pauses only" in r.getMessage() for r in caplog.records) == 1
    await k.close()


async def _ringing_kitchen() -> tuple[Kitchen, asyncio.Task[int]]:
    ringers = Ringers()
    k = await kitchen("stop", echo=ScriptedEcho(30.0), ringers=ringers)
    rings = asyncio.ensure_future(
        ring_until_heard(k.assistant, "Your pasta timer is done. It is time to drain the pasta.", None, RingSettings(times=4, interval_s=1.5))
    )
    ringers.start(rings)
    return k, rings


async def test_a_ringing_timer_is_stopped_by_a_spoken_stop_during_a_ring() -> None:
    k, rings = await _ringing_kitchen()
    await speak_mid_unit(k, 0.4)
    assert await asyncio.wait_for(rings, 15) == 1  # heard at the first ring
    assert k.speaker.interruptions, "the announcement was cut"
    assert k.assistant.turns_started == 0 and k.assistant.stops_heard == 1
    assert k.assistant.deps.synthesizer.texts == ["Your pasta timer is done. It is time to drain the pasta."]  # type: ignore[attr-defined]
    await k.close()


async def test_a_ringing_timer_is_stopped_by_a_spoken_stop_between_rings() -> None:
    k, rings = await _ringing_kitchen()
    await wait_for(lambda: k.device.ears.hears_over_voice)
    await wait_for(lambda: k.device._state == State.IDLE and k.device.ears.ear.is_open)  # after the ring, listening
    k.mic.talking = True
    await asyncio.sleep(0.4)
    k.mic.talking = False
    assert await asyncio.wait_for(rings, 15) == 1  # the next ring never came
    assert k.assistant.turns_started == 0 and k.assistant.stops_heard == 1
    assert len(k.assistant.deps.synthesizer.texts) == 1  # type: ignore[attr-defined]
    await asyncio.sleep(0.1)
    assert not k.device.ears.ear.is_open, "no timer rings: nothing is listened to"
    await k.close()


@pytest.mark.parametrize("erle", [30.0])
async def test_the_microphone_chunks_reach_the_filter_with_their_capture_time(erle: float) -> None:
    """The tap hands the filter each chunk's own capture stamp (not its arrival)."""
    echo = ScriptedEcho(erle)
    k = await kitchen("how long for the pasta", echo=echo)
    await k.ask()  # ScriptedEcho.clean asserts the stamp it gets is the chunk's own
    await wait_for(lambda: k.assistant.results, timeout=25)
    assert echo.erle_db == erle
    await k.close()


# --------------------------------------------------------------------------- the speaker's and the microphone's times


async def test_the_sound_card_speaker_tells_the_reference_what_it_played_with_the_dac_times(monkeypatch) -> None:
    from audio.portaudio import SoundDeviceSpeaker, SpeakerSettings
    from tests.test_device_recovery import FakeStreams

    FakeStreams(monkeypatch)
    played = Played()
    speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=RATE, blocksize=160), reference=played)
    await speaker.start()
    voice = (0.3 * np.sin(2 * np.pi * 200 * np.arange(RATE // 2) / RATE)).astype(np.float32)
    heard: list[float] = []
    await speaker.write(AudioChunk(voice, RATE), heard.append)
    await speaker.drain()
    await speaker.close()
    # Every block, the silence around the voice included: one unbroken run on the DAC's clock.
    everything = np.concatenate([s for _, s in played.pieces])
    sounding = [i for i, (_, s) in enumerate(played.pieces) if np.any(s)]
    first = sounding[0]
    assert np.array_equal(everything[first * 160 : first * 160 + len(voice)], voice), "exactly what was played"
    assert not np.any(everything[first * 160 + len(voice) :]), "silence after it"
    assert played.pieces[first][0] == heard[0], "the voice's first block has the DAC time on_heard reports"
    starts = [at for at, _ in played.pieces]
    assert starts == sorted(starts) and all(len(s) == 160 for _, s in played.pieces)


async def test_the_sound_card_microphone_stamps_each_chunk_with_its_adc_time(monkeypatch) -> None:
    from types import SimpleNamespace

    from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone
    from tests.test_device_recovery import FakeStream, FakeStreams

    stream_clock = 5000.0  # PortAudio's stream time runs on a clock of its own
    latency = 0.05

    def run(self: FakeStream) -> None:
        n = self.blocksize
        while not self._halt.wait(n / self.samplerate):
            now = time.monotonic() + stream_clock
            info = SimpleNamespace(inputBufferAdcTime=now - latency, currentTime=now)
            self.callback(np.full((n, 1), 0.1, np.float32), n, info, SimpleNamespace())

    FakeStreams(monkeypatch)
    monkeypatch.setattr(FakeStream, "_run", run)
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    await mic.start()
    chunks = mic.chunks()
    stamps = []
    for _ in range(3):
        chunk = await anext(chunks)
        arrived = time.monotonic()
        assert isinstance(chunk, CapturedChunk)
        stamps.append(chunk.captured_at)
        # Mapped to monotonic time: the ADC took the first sample the latency before the callback ran.
        assert chunk.captured_at <= arrived - latency
        assert chunk.captured_at > arrived - 100
    await mic.close()
    assert stamps == sorted(stamps)


async def test_the_wav_speaker_tells_the_reference_only_what_it_played() -> None:
    played = Played()
    speaker = WavFileSpeaker(RATE, reference=played)
    first = AudioChunk(np.full(RATE // 10, 0.1, np.float32), RATE)
    second = AudioChunk(np.full(RATE // 10, 0.2, np.float32), RATE)
    await speaker.write(first)
    await speaker.write(second)
    await asyncio.sleep(0.05)
    speaker.interrupt()  # in the first chunk: the second is never played
    await asyncio.sleep(0.2)
    assert len(played.pieces) == 1 and np.array_equal(played.pieces[0][1], first.samples)


async def test_the_wav_microphone_stamps_each_chunk_when_its_first_sample_was_spoken() -> None:
    from audio.protocols import captured_at
    from audio.wav import WavFileMicrophone

    mic = WavFileMicrophone(AudioChunk(np.zeros(RATE, np.float32), RATE), chunk_s=0.1, realtime=False)
    chunks = [c async for c in mic.chunks()]
    assert mic.started_at is not None
    assert [c.captured_at for c in chunks] == pytest.approx([mic.started_at + i * 0.1 for i in range(10)])  # type: ignore[attr-defined]
    # A source that does not stamp: its chunk ended when it arrived.
    assert captured_at(AudioChunk(np.zeros(1600, np.float32), RATE), 100.0) == pytest.approx(99.9)


# --------------------------------------------------------------------------- which ear, on its own


class Ear:
    def __init__(self) -> None:
        self.is_open = False
        self.deciding = False
        self.heard = 0

    def open(self, at: float | None = None) -> None:
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    def accept(self, chunk: AudioChunk) -> None:
        self.heard += 1


class Measure:
    def __init__(self) -> None:
        self.erle_db: float | None = None
        self.far_rms = 0.0
        self.echo_gain = 1.0

    def working(self) -> bool:
        return self.erle_db is not None and self.erle_db >= 10.0

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk:
        return chunk


def test_the_ear_follows_the_measured_cancellation_with_a_margin_and_says_each_change(caplog) -> None:
    from firmware_py.speaking_up import SpeakingUp

    caplog.set_level(logging.INFO)
    pauses, voice, measure = Ear(), Ear(), Measure()
    ears = SpeakingUp(pauses, voice, measure, min_erle_db=10.0, hysteresis_db=3.0)
    chunk = AudioChunk(np.zeros(512, np.float32), RATE)
    ears.follow(State.SPEAKING)
    ears.accept(chunk)
    assert ears.ear is pauses and not pauses.is_open, "not measured yet: pauses only, and this is no pause"
    for erle, over in [(12.0, True), (8.0, True), (7.5, True), (6.5, False), (9.0, False), (10.0, True)]:
        measure.erle_db = erle
        ears.accept(chunk)
        assert ears.hears_over_voice is over, erle
    assert voice.is_open, "hearth is speaking: the voice listener is open"
    changes = [r.getMessage() for r in caplog.records if "listening" in r.getMessage()]
    assert changes == [
        "listening over hearth's voice: echo cancellation measured 12.0 dB (at least 10.0 dB needed)",
        "listening in hearth's pauses only: echo cancellation measured 6.5 dB, less than the 7.0 dB needed",
        "listening over hearth's voice: echo cancellation measured 10.0 dB (at least 10.0 dB needed)",
    ]
    voice.deciding = True
    ears.follow(State.IDLE)
    assert voice.is_open, "what was said over the reply is still being recognized"
    voice.deciding = False
    ears.follow(State.IDLE)
    assert not voice.is_open
    ears.follow(State.IDLE, hold_open=True)
    assert voice.is_open, "a timer rings: a stop word is listened for between its rings"
    ears.close()
    assert not voice.is_open


def test_the_configuration_builds_the_echo_filter_or_says_why_there_is_none(monkeypatch) -> None:
    import audio.echo
    from audio.echo import EchoFilter
    from firmware_py.config import parse_config
    from firmware_py.wiring import make_echo_filter

    echo, why = make_echo_filter(parse_config({"echo": {"enabled": True, "canceller": "speex", "min_erle_db": 14.0}}))
    assert isinstance(echo, EchoFilter) and why == "" and echo.settings.min_erle_db == 14.0
    echo, why = make_echo_filter(parse_config({"echo": {"enabled": False}}))
    assert echo is None and why == "echo cancellation is off in the configuration ([echo] enabled = false)"

    def missing(kind: str) -> None:
        raise ImportError("No module named 'livekit'")

    monkeypatch.setattr(audio.echo, "make_canceller", missing)
    assert make_echo_filter(parse_config({"echo": {"enabled": False}}))[0] is None
    # On by default: a canceller that cannot load is said, and hearth listens in its pauses.
    echo, why = make_echo_filter(parse_config({}))
    assert echo is None and why == "the 'speex' echo canceller does not work here (ImportError: No module named 'livekit')"


async def test_the_reply_listener_has_its_own_quick_detector_when_given_one() -> None:
    """The turns' detector waits a quarter second of speech; the listener over hearth's voice is
    given one of its own that reports an onset sooner, and does not share its state with a turn."""
    own = EnergyVad()
    echo = ScriptedEcho(30.0)
    deps = make_deps(speaker=WavFileSpeaker(RATE))
    assistant = Assistant(deps)
    device = DeviceLoop(assistant, KitchenMicrophone(Played(), deps.speaker), Button(), Light(), echo=echo, onset_vad=own)
    assert device.ears.over_voice is not None and device.ears.over_voice.vad is own
    shared = DeviceLoop(Assistant(make_deps(speaker=WavFileSpeaker(RATE))), KitchenMicrophone(Played(), deps.speaker), Button(), Light(), echo=echo)
    assert shared.ears.over_voice.vad is shared.assistant.deps.vad


def test_the_listeners_guard_expects_the_residual_of_the_cancellers_worse_frames() -> None:
    class Converging(ScriptedEcho):
        @property
        def erle_worst_db(self) -> float | None:
            return 15.0  # one frame in ten still leaves ten times more than the median's

    echo = Converging(35.0)
    echo._heard_echo = True
    echo.far_rms = 0.1
    deps = make_deps(speaker=WavFileSpeaker(RATE))
    device = DeviceLoop(Assistant(deps), KitchenMicrophone(Played(), deps.speaker), Button(), Light(), echo=echo)
    assert device.ears.over_voice is not None
    level = device.ears.over_voice.echo_level()
    assert level.erle_db == 15.0 and level.far_rms == 0.1


def test_figures_set_aside_because_the_echo_path_moved_send_the_ear_to_the_pauses_until_measured_again(caplog) -> None:
    """The filter sets its figures aside when the echo path moves (its ERLE is None again): the
    guard's figures no longer describe the echo, so the user is heard in hearth's pauses until the
    canceller is measured on the new path, and then over the voice again, with the full minimum.
    An utterance still being recognized is not cut off by the switch."""
    from firmware_py.speaking_up import SpeakingUp

    caplog.set_level(logging.INFO)
    pauses, voice, measure = Ear(), Ear(), Measure()
    ears = SpeakingUp(pauses, voice, measure, min_erle_db=10.0, hysteresis_db=3.0)
    chunk = AudioChunk(np.zeros(512, np.float32), RATE)
    ears.follow(State.SPEAKING)
    measure.erle_db = 30.0
    ears.accept(chunk)
    assert ears.hears_over_voice and voice.is_open
    voice.deciding = True
    measure.erle_db = None
    ears.accept(chunk)
    assert ears.hears_over_voice and voice.is_open, "what is being recognized is heard out"
    voice.deciding = False
    ears.accept(chunk)
    assert ears.ear is pauses and not voice.is_open
    ears.follow(State.PAUSING)
    assert pauses.is_open, "the pauses are listened to"
    measure.erle_db = 8.0  # the new filter is still converging: above the hysteresis, below the minimum
    ears.accept(chunk)
    assert ears.ear is pauses
    measure.erle_db = 12.0
    ears.accept(chunk)
    assert ears.hears_over_voice and voice.is_open
    changes = [r.getMessage() for r in caplog.records if "listening" in r.getMessage()]
    assert changes[1:] == [
        "listening in hearth's pauses only: the echo path moved, until the echo cancellation is measured on it",
        "listening over hearth's voice: echo cancellation measured 12.0 dB (at least 10.0 dB needed)",
    ]
