"""A request heard in a kitchen: conditions by name, and the microphone's signal for each.

A condition is a name on the command line:

- ``clean``: the request as synthesized (only its level set);
- ``room``: the request from the user's place in the room (reverberation, no noise);
- ``KIND@SNR``: the room, and a kitchen sound (:data:`bench.kitchen.noises.NOISES`) from its own
  spot, ``SNR`` dB below the speech (``fan@10``, ``tap@5``, ``radio@0``);
- ``noise-only:KIND@SNR``: that sound alone, at the level it has under ``KIND@SNR``, and no
  request: nothing should start a turn or act.

The mix: the request convolved with the talker's response, the sound with its spot's, the sound
scaled so that the SNR measured over the request's speech (the clean request's voiced frames, not
what a detector finds in the noisy sum) is the one asked (an impulsive sound's level over the
whole excerpt), and the sum scaled so the speech sits at −26 dBFS there, as a microphone's gain
would set it.  The sound runs through the request's lead-in and goes on for ``trailing_s`` after
it: a kitchen does not fall silent when the user stops.  The clean request's start and end of
speech, moved by the sound's flight to the microphone, stay with the audio, so latency counts from
the real end of speech.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from audio.array import ArrayGeometry
from bench.kitchen.noises import NOISES, RATE
from bench.kitchen.rooms import DEFAULT_ROOM, RoomPreset, direct_delay_s, impulse_responses, room_preset

log = logging.getLogger(__name__)

SPEECH_DBFS = -26.0
"""The speech's level at the microphone, over its voiced frames."""
TRAILING_S = 2.0
"""Sound after the request, as the loop's microphone plays after a recording."""
NOISE_ONLY_S = 6.5
"""Shortest noise-only excerpt: the loop gives up on a press with no speech after 6 s."""
BEFORE_PRESS_S = 3.0
"""An array's take starts with this much of the kitchen alone: the array is read all the time, so
its front end has heard the kitchen before the user presses."""
VOICED_BELOW_DB = -40.0
"""A 10 ms frame of the clean request is voiced when louder than its loudest frame less this."""

_CONDITION = re.compile(r"^(?:(?P<only>noise-only):)?(?P<kind>[a-z]+)(?:@(?P<snr>-?\d+(?:\.\d+)?))?$")


class ConditionError(ValueError):
    """A condition name that does not parse; the message says why in one line."""


@dataclass(frozen=True)
class Condition:
    """How a request is heard."""

    name: str
    """As written on the command line (``fan@10``)."""
    room: bool
    """Heard from the user's place in the room (else as synthesized)."""
    noise: str | None = None
    """The kitchen sound, or None."""
    snr_db: float | None = None
    """Speech over the sound, dB, over the request's voiced frames."""
    speech: bool = True
    """False for ``noise-only:``: the sound alone."""


def _known() -> str:
    return "clean, room, KIND@SNR or noise-only:KIND@SNR with KIND one of " + ", ".join(NOISES)


def parse_condition(text: str) -> Condition:
    """``clean``, ``room``, ``fan@10``, ``noise-only:fan@10``; :class:`ConditionError` otherwise."""
    match = _CONDITION.match(text.strip())
    if match is None:
        raise ConditionError(f"kitchen condition {text!r} is not {_known()}")
    kind, snr, only = match["kind"], match["snr"], bool(match["only"])
    if kind in ("clean", "room") and snr is None and not only:
        return Condition(kind, room=kind == "room")
    if kind not in NOISES:
        raise ConditionError(f"kitchen condition {text!r}: no sound {kind!r} ({_known()})")
    if snr is None:
        raise ConditionError(f"kitchen condition {text!r}: give the speech-to-noise ratio in dB, e.g. {kind}@10")
    value = float(snr)
    if not -30 <= value <= 60:
        raise ConditionError(f"kitchen condition {text!r}: an SNR of {value:g} dB is outside -30 to 60")
    name = f"{'noise-only:' if only else ''}{kind}@{value:g}"
    return Condition(name, room=True, noise=kind, snr_db=value, speech=not only)


def parse_conditions(texts: list[str] | tuple[str, ...]) -> tuple[Condition, ...]:
    """Every condition of a command line, in order, each once."""
    conditions = tuple(parse_condition(t) for t in texts)
    names = [c.name for c in conditions]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConditionError(f"kitchen condition {', '.join(repeated)} given twice")
    if not conditions:
        raise ConditionError(f"no kitchen condition given ({_known()})")
    return conditions


@dataclass(frozen=True)
class KitchenAudio:
    """What the microphone hears of one request under one condition."""

    samples: np.ndarray
    """The microphone's signal, 16 kHz, held to [-1, 1] as a converter would."""
    speech: np.ndarray
    """The speech's share of it (zeros for noise-only), scaled as in ``samples``."""
    noise: np.ndarray
    """The sound's share of it (zeros without one)."""
    voiced: np.ndarray
    """Per sample: the clean request speaks here (moved by the flight to the microphone)."""
    speech_start_s: float | None
    """Where the clean request's speech starts in ``samples`` (None for noise-only)."""
    speech_end_s: float | None
    """Where it ends: the real end of speech."""
    delay_s: float
    """The direct sound's flight from the user's mouth to the microphone."""
    clipped: int = 0
    """Samples beyond full scale, held."""


