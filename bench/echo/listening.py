"""Listening over hearth's own voice, measured on a real audio path.

    python -m bench.echo [--language en --language ko] [--quiet 50] [--stop-reps 5] [--human 8]
                         [--canceller speex|apm] [--path-steps 0 --step-ms 20]
                         [--out bench/results/echo-<machine>.json]

hearth's PortAudio speaker and microphone run through a PulseAudio kitchen of the bench's own
(:mod:`bench.echo.room`: the speaker's sink feeds the microphone's through loopbacks with latency
and gain, a direct path and a reflection); the device loop is hearth's own
(:class:`firmware_py.device.DeviceLoop` with the echo filter, the reply listener, the real Silero
voice detector and Whisper recognizer of the language, and its voice: piper in English, espeak-ng
in Korean).  Only the talker is scripted (kitchen replies of a few sentences), and each request is
a synthesized question given to the turn directly.  A person is a WAV played into the room:

- ``quiet``: replies nobody talks over.  ``false_barge_ins`` counts the onsets the reply listener
  reported in them (hearth's own voice taken for the user's; target 0).  ``erle_db`` is measured
  on them: the microphone's energy against the cleaned signal's, while hearth speaks (the first
  reply, in which the canceller converges and the choice to listen over the voice is made, is
  left out); the filter's own running estimate is reported beside it.
- ``stop``: a stop word said over a reply, en "stop", "cancel", "stop it", "hearth, stop" and ko
  "그만", "잠깐", "그만해", "잠깐만", synthesized with espeak-ng (a voice unlike hearth's) at the
  echo's level.  ``stop_heard`` per language: the reply stopped, the stop word recognized, and no
  turn started (target ≥ 95 %).
- ``human``: an ``en-human`` clip (a real reader) said over a reply: it must stop the reply and
  become the next request, not be taken for a stop word.
- ``time_to_silence_s``: from the start of the person's speech (found in the raw microphone by
  cross-correlation with the clip they said, its first word by :func:`speech_onset`) to the end of
  the last sound hearth's speaker played (its DAC time), over the stop and human trials; median
  (target ≤ 0.3 s) and p90, and the same for the human trials alone.
- ``path_steps``: with ``--path-steps N``, the room's echo paths step by ``--step-ms`` (and back,
  every other time) before N trials spread over each language's run, as a sound card's latency
  does after an underrun; the false barge-ins and stop words of the three trials after each step
  are counted apart.
- ``path_suspicions``: per language, how often the echo filter's quick checks said the echo path
  had moved (see :class:`audio.echo.EchoFilter`).
- ``cpu_per_audio_s``: thread CPU seconds the echo filter took per second of microphone audio
  while it cancelled (hearth speaking), and over all audio.

Exit status 0 with the JSON written; 2 when PulseAudio or a model is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import logging
import platform
import random
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.assistant import Assistant
from agent.events import State
from agent.deps import TurnDeps
from agent.listening.listen import Press
from audio.echo import EchoFilter, EchoSettings, FarEndReference, make_canceller
from audio.protocols import AudioChunk, Transcript
from audio.wav import WavFileMicrophone, read_wav, resample, write_wav
from bench.echo.room import KitchenRoom, RoomSettings
from bench.provenance import written_by

log = logging.getLogger(__name__)

RATE = 16000
RESULTS = Path(__file__).parent.parent / "results"

REPLIES = {
    "en": [
        "Boil the eggs for seven minutes. Then cool them in cold water, so they peel easily.",
        "Preheat the oven to two hundred and twenty degrees. Bake the bread for about thirty five minutes.",
        "Let the steak rest for five minutes. The juices settle back into the meat.",
        "Parboil the potatoes first. Shake them in the pan, then roast them in hot oil.",
        "Taste the pasta a minute early. It should be tender, with a little bite.",
        "Add the garlic last. It burns quickly, and then it turns bitter.",
    ],
    "ko": [
        "달걀은 칠 분 동안 삶으세요. 그다음 찬물에 식히면 껍질이 잘 벗겨져요.",
        "오븐을 이백이십 도로 예열하세요. 빵은 삼십오 분쯤 구우면 돼요.",
        "스테이크는 오 분 정도 쉬게 두세요. 그래야 육즙이 고기 안에 남아요.",
        "파스타는 일 분 일찍 맛을 보세요. 살짝 씹히는 맛이 있어야 해요.",
    ],
}
"""What the scripted talker says: two or three Cadence units each."""
LONG = {
    "en": "Cut the onions into thin slices. Fry them slowly in butter for twenty minutes, stirring now and then. "
    "Add a spoon of sugar when they turn golden. Then pour in the stock and let it simmer for half an hour.",
    "ko": "양파를 얇게 써세요. 버터에 이십 분 동안 천천히 볶으면서 가끔 저어 주세요. "
    "노릇해지면 설탕을 한 숟가락 넣으세요. 그다음 육수를 붓고 삼십 분 동안 끓이세요.",
}
"""The reply a stop word is said over (long enough to be mid-sentence)."""
REQUEST = {"en": "What should I do next?", "ko": "다음엔 뭘 해?"}
STOP_WORDS = {"en": ["stop", "cancel", "stop it", "hearth, stop"], "ko": ["그만", "잠깐", "그만해", "잠깐만"]}
USER_VOICE = {"en": "en-us+f3", "ko": "ko+f3"}
"""espeak-ng voices for the person (a woman's variant: hearth's voices are men's)."""
USER_RMS = 0.05
"""The person's speech at the microphone (RMS over its voiced part); hearth's echo there is
measured and reported beside it (``voice_to_echo_db``)."""


# --------------------------------------------------------------------------- what happened, recorded


class PlayLog:
    """Told what the speaker played (with DAC times) and passes it on to the far-end reference."""

    def __init__(self, reference: FarEndReference) -> None:
        self.reference = reference
        self._lock = threading.Lock()
        self.blocks: collections.deque[tuple[float, float, float]] = collections.deque(maxlen=20000)
        """(DAC time of the first sample, of the end, RMS)."""

    def played(self, samples: np.ndarray, rate: int, at: float) -> None:
        self.reference.played(samples, rate, at)
        rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0
        with self._lock:
            self.blocks.append((at, at + len(samples) / rate, rms))

    def last_sound(self, since: float, until: float, floor: float = 1e-3) -> float | None:
        """DAC time at which the last block louder than ``floor`` between ``since`` and ``until`` ended."""
        with self._lock:
            ends = [end for at, end, rms in self.blocks if since <= at < until and rms > floor]
        return max(ends) if ends else None

    def first_sound(self, since: float, floor: float = 1e-3) -> float | None:
        with self._lock:
            starts = [at for at, _end, rms in self.blocks if at >= since and rms > floor]
        return min(starts) if starts else None


class MeasuredFilter(EchoFilter):
    """hearth's echo filter, keeping the raw microphone, the energy in and out, and its CPU time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw: collections.deque[tuple[float, np.ndarray]] = collections.deque(maxlen=3000)  # ~95 s
        self.energy: collections.deque[tuple[float, float, float, bool]] = collections.deque(maxlen=40000)
        """(capture time, raw energy sum, cleaned energy sum, cancelled)."""
        self.cpu_s = 0.0
        self.audio_s = 0.0
        self.cpu_cancelling_s = 0.0
        self.audio_cancelling_s = 0.0

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk:
        before = self.frames_cancelled
        t = time.thread_time()
        out = super().clean(chunk, captured_at)
        spent = time.thread_time() - t
        cancelled = self.frames_cancelled > before
        self.cpu_s += spent
        self.audio_s += chunk.duration
        if cancelled:
            self.cpu_cancelling_s += spent
            self.audio_cancelling_s += chunk.duration
        raw = resample(chunk.samples, chunk.sample_rate, RATE)
        self.raw.append((captured_at, raw))
        self.energy.append((captured_at, float(np.sum(raw.astype(np.float64) ** 2)), float(np.sum(out.samples.astype(np.float64) ** 2)), cancelled))
        return out

    def raw_between(self, t0: float, t1: float) -> tuple[float, np.ndarray]:
        pieces = [(at, s) for at, s in self.raw if at + len(s) / RATE > t0 and at < t1]
        if not pieces:
            return t0, np.zeros(0, np.float32)
        return pieces[0][0], np.concatenate([s for _, s in pieces])

    def erle_between(self, t0: float, t1: float) -> float | None:
        """Microphone energy over cleaned energy (dB) for the chunks captured between ``t0`` and ``t1``."""
        rows = [(r, c) for at, r, c, _ in self.energy if t0 <= at < t1]
        raw, clean = sum(r for r, _ in rows), sum(c for _, c in rows)
        if not rows or raw <= 0:
            return None
        return float(10 * np.log10(raw / max(clean, 1e-12)))

    def rms_between(self, t0: float, t1: float, floor: float = 1e-3) -> float:
        """RMS of the raw microphone over the chunks between ``t0`` and ``t1`` louder than ``floor``
        (hearth's voice, not its pauses)."""
        rows = [r for at, r, _c, _ in self.energy if t0 <= at < t1 and r > 512 * floor**2]
        return float(np.sqrt(sum(rows) / max(1, len(rows) * 512)))


def speech_onset(clip: np.ndarray, above_noise_db: float = 15.0, below_peak_db: float = 35.0) -> float:
    """Seconds from the clip's start to its first 10 ms frame within ``below_peak_db`` of its
    loudest and, in a recording that starts with its room's noise, ``above_noise_db`` over that
    noise.  A reader's recording has its hiss at about -30 dB from the moment it starts, 0.2-0.4 s
    before the first word: a fixed -30 dB threshold took the hiss for speech (and added it to the
    time to silence).  The noise is the first 0.1 s of sound when that is 25 dB or more below the
    loudest frame; espeak-ng's clips start with the word itself."""
    frames = clip[: len(clip) // 160 * 160].reshape(-1, 160)
    energy = 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)
    peak = float(energy.max())
    sounding = np.nonzero(energy > -90.0)[0]
    threshold = peak - below_peak_db
    if len(sounding):
        lead = float(np.median(energy[sounding[0] : sounding[0] + 10]))
        if lead <= peak - 25.0:
            threshold = max(threshold, lead + above_noise_db)
    loud = np.nonzero(energy > threshold)[0]
    return float(loud[0] * 160 / RATE) if len(loud) else 0.0


def find_clip(mic: np.ndarray, mic_start: float, clip: np.ndarray) -> tuple[float, float] | None:
    """Capture time of ``clip``'s first sample in ``mic`` (cross-correlation), and the peak's
    prominence; None when the clip is not clearly there."""
    if len(mic) < len(clip) // 2:
        return None
    n = 1 << int(np.ceil(np.log2(len(mic) + len(clip))))
    spec = np.fft.rfft(mic, n) * np.conj(np.fft.rfft(clip, n))
    corr = np.fft.irfft(spec, n)[: len(mic)]
    peak = int(np.argmax(np.abs(corr)))
    prominence = float(np.abs(corr[peak]) / (np.sqrt(np.mean(corr**2)) + 1e-12))
    if prominence < 8.0:
        return None
    return mic_start + peak / RATE, prominence


# --------------------------------------------------------------------------- the rig


class _KeepingWhatItHears:
    """The recognizer, keeping each utterance decoded for its n best (the reply listener's) as a
    WAV (and the exact float samples) with its transcript beside it, for replaying a miss offline."""

    def __init__(self, recognizer: Any, directory: Path) -> None:
        self._recognizer = recognizer
        self._directory = directory
        self._count = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._recognizer, name)

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        if hypotheses <= 1:
            async for transcript in self._recognizer.transcribe(audio, context, hypotheses=hypotheses):
                yield transcript
            return
        chunks: list[np.ndarray] = []

        async def kept() -> AsyncIterator[AudioChunk]:
            async for chunk in audio:
                chunks.append(chunk.samples)
                yield chunk

        async for transcript in self._recognizer.transcribe(kept(), context, hypotheses=hypotheses):
            if transcript.is_final:
                self._count += 1
                stem = self._directory / f"{self.language}-{self._count:03d}"
                samples = np.concatenate(chunks or [np.zeros(0, np.float32)]).astype(np.float32)
                write_wav(stem.with_suffix(".wav"), AudioChunk(samples, self.sample_rate))
                np.save(stem.with_suffix(".npy"), samples)  # exactly what was decoded, for a replay that matches
                stem.with_suffix(".json").write_text(json.dumps(
                    {"text": transcript.text, "alternatives": transcript.alternatives, "context": context}, ensure_ascii=False) + "\n")
            yield transcript


class _Replies:
    """The scripted talker: each turn gets the next reply text."""

    def __init__(self) -> None:
        self.next: list[str] = []

    async def warm(self, system_prompt: str) -> None:
        return None

    async def stream(self, messages: Any, max_tokens: int | None = None) -> AsyncIterator[str]:
        text = self.next.pop(0) if self.next else "Okay."
        for word in text.split(" "):
            yield word + " "
            await asyncio.sleep(0.005)


class _Button:
    def open(self, on_press: Any, on_release: Any) -> None:
        pass

    def close(self) -> None:
        pass


class _Light:
    def __init__(self) -> None:
        self.state = State.IDLE

    def show(self, state: State) -> None:
        self.state = state

    def close(self) -> None:
        pass


@dataclass
class Rig:
    """One language's hearth on the PulseAudio kitchen (see the module doc)."""

    language: str
    canceller: str = "speex"
    room_settings: RoomSettings = field(default_factory=RoomSettings)
    min_erle_db: float = 20.0
    keep_heard: Path | None = None
    """Where to keep what the reply listener had recognized (samples, WAV, transcript); None: nowhere."""

    async def open(self) -> None:
        from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
        from firmware_py.config import HearthConfig
        from firmware_py.device import DeviceLoop
        from firmware_py.wiring import cadence_settings, listen_settings, make_recognizer, make_synthesizer, make_vad, model_store

        config = HearthConfig(language=self.language)  # type: ignore[arg-type]
        store = model_store(config)
        vad = make_vad(config, store)
        recognizer = make_recognizer(config, store)
        synthesizer = make_synthesizer(config, store)
        await asyncio.gather(asyncio.to_thread(vad.load), asyncio.to_thread(recognizer.load), synthesizer.load())
        await asyncio.to_thread(recognizer.warm)
        await synthesizer.warm()
        if self.keep_heard is not None:
            self.keep_heard.mkdir(parents=True, exist_ok=True)
            recognizer = _KeepingWhatItHears(recognizer, self.keep_heard)
        self.room = KitchenRoom(self.room_settings)
        self.room.open()
        self.echo = MeasuredFilter(make_canceller(self.canceller), FarEndReference(), EchoSettings(min_erle_db=self.min_erle_db))
        self.plays = PlayLog(self.echo.reference)
        self.speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=config.audio.output_rate), reference=self.plays)
        self.microphone = SoundDeviceMicrophone(MicrophoneSettings())
        await self.speaker.start()
        await self.microphone.start()
        rules, pace = cadence_settings(config)
        self.talker = _Replies()
        deps = TurnDeps(
            vad=vad, recognizer=recognizer, chat=self.talker, synthesizer=synthesizer, speaker=self.speaker,  # type: ignore[arg-type]
            language=self.language, system_prompt="", listen=listen_settings(config), cadence=rules, pace=pace,
        )
        self.assistant = Assistant(deps, barge_in="stop")
        self.light = _Light()
        from agent.listening.barge_in import ONSET_MIN_SPEECH_S

        onset_vad = make_vad(config, store, min_speech_s=ONSET_MIN_SPEECH_S)
        onset_vad.load()
        self.device = DeviceLoop(
            self.assistant, self.microphone, _Button(), self.light, echo=self.echo, min_erle_db=self.min_erle_db, onset_vad=onset_vad,
        )
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(self.device.run(self._stop))
        self.request = await _request_clip(REQUEST[self.language], self.language)

    async def close(self) -> None:
        self._stop.set()
        await asyncio.gather(self._runner, return_exceptions=True)
        await self.microphone.close()
        await self.speaker.close()
        self.room.close()

    @property
    def listener(self) -> Any:
        return self.device.ears.over_voice

    def ask(self, reply: str) -> None:
        """A request whose answer is ``reply`` (the question goes to the turn directly, not through the room)."""
        self.talker.next = [reply]
        press = Press(time.monotonic())
        press.release(press.pressed_at)
        audio = WavFileMicrophone(self.request, realtime=False, trailing_silence_s=1.0).chunks()
        self.assistant.start_turn(audio, press)

    async def until(self, predicate: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.01)
        return True

    async def quiet(self) -> None:
        """Nothing more is going on: no turn, nothing queued for the speaker, the room's echo gone.

        What the listener is still recognizing is waited for; a turn it started from what it heard
        (hearth's own voice taken for a request) is cut, so that it does not answer into the next trial."""
        await self.until(lambda: self.listener is None or not self.listener.deciding, 10)
        await self.until(lambda: self.assistant.current is None and self.speaker.queued_s == 0, 40)
        await asyncio.sleep(0.4)
        if self.assistant.current is not None:
            self.assistant.interrupt()
            self.device.tap.stop_listening()
            await self.until(lambda: self.assistant.current is None and self.speaker.queued_s == 0, 10)
            await asyncio.sleep(0.4)


