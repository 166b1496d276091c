"""How well hearth will hear the user from where they cook: the measurements behind ``hearth
mic-check``, as pure functions over 16 kHz samples (the command's I/O is
:mod:`firmware_py.mic_check_cli`).

Three figures decide it.  The room's **noise floor**: the kitchen as it is when someone cooks
(the extractor fan, a tap, a radio), measured while nobody speaks.  The **voice's level**: the
power of the frames the voice detector calls speech.  And the **SNR** between them, the voice
over the floor, which decides how often Whisper mishears (the figures behind the thresholds are
in :class:`Thresholds`).  Levels are measured in the voice band only (:data:`VOICE_BAND_HZ`): a
fan's rumble under it and hiss over it count for less in what Whisper hears than their power
says.  The voice's power is measured with the room's noise under it, so the floor's power is
taken off before the ratio: the SNR of a voice exactly as loud as the noise is 0 dB, not 3 dB.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from audio.levels import band_power, dbfs, finite_samples
from audio.protocols import VoiceActivityDetector

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
FRAME = 512
"""Samples per measured frame: 32 ms, one window of the voice detector."""
VOICE_BAND_HZ = (150.0, 4000.0)
"""The band levels are measured in: above mains hum and most of an extractor fan's rumble, up to
where a voice's consonants still carry energy at 16 kHz."""
SNR_RANGE_DB = (-20.0, 60.0)
"""An SNR is reported within these bounds: below, the voice is lost in the noise whatever the
figure; above, the floor is digital silence (a muted input, or a microphone that gates its
own noise) and the ratio means nothing more."""


MEASURED_IN = "bench/results/kitchen-hear-en-x86_64.json"
"""Where the word error rates the check quotes come from: the offline hearing bench
(``python -m bench.kitchen.hear --suite en-kitchen --front-end none``, bench/kitchen/hear.py) at
commit :data:`MEASURED_AT`, Whisper tiny.en on 84 requests in the simulated kitchen ``kitchen-a``
(RT60 0.5 s, the user 2 m from the microphone); docs/hearing.md shows the whole table."""
MEASURED_AT = "77f6424"
MEASURED_WER: Mapping[str, float] = MappingProxyType({
    "clean": 4.0,   # the voice alone, no room: as a microphone at the mouth hears it
    "room": 7.8,    # from 2 m, the room's reverberation and no noise
    "fan@20": 10.6,
    "fan@10": 22.6,
    "fan@5": 32.4,
    "fan@0": 64.5,
    "tap@5": 48.8,
})
"""Word error rate in per cent, by the bench's condition (the noise and its SNR, heard from 2 m);
``tests/test_mic_figures.py`` checks each against :data:`MEASURED_IN`."""


@dataclass(frozen=True)
class Thresholds:
    """Where the verdict changes, and why there: the word error rates of :data:`MEASURED_WER`
    (Whisper tiny.en from 2 m in the simulated kitchen), 7.8 % in the room alone, 10.6 % over an
    extractor fan at 20 dB SNR, 22.6 % at 10 dB, 32.4 % at 5 dB and 64.5 % at 0 dB; 48.8 % over a
    running tap at 5 dB.
    """

    good_snr_db: float = 20.0
    """At or above: hearth hears well.  The noise is a hundredth of the voice's power, and over a
    fan at 20 dB about one word in ten was wrong (10.6 %), against 7.8 % in the room alone."""
    usable_snr_db: float = 10.0
    """At or above (and under ``good_snr_db``): hearth hears, but mishears more (22.6 % over a fan at
    10 dB).  Under it the errors climb: 32.4 % at 5 dB and 64.5 % at 0 dB over a fan, 48.8 % over a
    tap at 5 dB."""
    quiet_voice_dbfs: float = -40.0
    """A voice quieter than this (RMS of 0.01) uses under a hundredth of the converter's range:
    its quiet words sink towards the converter's own noise and the -60 dBFS under which hearth
    does not decode at all.  The input gain should go up."""
    clip_level: float = 0.99
    """A sample this close to full scale (-0.1 dBFS) counts as clipped: the gain is too high."""
    min_voice_s: float = 0.3
    """Less voice than this is a click or a knock, not the sentence: no voice was heard."""
    varying_db: float = 10.0
    """A floor whose 90th percentile is this far over its 10th comes and goes (a tap, a radio,
    talk) rather than humming steadily (a fan)."""
    mute_dbfs: float = -90.0
    """A floor under this is digital silence: no microphone in a real room is that quiet."""