def voiced_frames(request: np.ndarray, rate: int = RATE) -> np.ndarray:
    """Per sample of the clean request: inside a voiced 10 ms frame."""
    from bench.suites.audio import speech_frames

    frame = rate // 100
    loud = speech_frames(request, rate, VOICED_BELOW_DB)
    mask = np.repeat(loud, frame)
    return np.concatenate([mask, np.zeros(len(request) - len(mask), bool)])


def _power(x: np.ndarray, where: np.ndarray) -> float:
    x = x if x.ndim == 1 else x[:, 0]  # an array's level is its first microphone's
    picked = x[where] if where.any() else x
    return float(np.mean(np.square(picked))) if len(picked) else 0.0


def mix(
    request: np.ndarray, condition: Condition, *, speech_rir: np.ndarray | None, noise_rir: np.ndarray | None,
    dry_noise: np.ndarray | None, impulsive: bool = False, delay_s: float = 0.0, trailing_s: float = TRAILING_S,
    before_s: float = 0.0,
) -> KitchenAudio:
    """The request heard under ``condition`` (responses and the dry sound given: this does no I/O).

    ``dry_noise`` must be at least as long as the result plus ``noise_rir``: its first
    ``len(noise_rir)`` samples are dropped, so the room is already full of the sound at sample 0.
    Responses of shape ``(microphones, samples)`` make an array's take: ``samples`` and its parts
    are then ``(samples, microphones)``, levels and the SNR set on the first microphone.
    ``before_s`` of the kitchen's sound alone come first (what an array hears before the press).
    """
    request = np.asarray(request, dtype=np.float64)
    if not voiced_frames(request).any():
        raise ValueError("the request has no voiced frame")
    request = np.concatenate([np.zeros(int(round(before_s * RATE))), request])
    voiced_dry = voiced_frames(request)
    length = len(request) + int(round(trailing_s * RATE))
    if not condition.speech:
        length = max(length, int(NOISE_ONLY_S * RATE))
    shift = int(round(delay_s * RATE)) if condition.room else 0
    speech = _fft_convolve(request, speech_rir) if condition.room and speech_rir is not None else request.copy()
    speech = _fit(speech, length)
    channels = noise_rir.shape[0] if noise_rir is not None and noise_rir.ndim == 2 else None
    if speech.ndim == 1 and channels is not None:  # the dry request heard alike by every microphone
        speech = np.repeat(speech[:, None], channels, axis=1)
    voiced = _fit(np.concatenate([np.zeros(shift, bool), voiced_dry]), length)
    speech_power = _power(speech, voiced)
    noise = np.zeros(speech.shape)
    if condition.noise is not None:
        if dry_noise is None or noise_rir is None:
            raise ValueError(f"{condition.name} needs a sound and its spot's response")
        lead = noise_rir.shape[-1]
        if len(dry_noise) < length + lead:
            raise ValueError(f"the dry sound is {len(dry_noise)} samples; {length + lead} are needed")
        wet = _fft_convolve(dry_noise[: length + lead], noise_rir)[lead : lead + length]
        noise_power = _power(wet, np.ones(length, bool) if impulsive else voiced)
        assert condition.snr_db is not None
        if noise_power > 0:
            noise = wet * np.sqrt(speech_power / noise_power / 10 ** (condition.snr_db / 10))
    gain = 10 ** (SPEECH_DBFS / 20) / np.sqrt(speech_power)
    speech, noise = speech * gain, noise * gain
    if not condition.speech:
        speech = np.zeros(speech.shape)
    total = speech + noise
    clipped = int(np.count_nonzero(np.abs(total) > 1.0))
    indices = np.flatnonzero(voiced_dry)
    start = (indices[0] + shift) / RATE if condition.speech else None
    end = (indices[-1] + 1 + shift) / RATE if condition.speech else None
    return KitchenAudio(
        np.clip(total, -1.0, 1.0).astype(np.float32), speech.astype(np.float32), noise.astype(np.float32), voiced,
        start, end, shift / RATE, clipped,
    )


def _fit(x: np.ndarray, length: int) -> np.ndarray:
    if len(x) >= length:
        return x[:length]
    return np.concatenate([x, np.zeros((length - len(x), *x.shape[1:]), x.dtype)])