# --------------------------------------------------------------------------- the trials


async def quiet_reply(rig: Rig, reply: str) -> dict[str, Any]:
    onsets = rig.listener.onsets if rig.listener is not None else 0
    started = time.monotonic()
    rig.ask(reply)
    await rig.until(lambda: rig.light.state in (State.SPEAKING, State.PAUSING), 20)
    await rig.quiet()
    first = rig.plays.first_sound(started)
    last = rig.plays.last_sound(started, time.monotonic())
    result = rig.assistant.results[-1] if rig.assistant.results else None
    row: dict[str, Any] = {
        "over_voice": rig.device.ears.hears_over_voice,
        "onsets": (rig.listener.onsets if rig.listener is not None else 0) - onsets,
        "outcome": result.outcome.value if result is not None else None,
        "erle_running_db": rig.echo.erle_db,
    }
    if first is not None and last is not None:
        row["spoken_s"] = round(last - first, 2)
        row["erle_db"] = rig.echo.erle_between(first + 0.2, last)
        row["echo_rms"] = rig.echo.rms_between(first + 0.2, last)
    return row


async def spoken_over(rig: Rig, clip_path: Path, clip: np.ndarray, kind: str, label: str) -> dict[str, Any]:
    """Ask for the long reply, say ``clip`` into the room part-way through a unit, see what hearth did."""
    stops, turns = rig.assistant.stops_heard, rig.assistant.turns_started
    started = time.monotonic()
    rig.ask(LONG[rig.language])
    await rig.until(lambda: rig.light.state == State.SPEAKING, 20)
    await asyncio.sleep(random.uniform(0.4, 1.2))
    if rig.light.state != State.SPEAKING:
        await rig.until(lambda: rig.light.state == State.SPEAKING, 5)
    onsets = rig.listener.onsets if rig.listener is not None else 0
    over_voice = rig.device.ears.hears_over_voice
    said_at = time.monotonic()
    await rig.room.say(clip_path)
    decided = await rig.until(
        lambda: rig.assistant.stops_heard != stops or rig.assistant.turns_started != turns + 1, 6.0
    )
    after = time.monotonic()
    stopped_word = rig.assistant.stops_heard != stops
    new_turn = rig.assistant.turns_started > turns + 1
    if new_turn:
        await asyncio.sleep(0.3)
        rig.assistant.interrupt()
        rig.device.tap.stop_listening()
    await rig.quiet()
    mic_start, mic = rig.echo.raw_between(said_at - 0.2, after)
    found = find_clip(mic, mic_start, clip)
    row: dict[str, Any] = {
        "kind": kind, "said": label, "over_voice": over_voice, "decided": decided,
        "stop_word": stopped_word, "new_turn": new_turn,
        "onsets": (rig.listener.onsets if rig.listener is not None else 0) - onsets,
        "outcome": rig.assistant.results[-1].outcome.value if rig.assistant.results else None,
    }
    if found is not None:
        onset = found[0] + speech_onset(clip)
        last = rig.plays.last_sound(started, after + 1.0)
        row["speech_at_s"] = round(onset - said_at, 3)
        if last is not None:
            row["time_to_silence_s"] = round(last - onset, 3)
    return row