@dataclass(frozen=True)
class Floor:
    """The room's noise in the voice band while nobody spoke."""

    seconds: float
    """How much of the room was measured."""
    mean_dbfs: float
    """The floor's average power, in dBFS: what the SNR is measured against."""
    p10_dbfs: float
    """The level over time (one value per 32 ms frame): its 10th percentile, the quiet moments;"""
    p50_dbfs: float
    """its median;"""
    p90_dbfs: float
    """and its 90th percentile, the loud moments."""
    voice_s: float = 0.0
    """Speech the voice detector found in the quiet spell (a radio or someone talking counts: hearth
    would hear it while the user cooks too)."""

    @property
    def spread_db(self) -> float:
        """How far the loud moments are over the quiet ones."""
        return self.p90_dbfs - self.p10_dbfs


@dataclass(frozen=True)
class Voice:
    """The user's voice as the microphone got it, and how far it stands over the floor."""

    seconds: float
    """Audio the voice detector called speech."""
    level_dbfs: float | None
    """The voice-active frames' power in the voice band (the room's noise under it included), in
    dBFS; None when no voice was found."""
    snr_db: float | None
    """The voice's power (the floor's taken off) over the floor's, in dB, within
    :data:`SNR_RANGE_DB`; None when no voice was found."""
    peak_dbfs: float
    """The loudest sample (of the voice, when one was found; else of everything heard)."""
    clipped_samples: int
    """Samples at or past :attr:`Thresholds.clip_level`."""
    span: tuple[int, int] | None = None
    """Sample offsets from the first voice-active frame to the end of the last; None without voice."""


@dataclass(frozen=True)
class Verdict:
    """What the check says: how well hearth will hear from there, and what would help."""

    hearing: str
    """"good", "usable" or "poor"."""
    summary: str
    """One sentence, plain."""
    advice: tuple[str, ...] = ()
    """What would help, most useful first, each specific to what was measured."""

    @property
    def exit_status(self) -> int:
        """0 good, 1 usable (with advice), 2 poor."""
        return {"good": 0, "usable": 1, "poor": 2}[self.hearing]


