"""``hearth mic-check``: whether hearth will hear the user from where they cook.

    hearth mic-check [--config FILE] [--device NAME] [--seconds S] [--language en|ko]

It opens the microphone ``hearth run`` uses (``audio.input_device``, or ``--device``), listens to
the kitchen as it usually is for ``--seconds`` while nobody speaks, then asks for a sentence said
from where the user cooks, finds the voice with the voice detector hearth listens with (Silero),
and says how far the voice stands over the noise, whether hearth will hear well from there, and
what would help.  A level meter shows what the microphone hears meanwhile.  When the recognizer
loads, it also shows what Whisper heard of the sentence.  The measuring is
:mod:`firmware_py.mic_check`; this module is the talking and listening around it.

Exit status: 0 hearth will hear well, 1 usable (with advice), 2 poor (or no voice heard), 3 the
microphone could not be opened or was lost, 4 the check could not run (the configuration, a bad
option value, or the voice detector's model missing).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import math
import sys
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from audio.levels import dbfs, finite_samples
from audio.protocols import AudioChunk, AudioDeviceError, Microphone, Recognizer, TurnAware, VoiceActivityDetector
from audio.wav import resample
from firmware_py.mic_check import (
    SAMPLE_RATE,
    VOICE_BAND_HZ,
    Floor,
    Thresholds,
    Verdict,
    Voice,
    channel_advice,
    channel_levels,
    frame_levels,
    judge,
    measure_floor,
    measure_voice,
)
from firmware_py.safe_text import printable

log = logging.getLogger(__name__)

SENTENCES = {"en": "Set a timer for ten minutes.", "ko": "타이머 십 분 맞춰 줘."}
"""What the user is asked to say: a short request of the kind hearth serves."""

SECONDS_RANGE = (1.0, 60.0)
"""``--seconds`` is held to this: under a second the floor's percentiles mean little, and a check
is not a recording."""

EXIT_NO_MICROPHONE = 3
EXIT_CANNOT_CHECK = 4


@dataclass(frozen=True)
class CheckSettings:
    """How long ``hearth mic-check`` listens, and to what."""

    floor_s: float = 5.0
    """The quiet spell the noise floor is measured over."""
    speak_s: float = 10.0
    """The longest it waits for the sentence, from the moment it asks for it."""
    end_silence_s: float = 1.0
    """Silence after the voice that ends the listening early: the sentence has been said."""
    ready_s: float = 3.0
    """Time to get to where one cooks once the check starts; what the microphone hears meanwhile
    (footsteps, and a stream's first moments, which can be silence or a click) is dropped."""
    language: str = "en"
    """The language the sentence is said in."""
    thresholds: Thresholds = Thresholds()
    """Where the verdict changes."""

    @classmethod
    def for_seconds(cls, seconds: float, language: str) -> CheckSettings:
        """``--seconds``: the quiet spell; the sentence may take twice that (at least 8 s)."""
        return cls(floor_s=seconds, speak_s=max(8.0, 2 * seconds), language=language)


@dataclass(frozen=True)
class Heard:
    """What Whisper made of the sentence."""

    text: str
    confidence: float | None = None
    """The decode's mean probability per token (exp of its mean log-probability); None when the
    recognizer does not give one."""


@dataclass(frozen=True)
class CheckResult:
    """What one check measured and said."""

    floor: Floor
    voice: Voice
    verdict: Verdict
    heard: Heard | str | None = None
    """What Whisper heard of the sentence, why it is not shown, or None when nothing was decoded."""
    quiet_at: tuple[int, int] = (0, 0)
    """Where the quiet spell lies in what the microphone gave, in samples from its first."""
    spoken_at: tuple[int, int] = (0, 0)
    """Where the sentence's listening lies, likewise."""


# --------------------------------------------------------------------------- the meter


METER_WIDTH = 40
METER_LOW_DBFS = -80.0
"""The meter runs from here (its left edge) to 0 dBFS (its right edge), 2 dB a cell."""


def meter_line(level_dbfs: float, peak_dbfs: float, floor_dbfs: float | None, clipped: bool, width: int = METER_WIDTH) -> str:
    """One line of the meter: a bar of the level in the voice band, ``|`` where the floor is, and
    ``!`` at the end with CLIP when a sample reached full scale."""

    def cell(level: float) -> int:
        return int(round(min(max((level - METER_LOW_DBFS) / -METER_LOW_DBFS, 0.0), 1.0) * width))

    bar = ["#"] * cell(level_dbfs) + [" "] * (width - cell(level_dbfs))
    if floor_dbfs is not None:
        bar[min(cell(floor_dbfs), width - 1)] = "|"
    return (f"  [{''.join(bar)}{'!' if clipped else ']'} {level_dbfs:4.0f} dBFS  peak {peak_dbfs:4.0f} dBFS"
            f"{'  CLIP' if clipped else ''}")


class Meter:
    """What the microphone hears, shown while the check listens: on a terminal one line redrawn in
    place ten times a second; otherwise (a log, a pipe) a plain line every second."""

    def __init__(self, out: TextIO, tty: bool, clip_level: float) -> None:
        self.out = out
        self.tty = tty
        self.clip_level = clip_level
        self.every = int((0.1 if tty else 1.0) * SAMPLE_RATE)
        self.floor_dbfs: float | None = None
        self._pending: list[np.ndarray] = []
        self._pending_n = 0
        self._heard = 0
        self._drawn = False

    def start(self, floor_dbfs: float | None) -> None:
        """A new spell of listening, with the floor to mark (None while it is being measured)."""
        self.floor_dbfs = floor_dbfs
        self._pending, self._pending_n, self._heard, self._drawn = [], 0, 0, False

    def feed(self, samples: np.ndarray) -> None:
        self._pending.append(samples)
        self._pending_n += len(samples)
        self._heard += len(samples)
        if self._pending_n >= self.every:
            self._draw(np.concatenate(self._pending))
            self._pending, self._pending_n = [], 0

    def _draw(self, samples: np.ndarray) -> None:
        powers = frame_levels(samples)
        level = float(dbfs(float(np.mean(powers)))) if len(powers) else float(dbfs(0.0))
        peak = float(np.max(np.abs(samples)))
        clipped = peak >= self.clip_level
        peak_dbfs = float(dbfs(peak * peak))
        if self.tty:
            # \x1b[K clears what a longer line before left on the right.
            self.out.write("\r" + meter_line(level, peak_dbfs, self.floor_dbfs, clipped) + "\x1b[K")
        else:
            self.out.write(f"  {self._heard / SAMPLE_RATE:4.1f} s  level {level:.0f} dBFS, peak {peak_dbfs:.0f} dBFS"
                           f"{', clipped' if clipped else ''}\n")
        self.out.flush()
        self._drawn = True

    def end(self) -> None:
        """The spell is over: the next line starts on a line of its own."""
        if self.tty and self._drawn:
            self.out.write("\n")
            self.out.flush()
        self._drawn = False


# --------------------------------------------------------------------------- listening


class _Source:
    """The microphone's chunks as 16 kHz samples, taken a stretch at a time, with no gap between
    stretches (what arrives past the end of one begins the next)."""

    def __init__(self, microphone: Microphone) -> None:
        self._chunks: AsyncIterator[AudioChunk] = microphone.chunks()
        self._left = np.zeros(0, np.float32)
        self.ended = False
        self.given = 0
        """Samples handed out so far (those put back not counted)."""

    async def next(self) -> np.ndarray:
        """The next piece; empty once the microphone has ended."""
        if len(self._left):
            piece, self._left = self._left, np.zeros(0, np.float32)
            self.given += len(piece)
            return piece
        try:
            chunk = await anext(self._chunks)
        except StopAsyncIteration:
            self.ended = True
            return np.zeros(0, np.float32)
        samples = finite_samples(chunk.samples)
        samples = resample(samples, chunk.sample_rate, SAMPLE_RATE) if chunk.sample_rate != SAMPLE_RATE else samples
        self.given += len(samples)
        return samples

    def put_back(self, samples: np.ndarray) -> None:
        self._left = np.concatenate([samples, self._left])
        self.given -= len(samples)

    async def take(self, n: int, meter: Meter | None = None) -> np.ndarray:
        """``n`` samples (fewer only if the microphone ends)."""
        got: list[np.ndarray] = []
        have = 0
        while have < n and not self.ended:
            piece = await self.next()
            if have + len(piece) > n:
                self.put_back(piece[n - have :])
                piece = piece[: n - have]
            got.append(piece)
            have += len(piece)
            if meter is not None:
                meter.feed(piece)
        return np.concatenate(got) if got else np.zeros(0, np.float32)

    async def close(self) -> None:
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:
            await aclose()


async def _listen_for_sentence(source: _Source, vad: VoiceActivityDetector, settings: CheckSettings, meter: Meter) -> np.ndarray:
    """What the microphone hears until the user has said something and then been quiet for
    ``end_silence_s``, or ``speak_s`` has passed."""
    vad.reset()
    limit = int(settings.speak_s * SAMPLE_RATE)
    enough = int(settings.thresholds.min_voice_s * SAMPLE_RATE)
    quiet_after = int(settings.end_silence_s * SAMPLE_RATE)
    got: list[np.ndarray] = []
    heard = voiced = 0
    opened: int | None = None
    last_end: int | None = None
    while heard < limit and not source.ended:
        piece = await source.next()
        piece = piece[: limit - heard]
        if not len(piece):
            continue
        got.append(piece)
        meter.feed(piece)
        heard += len(piece)
        for event in vad.accept(piece):
            if event.speech and opened is None:
                opened = event.sample
            elif not event.speech and opened is not None:
                voiced += event.sample - opened
                opened, last_end = None, event.sample
        if opened is None and last_end is not None and voiced >= enough and heard - last_end >= quiet_after:
            break
    return np.concatenate(got) if got else np.zeros(0, np.float32)


async def hear(recognizer: Recognizer, samples: np.ndarray) -> Heard:
    """Whisper's final decode of ``samples``, asked for its two best so that it scores them."""

    async def one(samples: np.ndarray) -> AsyncIterator[AudioChunk]:
        yield AudioChunk(samples, SAMPLE_RATE)

    final = None
    async for transcript in recognizer.transcribe(one(samples), "", hypotheses=2):
        if transcript.is_final:
            final = transcript
    if final is None:
        return Heard("")
    score = next((s for text, s in final.alternatives if text == final.text), None)
    return Heard(final.text, math.exp(score) if score is not None else None)


# --------------------------------------------------------------------------- the check


def report_lines(floor: Floor, voice: Voice, verdict: Verdict, heard: Heard | str | None, thresholds: Thresholds) -> list[str]:
    """The measurements, what Whisper heard (``heard``: its words, why they are not shown, or None
    when there was nothing to decode), the verdict and the advice, as printed."""
    low, high = VOICE_BAND_HZ
    lines = [
        f"Noise floor   {floor.mean_dbfs:4.0f} dBFS  on average over {floor.seconds:.1f} s, in the voice band ({low:.0f}-{high:.0f} Hz)",
        f"               over time {floor.p10_dbfs:.0f} / {floor.p50_dbfs:.0f} / {floor.p90_dbfs:.0f} dBFS (10th / 50th / 90th percentile)",
    ]
    if voice.level_dbfs is None or voice.snr_db is None:
        lines.append(f"Your voice    none heard (peak {voice.peak_dbfs:.0f} dBFS)")
    else:
        clipping = f"{voice.clipped_samples} samples clipped" if voice.clipped_samples else "no clipping"
        lines.append(f"Your voice    {voice.level_dbfs:4.0f} dBFS  over {voice.seconds:.1f} s of voice; "
                     f"peak {voice.peak_dbfs:.1f} dBFS, {clipping}")
        lines.append(f"SNR           {voice.snr_db:4.0f} dB    (good from {thresholds.good_snr_db:.0f} dB, "
                     f"usable from {thresholds.usable_snr_db:.0f} dB)")
    if isinstance(heard, Heard):
        confidence = f" (confidence {heard.confidence:.2f})" if heard.confidence is not None else ""
        lines.append(f"Whisper heard \"{printable(heard.text)}\"{confidence}" if heard.text else "Whisper heard nothing")
    elif heard:
        lines.append(f"Whisper heard (not shown: {printable(heard)})")
    lines += ["", verdict.summary]
    lines += [f"  - {line}" for line in verdict.advice]
    return lines


async def check(
    microphone: Microphone,
    vad: VoiceActivityDetector,
    settings: CheckSettings,
    out: TextIO,
    *,
    device: str,
    tty: bool | None = None,
    recognizer: Awaitable[Recognizer | str] | None = None,
) -> CheckResult:
    """The check on an open ``microphone``: the room, then the sentence; prints as it goes (its
    verdict's ``exit_status`` is the command's).  ``recognizer`` resolves to the recognizer, or to why
    there is none; None shows no transcript.  :class:`AudioDeviceError` from the microphone is the
    caller's."""
    tty = out.isatty() if tty is None else tty
    meter = Meter(out, tty, settings.thresholds.clip_level)
    source = _Source(microphone)
    sentence = SENTENCES[settings.language]
    try:
        print(f"hearth mic-check: listening on {device}.", file=out)
        print(f"Starting in {settings.ready_s:.0f} s: stand where you usually cook, with the kitchen as it is when you "
              "cook (the extractor fan on if it usually is).", file=out)
        out.flush()
        await source.take(int(settings.ready_s * SAMPLE_RATE))
        print(f"\n1/2  Quiet, please: say nothing for {settings.floor_s:g} s while hearth listens to the room.", file=out)
        out.flush()
        meter.start(None)
        quiet_from = source.given
        quiet = await source.take(int(settings.floor_s * SAMPLE_RATE), meter)
        quiet_at = (quiet_from, source.given)
        meter.end()
        if len(quiet) < 0.5 * settings.floor_s * SAMPLE_RATE:
            raise AudioDeviceError(f"{device} stopped sending audio after {len(quiet) / SAMPLE_RATE:.1f} s")
        floor = measure_floor(quiet, vad)
        log.info("noise floor: %s", floor)
        print(f"\n2/2  Now, from where you stand, say as you would ask hearth:  \"{sentence}\"", file=out)
        out.flush()
        meter.start(floor.mean_dbfs)
        if isinstance(microphone, TurnAware):
            microphone.turn_began()  # as a press does: an array's beam keeps the room as its noise, finds the voice
        spoken_from = source.given
        spoken = await _listen_for_sentence(source, vad, settings, meter)
        spoken_at = (spoken_from, spoken_from + len(spoken))
        meter.end()
    finally:
        await source.close()
    voice = measure_voice(spoken, vad, floor, settings.thresholds)
    log.info("voice: %s", voice)
    verdict = judge(floor, voice, settings.thresholds)
    heard: Heard | str | None = None
    if recognizer is not None and voice.span is None and inspect.iscoroutine(recognizer):
        recognizer.close()  # nothing to decode: never awaited, so closed here (a task is the caller's)
    elif recognizer is not None and voice.span is not None:
        loaded = await recognizer
        if isinstance(loaded, str):
            heard = loaded
        else:
            margin = int(0.3 * SAMPLE_RATE)
            start, end = voice.span
            try:
                heard = await hear(loaded, spoken[max(0, start - margin) : end + margin])
            except Exception as exc:  # noqa: BLE001 - what Whisper heard is a courtesy; the measurement stands
                log.warning("the recognizer failed on the sentence", exc_info=True)
                heard = f"the recognizer failed: {type(exc).__name__}: {exc}"
    print("", file=out)
    for line in report_lines(floor, voice, verdict, heard, settings.thresholds):
        print(line, file=out)
    out.flush()
    return CheckResult(floor, voice, verdict, heard, quiet_at, spoken_at)


# --------------------------------------------------------------------------- wiring


def device_name(device: str | int | None) -> str:
    return "the default input device" if device is None else f"input device {printable(str(device))!r}"


def open_microphone(config: Any) -> Any:
    """The microphone ``hearth run`` opens, not opened yet; an array's keeps its channels' audio
    (:class:`~audio.array_microphone.RecordingArray` as its source) for :func:`array_lines`."""
    from firmware_py.wiring import make_microphone, sound_settings

    settings, _ = sound_settings(config)
    return make_microphone(config, settings, keep_channels=True)


def array_lines(microphone: Any, result: CheckResult, thresholds: Thresholds) -> list[str]:
    """Each microphone of an array over the same quiet spell and sentence, and what is wrong with
    any of them; nothing for one microphone."""
    from audio.array_microphone import BeamformedMicrophone, RecordingArray

    if not isinstance(microphone, BeamformedMicrophone) or not isinstance(microphone.source, RecordingArray):
        return []
    if microphone.sample_rate != SAMPLE_RATE:
        return [f"(each microphone not measured: the array runs at {microphone.sample_rate} Hz)"]
    geometry = microphone.geometry
    captured = microphone.source.recorded()[:, list(geometry.mic_channels)]
    late = microphone.front_end.latency_samples  # the array's signal lags its channels by this much

    def span(at: tuple[int, int]) -> np.ndarray:
        return captured[max(0, at[0] - late) : max(0, at[1] - late)]

    quiet, spoken = span(result.quiet_at), span(result.spoken_at)
    if not len(quiet) or not len(spoken):
        return []
    levels = channel_levels(quiet, spoken, result.voice.span, geometry.mic_channels, thresholds)
    lines = ["", f"Each microphone of {geometry.name} ({geometry.count} on {geometry.capture_channels} channels):"]
    for lv in levels:
        voice = "no voice" if lv.voice_dbfs is None else f"voice {lv.voice_dbfs:4.0f} dBFS  SNR {lv.snr_db:4.0f} dB"
        lines.append(f"  channel {lv.channel}  floor {lv.floor_dbfs:4.0f} dBFS  {voice}  peak {lv.peak_dbfs:.1f} dBFS")
    best = max((lv.snr_db for lv in levels if lv.snr_db is not None), default=None)
    if best is not None and result.voice.snr_db is not None:
        lines.append(f"  what hearth hears ({microphone.front_end.name}): SNR {result.voice.snr_db:.0f} dB, "
                     f"{result.voice.snr_db - best:+.0f} dB on the best microphone alone")
    lines += [f"  - {line}" for line in channel_advice(levels)]
    return lines


def voice_detector(config: Any) -> VoiceActivityDetector:
    """The voice detector ``hearth run`` listens with, loaded; :class:`StartupError` (one line)
    when its model is missing or does not load."""
    from firmware_py.wiring import StartupError, load_failure, make_vad, model_store
    from models.store import ModelError

    store = model_store(config)
    try:
        store.require(["silero-vad"])
    except ModelError as exc:
        raise StartupError(str(exc)) from None
    vad = make_vad(config, store)
    try:
        vad.load()
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own kinds
        raise StartupError(load_failure(store, ["silero-vad"], exc)) from None
    return vad


async def load_recognizer(config: Any) -> Recognizer | str:
    """The configured recognizer, loaded (in a thread); or, when it cannot be, why not in a few words."""
    from firmware_py.wiring import asr_model, make_recognizer, model_store
    from models.store import ModelError

    store = model_store(config)
    name = asr_model(config)
    try:
        store.require([name])
        recognizer = make_recognizer(config, store)
        await asyncio.to_thread(recognizer.load)
    except ModelError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any runtime's failure only means no transcript is shown
        return f"{name} did not load: {' '.join(str(exc).split()) or type(exc).__name__}"
    return recognizer


def _device_override(value: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    # An index as PortAudio numbers them; a name otherwise (a name of digits would be odd).
    return {"audio.input_device": int(value) if value.strip().isdigit() else value}


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``hearth mic-check``: the exit status (see the module's docstring)."""
    from firmware_py.config import ConfigError, load_config
    from firmware_py.wiring import StartupError

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    seconds = args.seconds
    low, high = SECONDS_RANGE
    if not (math.isfinite(seconds) and low <= seconds <= high):
        print(f"hearth mic-check: --seconds must be from {low:.0f} to {high:.0f}, not {seconds}", file=err)
        return EXIT_CANNOT_CHECK
    overrides: dict[str, Any] = {**_device_override(args.device)}
    if args.language:
        overrides["language"] = args.language
    if getattr(args, "models_dir", None):
        overrides["models_dir"] = str(args.models_dir)
    try:
        config = load_config(args.config, overrides)
        vad = voice_detector(config)
    except (ConfigError, StartupError) as exc:
        print(f"hearth mic-check: {printable(str(exc))}", file=err)
        return EXIT_CANNOT_CHECK
    settings = CheckSettings.for_seconds(seconds, config.language)
    try:
        return asyncio.run(_run(config, vad, settings, out, err))
    except KeyboardInterrupt:
        print("\nhearth mic-check: stopped", file=err)
        return 130


async def _run(config: Any, vad: VoiceActivityDetector, settings: CheckSettings, out: TextIO, err: TextIO) -> int:
    from firmware_py.wiring import StartupError

    device = config.audio.input_device
    try:
        microphone = open_microphone(config)
    except StartupError as exc:
        print(f"hearth mic-check: {printable(str(exc))}", file=err)
        return EXIT_CANNOT_CHECK
    try:
        start = getattr(microphone, "start", None)
        if start is not None:
            await start()
    except AudioDeviceError as exc:
        # As ``hearth run`` says it: the device, and why.
        print(f"hearth: {printable(str(exc))}", file=err)
        return EXIT_NO_MICROPHONE
    loading = asyncio.ensure_future(load_recognizer(config))
    try:
        result = await check(microphone, vad, settings, out, device=device_name(device), recognizer=loading)
        for line in array_lines(microphone, result, settings.thresholds):
            print(line, file=out)
        return result.verdict.exit_status
    except AudioDeviceError as exc:
        print(f"\nhearth: {printable(str(exc))}", file=err)
        return EXIT_NO_MICROPHONE
    finally:
        if not loading.done():
            loading.cancel()
        await asyncio.gather(loading, return_exceptions=True)
        await microphone.close()