def _fft_convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``x`` through ``h``; a ``(microphones, samples)`` response gives ``(samples, microphones)``."""
    from scipy.signal import fftconvolve

    if h.ndim == 1:
        return fftconvolve(x, h)
    return fftconvolve(x[None, :], h, axes=1).T


def noise_seed(seed: int, kind: str, request: np.ndarray) -> np.random.Generator:
    """A generator for the sound under one request: the same seed, sound and request give the same
    excerpt, and different requests different excerpts."""
    digest = hashlib.sha256(f"{seed}|{kind}|".encode() + np.asarray(request, np.float32).tobytes()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def kitchen_audio(
    request: np.ndarray, condition: Condition, room: RoomPreset | None = None, seed: int = 0,
    trailing_s: float = TRAILING_S, cache_dir: Path | None = None, max_order: int | None = None,
    mics: tuple[tuple[float, float, float], ...] | None = None, before_s: float = 0.0,
) -> KitchenAudio:
    """The request heard under ``condition`` in ``room`` (default ``kitchen-a``), its sound seeded by ``seed``.

    With ``mics`` (an array's positions around the room's microphone) it is the array's take,
    ``(samples, microphones)``; ``clean`` is then the dry request on every microphone.
    """
    room = room or room_preset(DEFAULT_ROOM)
    if not condition.room:
        heard = mix(request, condition, speech_rir=None, noise_rir=None, dry_noise=None, trailing_s=trailing_s, before_s=before_s)
        if mics is None:
            return heard
        return replace(heard, samples=np.repeat(heard.samples[:, None], len(mics), axis=1),
                       speech=np.repeat(heard.speech[:, None], len(mics), axis=1), noise=np.zeros((len(heard.noise), len(mics)), np.float32))
    responses = impulse_responses(room, cache_dir, max_order, mics)
    kind = NOISES[condition.noise] if condition.noise is not None else None
    dry = None
    if kind is not None:
        length = max(len(request) + int(round((trailing_s + before_s) * RATE)), int((NOISE_ONLY_S + before_s) * RATE))
        dry = kind.make(length + responses[kind.spot].shape[-1] + 1, noise_seed(seed, kind.name, request))
    return mix(
        request, condition, speech_rir=responses["talker"], noise_rir=responses[kind.spot] if kind else None,
        dry_noise=dry, impulsive=bool(kind and kind.impulsive), delay_s=direct_delay_s(room, room.talker), trailing_s=trailing_s,
        before_s=before_s,
    )


@dataclass(frozen=True)
class KitchenTake:
    """One request under one condition, written out for the loop to play."""

    path: Path
    """The microphone's signal as a 16-bit WAV."""
    condition: Condition
    """How it was heard."""
    speech_start_s: float | None
    """The clean request's start of speech in it."""
    speech_end_s: float | None
    """The clean request's end of speech in it: latency counts from here."""
    delay_s: float
    """The flight from the mouth to the microphone."""
    clipped: int = 0
    """Samples held at full scale."""
    extra: dict[str, object] = field(default_factory=dict)
    """The room and seed, for the record."""
    before_s: float = 0.0
    """An array's take: seconds of the kitchen alone at the file's start, heard before the press.
    The speech's times count from the press, after them."""


def take_path(
    request_path: Path, condition: Condition, room: RoomPreset, seed: int, trailing_s: float, cache_dir: Path,
    array: ArrayGeometry | None = None, before_s: float = 0.0,
) -> Path:
    """Where the take is cached: by the request's bytes and everything that shapes the sound."""
    shape = {"condition": asdict(condition), "room": asdict(room), "seed": seed, "trailing_s": trailing_s, "version": 1}
    if array is not None:
        shape |= {"array": asdict(array), "before_s": before_s}
    key = hashlib.sha256(request_path.read_bytes() + json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir / "bench-kitchen" / f"{key}.wav"


def kitchen_take(
    request_path: Path, condition: Condition, room: RoomPreset, seed: int, cache_dir: Path, trailing_s: float = TRAILING_S,
    array: ArrayGeometry | None = None, before_s: float = BEFORE_PRESS_S,
) -> KitchenTake:
    """The request at ``request_path`` under ``condition``: made (and cached) on first need.

    With ``array`` the take is the array's capture: a WAV of its ``capture_channels`` (loopback
    channels silent), each microphone on its channel, ``before_s`` of the kitchen first.
    """
    from audio.wav import read_wav, write_wav_channels

    before_s = before_s if array is not None else 0.0
    path = take_path(request_path, condition, room, seed, trailing_s, cache_dir, array, before_s)
    meta_path = path.with_suffix(".json")
    if not (path.is_file() and meta_path.is_file()):
        heard = kitchen_audio(read_wav(request_path, RATE).samples, condition, room, seed, trailing_s, cache_dir,
                              mics=array.mics if array is not None else None, before_s=before_s)
        samples = heard.samples[:, None]
        if array is not None:
            samples = np.zeros((len(heard.samples), array.capture_channels), np.float32)
            samples[:, list(array.mic_channels)] = heard.samples
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.part")
        try:
            write_wav_channels(partial, samples, RATE)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)

        def from_press(t: float | None) -> float | None:
            return None if t is None else round(t - before_s, 6)

        meta = {"speech_start_s": from_press(heard.speech_start_s), "speech_end_s": from_press(heard.speech_end_s),
                "delay_s": heard.delay_s, "clipped": heard.clipped}
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    extra: dict[str, object] = {"room": room.name, "seed": seed} | ({"array": array.name} if array is not None else {})
    return KitchenTake(path, condition, meta["speech_start_s"], meta["speech_end_s"], meta["delay_s"], meta["clipped"],
                       extra, before_s)