def frame_levels(samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """The mean power in the voice band of each 32 ms frame of ``samples`` (a part frame left out)."""
    low, high = VOICE_BAND_HZ
    return band_power(samples, sample_rate, FRAME * sample_rate // SAMPLE_RATE, low, high)


def voice_frames(samples: np.ndarray, vad: VoiceActivityDetector) -> np.ndarray:
    """Which 32 ms frames of ``samples`` the voice detector calls speech (a frame counts when its
    middle lies inside a stretch of speech).  The detector is reset first, and flushed after when
    it can be, so a stretch still open at the end runs to the end."""
    vad.reset()
    events = []
    for start in range(0, len(samples), FRAME):
        events += vad.accept(samples[start : start + FRAME])
    flush = getattr(vad, "flush", None)
    if callable(flush):
        events += flush()
    n = len(samples) // FRAME
    middles = np.arange(n) * FRAME + FRAME // 2
    mask = np.zeros(n, dtype=bool)
    opened: int | None = None
    for event in events:
        if event.speech and opened is None:
            opened = event.sample
        elif not event.speech and opened is not None:
            mask |= (middles >= opened) & (middles < event.sample)
            opened = None
    if opened is not None:
        mask |= middles >= opened
    return mask


def measure_floor(samples: np.ndarray, vad: VoiceActivityDetector | None = None) -> Floor:
    """The room's noise floor from ``samples`` (16 kHz) recorded while nobody spoke; with ``vad``,
    also how much of it sounded like speech."""
    samples = finite_samples(samples)
    powers = frame_levels(samples)
    if len(powers) == 0:
        raise ValueError("no audio to measure the noise floor on")
    levels = dbfs(powers)
    p10, p50, p90 = (float(v) for v in np.percentile(levels, [10, 50, 90]))
    voice_s = float(np.sum(voice_frames(samples, vad))) * FRAME / SAMPLE_RATE if vad is not None else 0.0
    return Floor(
        seconds=len(samples) / SAMPLE_RATE,
        mean_dbfs=float(dbfs(float(np.mean(powers)))),
        p10_dbfs=p10,
        p50_dbfs=p50,
        p90_dbfs=p90,
        voice_s=voice_s,
    )


def snr_db(voice_power: float, floor_power: float) -> float:
    """The voice over the floor, in dB: ``voice_power`` (measured with the floor under it) less
    the floor's, over the floor's, held within :data:`SNR_RANGE_DB`."""
    low, high = SNR_RANGE_DB
    floor_power = max(floor_power, 1e-12)
    excess = voice_power / floor_power - 1.0
    if excess <= 10 ** (low / 10):
        return low
    return min(high, 10.0 * math.log10(excess))


def measure_voice(
    samples: np.ndarray, vad: VoiceActivityDetector, floor: Floor, thresholds: Thresholds = Thresholds()
) -> Voice:
    """The voice in ``samples`` (16 kHz, the user saying the sentence): its level over the frames
    ``vad`` calls speech, its peak and clipping, and its SNR over ``floor``."""
    samples = finite_samples(samples)
    active = voice_frames(samples, vad)
    seconds = float(np.sum(active)) * FRAME / SAMPLE_RATE
    if seconds < thresholds.min_voice_s:
        peak = float(np.max(np.abs(samples))) if len(samples) else 0.0
        return Voice(seconds, None, None, _peak_dbfs(peak), int(np.sum(np.abs(samples) >= thresholds.clip_level)))
    powers = frame_levels(samples)[: len(active)]
    voice_power = float(np.mean(powers[active]))
    which = np.flatnonzero(active)
    # The peak is the voice's (a frame either side for its edges): a pot dropped while the user
    # was quiet says nothing about the gain their voice needs.
    start, end = max(0, (which[0] - 1) * FRAME), min(len(samples), (which[-1] + 2) * FRAME)
    spoken = np.abs(samples[start:end])
    return Voice(
        seconds=seconds,
        level_dbfs=float(dbfs(voice_power)),
        snr_db=snr_db(voice_power, 10 ** (floor.mean_dbfs / 10)),
        peak_dbfs=_peak_dbfs(float(np.max(spoken))),
        clipped_samples=int(np.sum(spoken >= thresholds.clip_level)),
        span=(int(which[0] * FRAME), int((which[-1] + 1) * FRAME)),
    )


def _peak_dbfs(peak: float) -> float:
    return float(dbfs(peak * peak))


def judge(floor: Floor, voice: Voice, thresholds: Thresholds = Thresholds()) -> Verdict:
    """How well hearth will hear from where the sentence was said, and what would help."""
    t = thresholds
    if voice.snr_db is None or voice.level_dbfs is None:
        advice = [
            "Say the sentence aloud from where you cook, as you would ask hearth, once the check asks for it.",
            "If you did: check that this is the microphone hearth listens on (--device, or audio.input_device in "
            "the configuration; `python -m sounddevice` lists them) and that it is not muted.",
        ]
        if floor.p50_dbfs < t.mute_dbfs:
            advice.insert(0, f"The microphone gave near silence throughout (the room at {floor.p50_dbfs:.0f} dBFS; "
                             "a real room is never that quiet): it is muted, its gain is at zero, or it is not this input.")
        return Verdict("poor", "hearth heard no voice: it cannot tell how well it would hear you.", tuple(advice))

    snr, level = voice.snr_db, voice.level_dbfs
    hearing = "good" if snr >= t.good_snr_db else "usable" if snr >= t.usable_snr_db else "poor"
    advice: list[str] = []
    if snr < t.good_snr_db:
        needed = t.good_snr_db - snr
        closer = 10 ** (needed / 20)
        advice.append(
            f"Move hearth's microphone closer to where you cook: your voice is {snr:.0f} dB over the noise and {t.good_snr_db:.0f} dB "
            f"hears well, {needed:.0f} dB more; each halving of the distance gives about 6 dB, so about "
            f"{_times(closer)} closer."
        )
        advice.append(_away_from_noise(floor, t))
        advice.append(
            "A better microphone: a USB speakerphone with its own echo cancelling and noise reduction is the usual choice "
            f"for a voice satellite. Choose it by the SNR it gives where you cook (run this check again with it): "
            f"{t.good_snr_db:.0f} dB or more hears well."
        )
    if floor.voice_s >= t.min_voice_s:
        advice.append(
            f"hearth heard a voice for {floor.voice_s:.1f} s while the kitchen was to be quiet: a radio or television "
            "that talks while you cook is heard as speech too, and words of it may be taken for yours."
        )
    if level < t.quiet_voice_dbfs:
        if hearing == "good":
            hearing = "usable"
        advice.append(
            f"Turn the input gain up: your voice came in at {level:.0f} dBFS, under {t.quiet_voice_dbfs:.0f} dBFS "
            "(alsamixer, F4 for the capture controls, or the desktop's sound settings). Gain raises the noise "
            "with the voice: it helps the level, not the SNR."
        )
    if voice.clipped_samples:
        if hearing == "good":
            hearing = "usable"
        advice.append(
            f"Turn the input gain down: your voice reached full scale ({voice.clipped_samples} samples clipped, peak "
            f"{voice.peak_dbfs:.1f} dBFS), and a clipped voice is distorted. Aim for peaks under -6 dBFS."
        )
    wer = MEASURED_WER
    summary = {
        "good": "Good: hearth will hear you well from there.",
        "usable": ("Usable: hearth will hear you from there, but it will mishear you more often than it should "
                   f"(over a fan at 10 dB, {wer['fan@10']:.1f} % of words wrong, against {wer['room']:.1f} % with no noise)."),
        "poor": ("Poor: hearth will mishear much of what you say from there (over a fan, "
                 f"{wer['fan@5']:.1f} % of words wrong at 5 dB and {wer['fan@0']:.1f} % at 0 dB)."),
    }[hearing]
    return Verdict(hearing, summary, tuple(advice))


def _times(factor: float) -> str:
    """A distance factor as said: "a third" reads better as "3 times"."""
    return f"{factor:.1f} times" if factor < 3 else f"{factor:.0f} times"


def _away_from_noise(floor: Floor, t: Thresholds) -> str:
    if floor.spread_db >= t.varying_db:
        return (
            f"Or away from the noise: it came and went (its loud moments {floor.spread_db:.0f} dB over its quiet ones), "
            "as a running tap, a radio or talk does; put hearth away from the sink and the radio, or turn them down "
            "while you ask."
        )
    return (
        f"Or away from the noise: it was steady (at {floor.p50_dbfs:.0f} dBFS, its loud moments {floor.spread_db:.0f} dB "
        "over its quiet ones), as an extractor fan is; put hearth away from the hood, or turn the fan down while you ask."
    )


# --------------------------------------------------------------------------- an array, channel by channel


@dataclass(frozen=True)
class ChannelLevels:
    """One microphone of an array, over the same quiet spell and the same sentence."""

    channel: int
    """The captured channel."""
    floor_dbfs: float
    """Its noise floor in the voice band."""
    voice_dbfs: float | None
    """Its level over the frames the voice was found in (on the array's own signal); None without voice."""
    snr_db: float | None
    """The voice over its floor."""
    peak_dbfs: float
    clipped_samples: int


def channel_levels(
    quiet: np.ndarray, spoken: np.ndarray, voice_span: tuple[int, int] | None, channels: tuple[int, ...],
    thresholds: Thresholds = Thresholds(),
) -> list[ChannelLevels]:
    """Each microphone's floor over ``quiet`` and voice over ``voice_span`` of ``spoken`` (both
    ``(samples, microphones)``; the span is where the voice was found on the array's signal)."""
    levels = []
    for index, channel in enumerate(channels):
        floor_power = float(np.mean(frame_levels(finite_samples(quiet[:, index]))))
        samples = finite_samples(spoken[:, index])
        voice_db = snr = None
        if voice_span is not None and voice_span[1] - voice_span[0] >= FRAME:
            voice_power = float(np.mean(frame_levels(samples[voice_span[0] : voice_span[1]])))
            voice_db, snr = float(dbfs(voice_power)), snr_db(voice_power, floor_power)
        peak = float(np.max(np.abs(samples))) if len(samples) else 0.0
        levels.append(ChannelLevels(channel, float(dbfs(floor_power)), voice_db, snr, _peak_dbfs(peak),
                                    int(np.sum(np.abs(samples) >= thresholds.clip_level))))
    return levels


DEAD_BELOW_DB = 15.0
"""A microphone whose floor is this far under the others' median hears nothing: unplugged, or dead."""
MUFFLED_BELOW_DB = 6.0
"""A microphone that hears the voice this far under the others' median is covered, or set lower."""


def channel_advice(levels: list[ChannelLevels]) -> list[str]:
    """What is wrong with single microphones of the array, if anything."""
    advice = []
    floors = float(np.median([lv.floor_dbfs for lv in levels]))
    voices = [lv.voice_dbfs for lv in levels if lv.voice_dbfs is not None]
    voice_median = float(np.median(voices)) if voices else None
    for lv in levels:
        if lv.floor_dbfs < floors - DEAD_BELOW_DB:
            advice.append(f"Channel {lv.channel} hears almost nothing ({lv.floor_dbfs:.0f} dBFS against {floors:.0f}): "
                          "its microphone is unplugged or dead, or the channel is not a microphone (check audio.array).")
        elif voice_median is not None and lv.voice_dbfs is not None and lv.voice_dbfs < voice_median - MUFFLED_BELOW_DB:
            advice.append(f"Channel {lv.channel} hears your voice {voice_median - lv.voice_dbfs:.0f} dB quieter than the others: "
                          "something covers its microphone, or its gain is set lower.")
        if lv.clipped_samples:
            advice.append(f"Channel {lv.channel} clipped {lv.clipped_samples} samples: turn the array's gain down.")
    return advice
