"""Spoken requests for the benchmarks, synthesized reproducibly and cached (synthetic speech, labelled as such).

English is spoken by hearth's piper voice (en_US-joe-medium), Korean by Kokoro's jm_kumo (a man's voice,
not hearth's own Korean voice, jf_nezumi, so hearth hears someone else); both are resampled to
16 kHz mono with 0.4 s of silence in front, as a microphone picks up after a button press.  Each request
is cached as ``<cache>/bench-audio/<sha256(text|voice)[:16]>.wav`` (``<cache>`` is ``$XDG_CACHE_HOME/hearth``,
else ``~/.cache/hearth``), so a run re-uses exactly the audio of the run before.

    python -m bench.suites.audio --suite en-kitchen --suite ko-kitchen   # make a suite's audio ahead of a run
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import hashlib
import logging
import os
import sys
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

from audio.kokoro_tts import KokoroSettings, KokoroSynthesizer
from audio.piper_tts import PiperSettings, PiperSynthesizer
from audio.protocols import AudioChunk, Synthesizer
from audio.wav import resample, write_wav
from bench.suites.scenarios import load_suite, resolve_audio
from bench.suites.schema import PAUSE_MARK, Scenario, Suite, SuiteError
from models.store import default_models_dir

logger = logging.getLogger(__name__)

LEAD_SILENCE_S = 0.4
RATE = 16000
VOICES = {"en": "piper en_US-joe-medium", "ko": "kokoro-82m-ja jm_kumo"}
"""The voice each language's requests are spoken in; part of the cache key."""
KOREAN_REQUEST_VOICE = "jm_kumo"

T = TypeVar("T")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hearth``, else ``~/.cache/hearth``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "hearth"


@dataclass(frozen=True)
class AudioSettings:
    """Where the voices are and where request audio is cached."""

    models_dir: Path = field(default_factory=default_models_dir)
    """The models directory holding ``piper-en-joe`` and ``espeak-ng``."""
    cache_dir: Path = field(default_factory=default_cache_dir)
    """hearth's cache directory; request audio goes in its ``bench-audio`` folder."""


def audio_key(text: str, voice: str) -> str:
    return hashlib.sha256(f"{text}|{voice}".encode("utf-8")).hexdigest()[:16]


def cached_audio_path(text: str, language: str, settings: AudioSettings | None = None) -> Path:
    """Where the audio of ``text`` spoken in ``language``'s voice is (or will be) cached."""
    settings = settings or AudioSettings()
    return settings.cache_dir / "bench-audio" / f"{audio_key(text, voice_of(language))}.wav"


def voice_of(language: str) -> str:
    try:
        return VOICES[language]
    except KeyError:
        raise ValueError(f"no benchmark voice for language {language!r} (known: {', '.join(VOICES)})") from None


async def speak(synth: Synthesizer, text: str) -> AudioChunk:
    """``text`` spoken by ``synth``, at 16 kHz with the lead silence in front.

    A ``[pause S]`` mark is spoken as a comma, so the voice keeps the rising pitch of a
    sentence that goes on, and the short gap the voice leaves there is stretched to S seconds:
    a hesitation in the middle of a request, not two requests.
    """
    marks = [(m.start(), float(m.group(1))) for m in PAUSE_MARK.finditer(text)]
    spoken = PAUSE_MARK.sub(", ", text) if marks else text
    pieces = [chunk async for chunk in synth.synthesize(spoken)]
    if not pieces:
        raise ValueError(f"the voice produced no audio for {text!r}")
    rate = pieces[0].sample_rate
    audio = resample(np.concatenate([p.samples for p in pieces]), rate, RATE)
    if marks:
        audio = stretch_pauses(audio, [(at / len(text), seconds) for at, seconds in marks])
    audio = np.concatenate([np.zeros(int(LEAD_SILENCE_S * RATE), np.float32), audio])
    return AudioChunk(audio, RATE)


def speech_frames(audio: np.ndarray, rate: int = RATE, below_db: float = -40.0) -> np.ndarray:
    """Which 10 ms frames are voice: louder than the loudest frame less ``below_db``."""
    frame = rate // 100
    n = len(audio) // frame
    if n == 0:
        return np.zeros(0, dtype=bool)
    rms = np.sqrt(np.mean(np.square(audio[: n * frame].reshape(n, frame).astype(np.float64)), axis=1))
    return rms > rms.max() * 10 ** (below_db / 20)


def quiet_gaps(audio: np.ndarray, rate: int = RATE, min_s: float = 0.04) -> list[tuple[int, int]]:
    """The quiet stretches inside the speech (not before or after it), as (start, end) samples."""
    frame = rate // 100
    loud = speech_frames(audio, rate)
    voiced = np.flatnonzero(loud)
    gaps: list[tuple[int, int]] = []
    start = None
    for i in range(voiced[0], voiced[-1] + 1) if len(voiced) else ():
        if not loud[i] and start is None:
            start = i
        elif loud[i] and start is not None:
            if (i - start) * frame >= min_s * rate:
                gaps.append((start * frame, i * frame))
            start = None
    return gaps