async def heard_clean(rig: Rig, clip: np.ndarray) -> dict[str, Any]:
    """What hearth's reply listener makes of ``clip`` with nothing playing and no room (its decode of
    a short utterance, its n best read as it reads them): the baseline for the same words said
    over a reply."""
    from agent.listening.barge_in import ReplySettings
    from bench.echo.stop_words import as_the_listener_hears

    settings = ReplySettings()
    final, stop = await as_the_listener_hears(
        rig.assistant.deps.recognizer, clip, rig.language, settings.hypotheses, settings.stop_margin
    )
    return {"text": final.text, "stop": stop}


# --------------------------------------------------------------------------- clips


def _cache() -> Path:
    from bench.suites.audio import default_cache_dir

    path = default_cache_dir() / "bench-echo"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _level(samples: np.ndarray, rms: float) -> np.ndarray:
    frames = samples[: len(samples) // 160 * 160].reshape(-1, 160)
    energy = np.mean(frames.astype(np.float64) ** 2, axis=1)
    voiced = energy[energy > energy.max() * 1e-3]
    level = float(np.sqrt(np.mean(voiced))) if len(voiced) else 1.0
    return np.clip(samples * (rms / max(level, 1e-9)), -1, 1).astype(np.float32)


async def _request_clip(text: str, language: str) -> AudioChunk:
    """``text`` in hearth's bench voice (a request, given to the turn directly), 16 kHz."""
    from bench.suites.audio import RequestVoices

    return read_wav(await RequestVoices().path(text, language), RATE)


async def _voice_clip(text: str, language: str) -> tuple[Path, AudioChunk]:
    """``text`` said by the person (espeak-ng, a voice unlike hearth's) at :data:`USER_RMS`: its WAV and audio, 16 kHz."""
    path = _cache() / f"{hashlib.sha256(f'{text}|{USER_VOICE[language]}|{USER_RMS}'.encode()).hexdigest()[:16]}.wav"
    if not path.is_file():
        raw = path.with_suffix(".espeak.wav")
        # espeak-ng itself: hearth's synthesizer takes no voice variants ("+f3").
        process = await asyncio.create_subprocess_exec(
            "espeak-ng", "-v", USER_VOICE[language], "-s", "150", "-w", str(raw), text,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        _, err = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"espeak-ng {USER_VOICE[language]} {text!r}: {err.decode(errors='replace').strip()}")
        said = read_wav(raw, RATE).samples
        raw.unlink(missing_ok=True)
        samples = np.concatenate([np.zeros(int(0.2 * RATE), np.float32), _level(said, USER_RMS)])
        write_wav(path, AudioChunk(samples, RATE))
    return path, read_wav(path, RATE)


def _human_clips(count: int) -> list[tuple[str, Path, np.ndarray]]:
    from bench.echo.choice import human_clips

    out = []
    for clip_id, samples in human_clips()[:count]:
        samples = np.concatenate([np.zeros(int(0.2 * RATE), np.float32), _level(samples, USER_RMS)])
        path = _cache() / f"human-{clip_id}-{USER_RMS}.wav"
        if not path.is_file():
            write_wav(path, AudioChunk(samples, RATE))
        out.append((clip_id, path, read_wav(path, RATE).samples))
    return out


# --------------------------------------------------------------------------- the run


class _Heard(logging.Handler):
    """What the reply listener decoded over hearth (its log lines)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def run_language(language: str, args: argparse.Namespace) -> dict[str, Any]:
    rig = Rig(language, args.canceller, RoomSettings(), args.min_erle_db, args.keep_heard)
    await rig.open()
    heard = _Heard()
    logging.getLogger("agent.listening.barge_in").addHandler(heard)
    rows: dict[str, list[dict[str, Any]]] = {"warmup": [], "quiet": [], "stop": [], "human": []}
    try:
        t0 = time.monotonic()
        replies = REPLIES[language]
        rows["warmup"].append(await quiet_reply(rig, LONG[language]))
        log.info("%s warm-up: over voice %s, running ERLE %s", language, rig.device.ears.hears_over_voice, rig.echo.erle_db)
        quiet_n = args.quiet if language == "en" else args.quiet_ko
        stop_clips = [(w, await _voice_clip(w, language)) for w in STOP_WORDS[language]]
        clean = {w: await heard_clean(rig, clip.samples) for w, (_path, clip) in stop_clips}
        trials: list[tuple[str, Any]] = [("quiet", replies[i % len(replies)]) for i in range(quiet_n)]
        trials += [("stop", clip) for _ in range(args.stop_reps) for clip in stop_clips]
        if language == "en":
            trials += [("human", clip) for clip in _human_clips(args.human)]
        random.Random(16).shuffle(trials)
        steps = step_before(len(trials), args.path_steps)
        since_step: int | None = None
        for i, (kind, what) in enumerate(trials):
            if i in steps:
                by = args.step_ms if steps.index(i) % 2 == 0 else 0
                await asyncio.to_thread(rig.room.move, by)
                log.info("%s: the room's echo path stepped to %+d ms", language, by)
                since_step = 0
            if kind == "quiet":
                row = await quiet_reply(rig, what)
            elif kind == "stop":
                word, (path, clip) = what
                row = await spoken_over(rig, path, clip.samples, "stop", word)
                row["decoded"] = heard.lines[-3:]
            else:
                clip_id, path, samples = what
                row = await spoken_over(rig, path, samples, "human", clip_id)
                row["decoded"] = heard.lines[-3:]
            heard.lines.clear()
            row["after_step"] = since_step
            since_step = None if since_step is None else since_step + 1
            rows[kind].append(row)
            log.info("%s %d/%d %s: %s", language, i + 1, len(trials), kind, {k: v for k, v in row.items() if k != "decoded"})
        wall = time.monotonic() - t0
        return {
            "rows": rows,
            "heard_clean": clean,
            "wall_s": round(wall, 1),
            "delay_ms": round(1000 * rig.echo.reference.delay_at(time.monotonic()), 1),
            "drift_ppm": round(rig.echo.reference.drift_ppm, 1),
            "path_suspicions": rig.echo.path_suspicions,
            "cpu": {
                "filter_s": rig.echo.cpu_s, "audio_s": rig.echo.audio_s,
                "cancelling_cpu_s": rig.echo.cpu_cancelling_s, "cancelling_audio_s": rig.echo.audio_cancelling_s,
            },
        }
    finally:
        logging.getLogger("agent.listening.barge_in").removeHandler(heard)
        await rig.close()


def step_before(trials: int, steps: int) -> list[int]:
    """The trials before which the room's path steps: ``steps`` of them spread evenly, none before
    the first (the canceller has converged by then) and each with trials after it to be heard in."""
    if steps <= 0 or trials < 2:
        return []
    return sorted({1 + (trials - 1) * k // (steps + 1) for k in range(1, steps + 1)})


AFTER_STEP = 3
"""Trials after a path step counted as "just after" it in the summary."""


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _p90(values: list[float]) -> float | None:
    return round(float(np.percentile(values, 90)), 3) if values else None


def summarize(per_language: dict[str, dict[str, Any]]) -> dict[str, Any]:
    quiet = [r for lang in per_language.values() for r in lang["rows"]["quiet"]]
    spoken = [r for lang in per_language.values() for r in lang["rows"]["stop"] + lang["rows"]["human"]]
    erle = [r["erle_db"] for r in quiet if r.get("erle_db") is not None]
    silence = [max(0.0, r["time_to_silence_s"]) for r in spoken if "time_to_silence_s" in r]
    silence_human = [max(0.0, r["time_to_silence_s"]) for r in spoken if r["kind"] == "human" and "time_to_silence_s" in r]
    stop_heard: dict[str, Any] = {}
    for language, data in per_language.items():
        stops = data["rows"]["stop"]
        if stops:
            ok = sum(1 for r in stops if r["stop_word"] and not r["new_turn"])
            clean_words = {w for w, c in data.get("heard_clean", {}).items() if c["stop"]}
            clean_trials = [r for r in stops if r["said"] in clean_words]
            clean_ok = sum(1 for r in clean_trials if r["stop_word"] and not r["new_turn"])
            stop_heard[language] = {"heard": ok, "of": len(stops), "rate": round(ok / len(stops), 3),
                                    # the words the recognizer hears as stops with nothing playing: what
                                    # listening over the voice is answerable for
                                    "heard_clean": sorted(clean_words),
                                    "rate_of_heard_clean": round(clean_ok / len(clean_trials), 3) if clean_trials else None,
                                    "by_word": {w: f"{sum(1 for r in stops if r['said'] == w and r['stop_word'] and not r['new_turn'])}"
                                                   f"/{sum(1 for r in stops if r['said'] == w)}" for w in STOP_WORDS[language]}}
    human = [r for data in per_language.values() for r in data["rows"]["human"]]
    cpu = [d["cpu"] for d in per_language.values()]
    echo_rms = [r["echo_rms"] for r in quiet if r.get("echo_rms")]
    return {
        "erle_db": _median(erle),
        "erle_db_min": round(min(erle), 1) if erle else None,
        "erle_running_db": _median([r["erle_running_db"] for r in quiet if r.get("erle_running_db") is not None]),
        "false_barge_ins": sum(r["onsets"] for r in quiet),
        "false_barge_in_replies": len(quiet),
        "replies_cut_by_own_voice": sum(1 for r in quiet if r["outcome"] != "answered"),
        "time_to_silence_s": _median(silence),
        "time_to_silence_p90_s": _p90(silence),
        "time_to_silence_n": len(silence),
        "time_to_silence_human_s": _median(silence_human),
        "time_to_silence_human_n": len(silence_human),
        "stop_heard": stop_heard,
        "human_speech": {
            "trials": len(human),
            "became_request": sum(1 for r in human if r["new_turn"]),
            "taken_for_stop": sum(1 for r in human if r["stop_word"]),
        },
        "cpu_per_audio_s": round(sum(c["cancelling_cpu_s"] for c in cpu) / max(1e-9, sum(c["cancelling_audio_s"] for c in cpu)), 4),
        "cpu_per_audio_s_all": round(sum(c["filter_s"] for c in cpu) / max(1e-9, sum(c["audio_s"] for c in cpu)), 4),
        "voice_to_echo_db": round(20 * np.log10(USER_RMS / statistics.median(echo_rms)), 1) if echo_rms else None,
        "listening_over_voice": all(r["over_voice"] for r in quiet + spoken),
        "path_steps": _after_steps(quiet, spoken),
        "path_suspicions": {language: data["path_suspicions"] for language, data in per_language.items()},
    }


def _after_steps(quiet: list[dict[str, Any]], spoken: list[dict[str, Any]]) -> dict[str, Any]:
    """False barge-ins and stop words in the trials just after the room's path stepped, and elsewhere."""
    def near(r: dict[str, Any]) -> bool:
        return r.get("after_step") is not None and r["after_step"] < AFTER_STEP

    stops = [r for r in spoken if r["kind"] == "stop"]
    return {
        "after": AFTER_STEP,
        "replies_after": sum(1 for r in quiet if near(r)),
        "false_barge_ins_after": sum(r["onsets"] for r in quiet if near(r)),
        "stops_after": sum(1 for r in stops if near(r)),
        "stops_heard_after": sum(1 for r in stops if near(r) and r["stop_word"] and not r["new_turn"]),
    }


def main(argv: list[str] | None = None) -> int:
    global USER_RMS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", action="append", choices=["en", "ko"], help="default: en and ko")
    parser.add_argument("--quiet", type=int, default=50, help="English replies nobody talks over")
    parser.add_argument("--quiet-ko", type=int, default=6, help="Korean replies nobody talks over")
    parser.add_argument("--stop-reps", type=int, default=5, help="times each stop word is said over a reply")
    parser.add_argument("--human", type=int, default=8, help="en-human clips said over a reply")
    parser.add_argument("--canceller", default="speex", choices=["apm", "speex"], help="default: the configuration's")
    parser.add_argument("--min-erle-db", type=float, default=20.0)
    parser.add_argument("--voice-rms", type=float, default=USER_RMS, help="the person's level at the microphone (RMS)")
    parser.add_argument("--path-steps", type=int, default=0, help="times the room's echo path steps in each language")
    parser.add_argument("--step-ms", type=int, default=20, help="how far it steps (and back, every other time)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep-heard", type=Path, default=None, help="a folder for what was said over the replies, as heard (samples, WAV, transcript and n best)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    languages = args.language or ["en", "ko"]
    USER_RMS = args.voice_rms
    random.seed(16)
    per_language: dict[str, dict[str, Any]] = {}
    provenance = written_by("bench.echo.listening", argv)
    command = "python -m bench.echo " + " ".join(provenance["arguments"])
    for language in languages:
        per_language[language] = asyncio.run(run_language(language, args))
    report = {
        "written_by": provenance,
        "command": command.strip(),
        "machine": platform.machine(),
        "canceller": args.canceller,
        "room": RoomSettings().__dict__,
        "voice_rms": USER_RMS,
        **summarize(per_language),
        "per_language": {
            lang: {k: v for k, v in data.items() if k != "rows"} | {"rows": data["rows"]} for lang, data in per_language.items()
        },
    }
    out = args.out or RESULTS / f"echo-{platform.machine()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=float) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "per_language"}, indent=1, ensure_ascii=False, default=float))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
