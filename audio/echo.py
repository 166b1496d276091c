"""Echo cancellation: hearing the user over hearth's own voice.

:class:`EchoFilter` takes the microphone chunk by chunk with the monotonic time each was captured,
resamples it to 16 kHz, cuts it into 10 ms frames (keeping what is left over for the next chunk),
takes the far-end reference for the same moment from :class:`FarEndReference` (what the speaker
played, moved by the measured DAC-to-microphone delay), and hands both to an
:class:`EchoCanceller`.  While nothing has played for longer than the room's tail the microphone
passes through untouched (only as late as the canceller's own output, ``latency`` samples, so the
cleaned stream stays continuous when the canceller starts and stops).

It keeps a running ERLE (echo return loss enhancement: how much quieter the cleaned signal is
than the microphone), the median of the frames' own figures over frames where the reference is
sounding and the microphone is not louder than the echo alone would make it, so near-end speech
does not count against the canceller.  Speech that is not that much louder (a user as loud at the
microphone as hearth's echo) is only known to the listener that heard it: it tells the filter
(:meth:`EchoFilter.near_end_began`, :meth:`EchoFilter.near_end_ended`), and those frames are
taken out of the figures, the ones already counted included.
:meth:`EchoFilter.working` says whether that figure reaches the configured minimum.

The echo path can move while hearth talks (a sound card's latency steps after an underrun).  The
reference's second-long measurements find that after three of them; meanwhile the canceller,
aligned to the old delay, leaves far more echo than its figures say.  So every 25 ms of far-end
audio a quick check correlates the last 0.2 s of microphone with the reference near the tracked
delay: two in a row agreeing on another delay, where the echo no longer comes at the tracked one,
and the figures are set aside (:attr:`EchoFilter.path_suspect`: the guard expects all of the
echo); four, and the track moves there and the canceller starts again.  The speaker's blocks
breaking off (an underrun, with which a latency often steps) sets the figures aside the same way,
until a check or a measurement finds the echo where it was tracked.  A smaller step (up to
``restart_s``), as an underrun or a loaded sound server leaves, is followed once two checks agree
on it, the canceller kept: the whole path moved, and its filter fits again.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import soxr

from audio.echo_cancellers import ApmCanceller, SpeexCanceller
from audio.echo_reference import CountedClock, FarEndReference, ReferenceSettings
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)

RATE = 16000
FRAME = 160

__all__ = [
    "ApmCanceller",
    "EchoCanceller",
    "EchoFilter",
    "EchoSettings",
    "FarEndReference",
    "ReferenceSettings",
    "SpeexCanceller",
    "make_canceller",
    "CANCELLERS",
]


class EchoCanceller(Protocol):
    """Removes the far end from the near end, one frame at a time."""

    sample_rate: int
    """16000."""
    frame: int
    """Samples per frame: 160 (10 ms)."""

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        """The cleaned microphone frame (float32), given the microphone and the aligned reference frames."""
        ...

    def reset(self) -> None: ...


CANCELLERS = ("apm", "speex")
DEFAULT_CANCELLER = "speex"
"""Chosen by bench/echo/choice.py: it keeps the user's words over hearth's voice (Whisper's WER on
them 21 % against APM's 59 %) with 42 dB of ERLE once converged."""


def make_canceller(kind: str = DEFAULT_CANCELLER) -> EchoCanceller:
    """``"speex"`` (speexdsp: pyaec's copy where it is built, else the system's libspeexdsp; the
    default) or ``"apm"`` (WebRTC's AEC3, from livekit)."""
    if kind == "apm":
        return ApmCanceller()
    if kind == "speex":
        return SpeexCanceller()
    raise ValueError(f"unknown echo canceller {kind!r}: choose one of {', '.join(CANCELLERS)}")


@dataclass(frozen=True)
class EchoSettings:
    """How the echo filter runs and when it counts as working."""

    min_erle_db: float = 20.0
    """ERLE the canceller must reach for :meth:`EchoFilter.working`."""
    erle_window_s: float = 3.0
    """The ERLE is taken over the last this-many seconds of frames where the far end sounded."""
    min_erle_s: float = 1.0
    """No ERLE is reported before this much far-end audio was heard."""
    tail_s: float = 0.3
    """After the reference falls silent the canceller keeps running this long (the room's tail);
    later the microphone passes through untouched."""
    far_floor_rms: float = 0.001
    """A reference frame quieter than this (about -60 dBFS) counts as silence."""
    echo_floor_rms: float = 0.003
    """Frames whose microphone is quieter than this are left out of the ERLE (noise, not echo)."""
    near_end_margin_db: float = 6.0
    """A frame whose microphone is this much louder than the echo path's usual gain predicts is
    suspected near-end speech and left out of the ERLE."""
    lead_s: float = 0.002
    """The reference reaches the canceller this much ahead of its echo, so that a delay estimate
    a little long still leaves the echo path causal."""
    realign_s: float = 0.0
    """The reference offset follows the tracked delay only when they differ by more than this.
    0: always, by fractions of a sample (the reference is interpolated), which let speexdsp keep
    38 dB under 100 ppm of drift where whole-sample steps every 0.5 ms left it 16 dB."""
    restart_s: float = 0.01
    """A realignment larger than this restarts the canceller (its adapted filter no longer fits)."""
    measure_window_s: float = 1.0
    """Microphone audio correlated with the reference per delay measurement."""
    measure_every_s: float = 0.5
    """How often a delay measurement is tried while the far end sounds."""
    check_window_s: float = 0.2
    """Microphone audio per quick check of the delay, searched only near the tracked one: a
    measurement takes a second of audio and three to move the track, and on the bench's room the
    canceller's residual after a 20 ms step took the reply's first syllable as the user's voice."""
    check_every_s: float = 0.025
    """How often a quick check is tried while the far end sounds."""
    check_reach_s: float = 0.06
    """How far from the tracked delay a quick check searches."""
    suspect_checks: int = 2
    """This many quick checks in a row agreeing on a delay more than ``restart_s`` from the
    tracked one, and the figures are set aside: the guard expects all of the echo."""
    confirm_checks: int = 4
    """This many, and the track moves there (the canceller starts again)."""
    step_tolerance_s: float = 0.0002
    """Quick checks agreeing that the echo comes further than this from the tracked delay, but
    within ``restart_s``, step the track there, the canceller kept (see :meth:`EchoFilter._step`)."""
    step_checks: int = 2
    """How many quick checks in a row must agree on such a step."""
    clock_tolerance_s: float = 0.05
    """A chunk stamped within this of where the stream's own sample count puts it (after the
    stamps' slow drift, below) continues it; further off (samples were lost), the stream starts
    again from its stamp.  PortAudio's capture stamps through PulseAudio jitter by ±22 ms."""
    clock_gain: float = 0.02
    """Share of each chunk's stamp error taken into the running estimate of the stamps' drift
    from the sample count.  The time line itself is the sample count: stamps that moved it, even
    by a 2 % share, wobbled the echo by a fraction of a millisecond, and speexdsp's filter lost
    half its ERLE (the delay tracker follows the real drift between the clocks instead)."""


class EchoFilter:
    """The microphone, cleaned of what the speaker played (see the module doc)."""

    def __init__(self, canceller: EchoCanceller, reference: FarEndReference, settings: EchoSettings | None = None) -> None:
        self.canceller = canceller
        self.reference = reference
        self.settings = settings or EchoSettings()
        self.latency = int(getattr(canceller, "latency", 0))
        """Samples (16 kHz) by which the output trails the microphone, cancelled or passed through."""
        self._window_frames = round(self.settings.erle_window_s * RATE / FRAME)
        self._measure_n = round(self.settings.measure_window_s * RATE)
        self._measure_every = round(self.settings.measure_every_s * RATE)
        self.reset()

    def reset(self) -> None:
        """Forget the stream, the statistics and the canceller's adaptation (the reference is the speaker's)."""
        self.canceller.reset()
        self._rate = 0
        self._resampler: soxr.ResampleStream | None = None
        self._clock = CountedClock(self.settings.clock_tolerance_s, self.settings.clock_gain)
        self._pending = np.zeros(0, np.float32)
        self._t = 0.0  # microphone time of self._pending[0]
        self._applied: float | None = None  # delay - lead: how far back the reference is read
        self._quiet_frames = 10**9
        self._frames: deque[tuple[float, float]] = deque(maxlen=self._window_frames)  # (time, per-frame ERLE dB)
        self._ratios: deque[tuple[float, float]] = deque(maxlen=self._window_frames)  # (time, mic / far energy)
        self._near_end = False
        self._far_level = 0.0
        self._measure_buf = np.zeros(0, np.float32)
        self._measure_t = 0.0
        self._since_measure = 0
        self._since_check = 0
        self._moved: list[tuple[float, float]] = []  # quick checks in a row off the track: (time, delay)
        self._runs_broken = self.reference.runs_broken
        self._stepped: list[tuple[float, float]] = []  # quick checks in a row off the track by a little: (time, delay)
        self._held: list[tuple[float, float]] = []  # the figures set aside while the path is suspect
        self.path_suspect = False
        """Quick checks say the echo path moved and the canceller is not yet on it: no figures."""
        self.path_suspicions = 0
        """How often that was said (by the quick checks, or because the speaker's blocks broke off)."""
        self.path_steps = 0
        """How often the track stepped a little, the canceller kept (:meth:`_step`)."""
        self._bypass_tail = np.zeros(self.latency, np.float32)
        self._chunk_far_e = 0.0
        self.frames_cancelled = 0
        """Frames that went through the canceller (the rest passed untouched)."""
        self.far_rms = 0.0
        """RMS of the reference lined up with the audio the last :meth:`clean` returned (0.0: silent)."""

    # ---- the microphone's clock

    def _stamp(self, captured_at: float, n: int, rate: int) -> None:
        if not self._clock.continues(captured_at, n / rate, rate == self._rate):
            if self._clock.last_error is not None and rate == self._rate:
                log.info("the microphone's chunks broke off (stamped %+.1f ms from their count)", self._clock.last_error * 1e3)
            self._rate = rate
            self._resampler = soxr.ResampleStream(rate, RATE, 1, dtype="float32") if rate != RATE else None
            self._pending = np.zeros(0, np.float32)
            self._measure_buf = np.zeros(0, np.float32)
            self._t = captured_at

    # ---- cleaning

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk:
        """The cleaned 16 kHz audio of the whole frames available so far (the remainder waits for the next chunk)."""
        samples = np.asarray(chunk.samples, np.float32).reshape(-1)
        self._stamp(captured_at, len(samples), chunk.sample_rate)
        if self._resampler is not None:
            samples = np.asarray(self._resampler.resample_chunk(samples), np.float32)
        self._measure(samples)
        pending = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        whole = len(pending) // FRAME * FRAME
        out = np.empty(whole, np.float32)
        self._chunk_far_e = 0.0
        for i in range(0, whole, FRAME):
            out[i : i + FRAME] = self._frame(pending[i : i + FRAME], self._t)
            self._t += FRAME / RATE
        self._pending = pending[whole:].copy()
        if whole:
            self.far_rms = float(np.sqrt(self._chunk_far_e / (whole // FRAME)))
        return AudioChunk(out, RATE)

    def _measure(self, samples: np.ndarray) -> None:
        """Feed the delay measurement, which correlates the last second of microphone with the reference."""
        buf_end_t = self._t + len(self._pending) / RATE  # time of samples[0]
        if len(self._measure_buf) == 0:
            self._measure_t = buf_end_t
        buf = np.concatenate([self._measure_buf, samples])
        if len(buf) > self._measure_n:
            cut = len(buf) - self._measure_n
            buf = buf[cut:]
            self._measure_t = buf_end_t + len(samples) / RATE - len(buf) / RATE
        self._measure_buf = buf
        self._since_measure += len(samples)
        if self._since_measure >= self._measure_every and len(buf) == self._measure_n:
            self._since_measure = 0
            delay = self.reference.measure(buf, self._measure_t)
            if delay is not None:
                log.debug("echo delay measured: %.1f ms (drift %.0f ppm)", delay * 1e3, self.reference.drift_ppm)
                if (self.path_suspect and not self._stepped
                        and abs(delay - self.reference.delay_at(self._measure_t + len(buf) / (2 * RATE))) <= self.settings.restart_s):
                    self._path_holds(delay)
        if self.reference.runs_broken != self._runs_broken:
            # An underrun: the reference's new run is placed by its stamp, and a sound card's
            # latency often steps with it (bursts of them came with two of the bench room's steps).
            self._runs_broken = self.reference.runs_broken
            if self.reference.delay_measured and not self.path_suspect:
                self._suspect("the speaker's blocks broke off: the guard expects all of the echo until it is found again")
        self._since_check += len(samples)
        n = round(self.settings.check_window_s * RATE)
        if self._since_check >= round(self.settings.check_every_s * RATE) and len(buf) >= n:
            self._since_check = 0
            self._check(buf[-n:], self._measure_t + (len(buf) - n) / RATE)

    def _check(self, mic: np.ndarray, start: float) -> None:
        """A quick look whether the echo still comes when the track says (see ``check_window_s``)."""
        s = self.settings
        delay = self.reference.check_near(mic, start, s.check_reach_s, s.restart_s)
        if delay is None:
            return
        t = start + len(mic) / (2 * RATE)
        tracked = self.reference.delay_at(t)
        began = self.reference.run_began
        if began is not None and start < began + tracked:
            return  # the window still hears blocks from before the speaker's last break: it says nothing of now
        if abs(delay - tracked) <= s.restart_s:
            self._moved.clear()
            if self._step(t, delay, tracked) and self.path_suspect:
                self._path_holds(self.reference.delay_at(t))
            return
        if self._moved and (abs(delay - self._moved[-1][1]) > self.reference.settings.outlier_s or t - self._moved[-1][0] > 0.5):
            self._moved.clear()
        self._moved.append((t, delay))
        if len(self._moved) >= s.suspect_checks and not self.path_suspect:
            self._suspect(f"the echo seems to come at {delay * 1e3:.1f} ms, not {tracked * 1e3:.1f} ms: the guard expects all of it")
        if len(self._moved) >= s.confirm_checks:
            self.reference.moved_to(self._moved)  # _frame restarts the canceller on the new delay
            self._moved = []

    def _step(self, t: float, delay: float, tracked: float) -> bool:
        """Whether the echo comes where the track says, within ``step_tolerance_s``; once
        ``step_checks`` quick checks in a row agree it comes a little off (a step within
        ``restart_s``), the track steps there and it does again.

        A step this small is no new room: the whole echo path moved, so the filter adapted before
        it fits again once the reference is read that much earlier or later, and the canceller is
        kept.  Such steps come with underruns: the speaker's new run is placed by its first
        block's DAC stamp, and the stamps of the blocks PortAudio writes to refill the buffer lag
        their count.  On the PulseAudio room one underrun left the echo 2.4 ms off the tracked
        delay, too little for a restart and the measurements' outlier test, too much for
        speexdsp, whose ERLE fell from 26 dB to 14 for the rest of the reply; a 0.7 ms step with
        no underrun seen took it to 7 dB for half a second."""
        s = self.settings
        if abs(delay - tracked) <= s.step_tolerance_s:
            self._stepped.clear()
            return True
        if self._stepped and (abs(delay - self._stepped[-1][1]) > 4 * s.step_tolerance_s or t - self._stepped[-1][0] > 0.5):
            self._stepped.clear()  # not the same place: count again
        self._stepped.append((t, delay))
        if len(self._stepped) < s.step_checks:
            return False
        to = float(np.median([d for _, d in self._stepped]))
        log.info("the echo comes at %.2f ms, not %.2f ms: the reference is read there, the canceller kept", to * 1e3, tracked * 1e3)
        self.reference.step_to(to, t)
        self.path_steps += 1
        self._stepped.clear()
        return True

    def _suspect(self, why: str) -> None:
        log.info("%s", why)
        self.path_suspect = True
        self.path_suspicions += 1
        self._held = list(self._frames)
        self._frames.clear()

    def _path_holds(self, delay: float) -> None:
        log.info("the echo path is where it was tracked (%.1f ms) after all", delay * 1e3)
        self._frames.extend(self._held)  # the same filter's: they stand again (none counted meanwhile)
        self._held = []
        self.path_suspect = False

    def _frame(self, near: np.ndarray, t: float) -> np.ndarray:
        s = self.settings
        target = self.reference.delay_at(t) - s.lead_s  # later audio: the reference leads its echo
        if self._applied is None or abs(target - self._applied) > s.realign_s:
            if self._applied is not None and abs(target - self._applied) > s.restart_s:
                log.info("the echo delay moved by %.1f ms: the canceller starts again", (target - self._applied) * 1e3)
                self.canceller.reset()  # what it adapted to no longer lines up
                # Its figures were the old filter's: until the new one is measured the guard
                # expects all of the echo (after a 12 ms step on the bench's room the old 20-40 dB
                # stood for seconds while the fresh filter left 8-15, and its residual took onsets).
                self._frames.clear()
                self._held = []
                self.path_suspect = False  # the new filter's frames are measured afresh
            self._applied = target
        far = self.reference.played_at(t - self._applied, FRAME)
        far_rms = float(np.sqrt(np.mean(far**2)))
        self._chunk_far_e += far_rms**2
        if far_rms >= s.far_floor_rms:
            self._quiet_frames = 0
        else:
            self._quiet_frames += 1
        if self._quiet_frames * FRAME / RATE > s.tail_s:
            self._far_level = 0.0
            if not self.latency:
                return near
            # untouched, but as late as the canceller's output would be, so the stream stays continuous
            joined = np.concatenate([self._bypass_tail, near])
            self._bypass_tail = joined[FRAME:]
            return joined[:FRAME]
        self._bypass_tail = near[FRAME - self.latency :] if self.latency else self._bypass_tail
        cleaned = np.asarray(self.canceller.process(near, far), np.float32)
        self.frames_cancelled += 1
        self._count(near, cleaned, far_rms, t)
        return cleaned

    def _count(self, near: np.ndarray, cleaned: np.ndarray, far_rms: float, t: float) -> None:
        """Add the frame to the ERLE if the far end sounds and no near-end speech is suspected."""
        s = self.settings
        # the echo lasts the room's tail: the far end's level decays slowly rather than with each frame
        self._far_level = max(far_rms**2, self._far_level * 0.85)
        if far_rms < s.far_floor_rms or self._near_end or self.path_suspect:
            return
        mic_e = float(np.mean(near.astype(np.float64) ** 2))
        if mic_e < s.echo_floor_rms**2:
            return
        ratio = mic_e / max(self._far_level, 1e-12)
        self._ratios.append((t, ratio))
        usual = float(np.median([r for _, r in self._ratios]))
        if len(self._ratios) >= 20 and ratio > usual * 10 ** (s.near_end_margin_db / 10):
            return
        out_e = float(np.mean(cleaned.astype(np.float64) ** 2))
        self._frames.append((t, 10 * np.log10(mic_e / max(out_e, 1e-12))))

    # ---- what the listener knows of the near end

    def near_end_began(self, lookback_s: float) -> None:
        """The user has been speaking for about ``lookback_s`` up to the audio just cleaned: those
        frames leave the figures, and no frame counts until :meth:`near_end_ended`.

        The filter's own test misses a user no louder at the microphone than hearth's echo, and
        each such frame would read as the canceller leaving the user's voice behind: a few stop
        words in a row took the worse frames' ERLE from 29 to 10 dB on the bench's room, and with
        it the listener's guard up to where the next "잠깐" was not heard at all."""
        self._near_end = True
        since = self._t - self.latency / RATE - max(0.0, lookback_s)
        for figures in (self._frames, self._ratios):
            while figures and figures[-1][0] >= since:
                figures.pop()

    def near_end_ended(self) -> None:
        """The user's speech has ended: frames count again."""
        self._near_end = False

    # ---- how well it works

    @property
    def erle_db(self) -> float | None:
        """ERLE over the recent far-end frames (dB): the median of the frames' own figures, which
        the user talking over part of them does not drag down (an energy total is ruled by its
        loudest frames, and undetected near-end speech is among them); None until ``min_erle_s``
        of them were heard."""
        return self._erle_percentile(50)

    @property
    def erle_worst_db(self) -> float | None:
        """The ERLE of the canceller's worse frames: the 10th percentile of the same frames as
        :attr:`erle_db` (dB).  The listener's guard expects this much residual: while speexdsp is
        still converging the median already reads 26-30 dB and one frame in ten leaves ten times
        more of hearth's voice, which took two replies' onsets on the bench's room."""
        return self._erle_percentile(10)

    def _erle_percentile(self, q: float) -> float | None:
        if len(self._frames) * FRAME / RATE < self.settings.min_erle_s:
            return None
        return float(np.percentile([db for _, db in self._frames], q))

    @property
    def echo_gain(self) -> float:
        """The echo's RMS at the microphone per unit of reference RMS (the room and the volume), before
        cancelling: the median over recent far-end frames; 1.0 before any was heard."""
        if not self._ratios:
            return 1.0
        return float(np.sqrt(np.median([r for _, r in self._ratios])))

    def working(self) -> bool:
        """True once the ERLE reaches ``min_erle_db``."""
        erle = self.erle_db
        return erle is not None and erle >= self.settings.min_erle_db