def stretch_pauses(audio: np.ndarray, pauses: list[tuple[float, float]], rate: int = RATE) -> np.ndarray:
    """Lengthen, for each (position as a share of the text, seconds), the quiet gap nearest to it."""
    gaps = quiet_gaps(audio, rate)
    if not gaps:
        raise ValueError("the voice left no gap where a pause is marked")
    voiced = np.flatnonzero(speech_frames(audio, rate)) * (rate // 100)
    chosen: dict[int, float] = {}
    for share, seconds in pauses:
        target = voiced[0] + share * (voiced[-1] - voiced[0])
        nearest = min(range(len(gaps)), key=lambda g: abs((gaps[g][0] + gaps[g][1]) / 2 - target))
        chosen[nearest] = seconds
    out, at = [], 0
    for index in sorted(chosen):
        start, end = gaps[index]
        middle = (start + end) // 2
        out += [audio[at:middle], np.zeros(max(0, int(chosen[index] * rate) - (end - start)), np.float32)]
        at = middle
    out.append(audio[at:])
    return np.concatenate(out).astype(np.float32)


def make_synthesizer(language: str, models_dir: Path) -> Synthesizer:
    """The benchmark voice of ``language`` (not loaded yet)."""
    voice_of(language)
    if language == "ko":
        return KokoroSynthesizer(KokoroSettings(model_dir=models_dir / "kokoro-82m-ja", voice=KOREAN_REQUEST_VOICE))
    return PiperSynthesizer(
        PiperSettings(voice_dir=models_dir / "piper-en-joe", espeak_bridge=models_dir / "espeak-ng" / "espeakbridge.so")
    )


# Loaded voices, kept for the process: scenario_audio() runs each synthesis in a fresh event loop, and
# loading the piper voice costs about a second.  A voice holds no loop-bound state between calls.
_LOADED: dict[tuple[str, Path], Synthesizer] = {}
_LOADED_LOCK = threading.Lock()


class RequestVoices:
    """Synthesizes requests into the cache, loading each language's voice the first time it is needed."""

    def __init__(self, settings: AudioSettings | None = None) -> None:
        self.settings = settings or AudioSettings()

    async def _voice(self, language: str) -> Synthesizer:
        key = (language, self.settings.models_dir)
        with _LOADED_LOCK:
            voice = _LOADED.get(key)
        if voice is None:
            voice = make_synthesizer(language, self.settings.models_dir)
            await voice.load()
            with _LOADED_LOCK:
                voice = _LOADED.setdefault(key, voice)
        return voice

    async def path(self, text: str, language: str) -> Path:
        """The cached audio of ``text``, synthesized first if it is not cached yet."""
        target = cached_audio_path(text, language, self.settings)
        if target.is_file():
            return target
        audio = await speak(await self._voice(language), text)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.stem}.{os.getpid()}.part")
        try:
            write_wav(partial, audio)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        logger.debug("synthesized %s: %r", target.name, text)
        return target


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def scenario_audio(text: str, language: str, settings: AudioSettings | None = None) -> Path:
    """The synthetic audio of a request: cached, else synthesized now (about a second to load a voice)."""
    target = cached_audio_path(text, language, settings)
    if target.is_file():
        return target
    return _run(RequestVoices(settings).path(text, language))


def turn_audio(suite: Suite, scenario: Scenario, settings: AudioSettings | None = None) -> list[Path]:
    """The audio of each turn of a scenario: its recording or synthesized text, then each follow-up's."""
    settings = settings or AudioSettings()
    first = (
        resolve_audio(scenario, models_dir=settings.models_dir)
        if scenario.audio is not None
        else scenario_audio(scenario.text, suite.language, settings)
    )
    return [first, *(scenario_audio(f.text, suite.language, settings) for f in scenario.followups)]


def suite_texts(suite: Suite) -> list[str]:
    """Every text of the suite that is synthesized (recorded scenarios' own turns are not), without repeats."""
    texts: list[str] = []
    for scenario in suite.scenarios:
        turns = ([] if scenario.audio is not None else [scenario.text]) + [f.text for f in scenario.followups]
        texts += [t for t in turns if t not in texts]
    return texts


async def prepare_suite_audio(suite: Suite, settings: AudioSettings | None = None, progress: bool | None = None) -> int:
    """Make every turn's audio of ``suite`` (recordings fetched, texts synthesized); returns how many were made."""
    settings = settings or AudioSettings()
    voices = RequestVoices(settings)
    texts = suite_texts(suite)
    missing = [t for t in texts if not cached_audio_path(t, suite.language, settings).is_file()]
    recorded = [s for s in suite.scenarios if s.audio is not None]
    disable = None if progress is None else not progress
    with tqdm(total=len(missing) + len(recorded), desc=suite.suite, unit="req", file=sys.stderr, disable=disable) as bar:
        for scenario in recorded:
            await asyncio.to_thread(resolve_audio, scenario, models_dir=settings.models_dir)
            bar.update(1)
        for text in missing:
            await voices.path(text, suite.language)
            bar.update(1)
    return len(missing)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", required=True, help="suite name or YAML file (repeatable)")
    parser.add_argument("--models-dir", type=Path, default=None, help="default: $HEARTH_MODELS_DIR or ~/.local/share/hearth/models")
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: $XDG_CACHE_HOME/hearth or ~/.cache/hearth")
    args = parser.parse_args(None if argv is None else list(argv))
    logging.basicConfig(level=logging.WARNING)
    defaults = AudioSettings()
    settings = AudioSettings(models_dir=args.models_dir or defaults.models_dir, cache_dir=args.cache_dir or defaults.cache_dir)
    try:
        suites = [load_suite(name) for name in args.suite]
    except SuiteError as exc:
        print(f"bench.suites.audio: {exc}", file=sys.stderr)
        return 2
    for suite in suites:
        made = asyncio.run(prepare_suite_audio(suite, settings, progress=True))
        print(f"{suite.suite}: {len(suite.scenarios)} scenarios, {made} requests synthesized "
              f"({VOICES[suite.language]}), cache {settings.cache_dir / 'bench-audio'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
