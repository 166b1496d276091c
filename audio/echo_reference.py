"""The far-end reference: what the speaker played, on the microphone's time line.

The speaker reports each block it hands to the sound card with the monotonic time its first
sample reaches the DAC; the microphone stamps each chunk with the monotonic time its first sample
left the ADC.  Between the two lie the room and whatever latency the drivers do not report, so
the delay from DAC to microphone is measured (GCC-PHAT between the microphone and the reference,
only while the reference carries sound) and tracked.  The DAC and ADC run on different crystals:
their offset creeps by up to a few hundred ppm, so the measured delays are fitted with a line over
time (offset plus drift) rather than averaged, and alignment holds over minutes.

Everything is kept at 16 kHz.  The speaker's callback thread writes, the event loop reads: one
lock guards the ring and the tracker.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np
import soxr

log = logging.getLogger(__name__)

RATE = 16000


@dataclass(frozen=True)
class ReferenceSettings:
    """How the far-end reference is kept and lined up with the microphone."""

    history_s: float = 3.0
    """Seconds of played audio kept (the delay search looks back this far, at most)."""
    contiguous_tolerance_s: float = 0.02
    """A block stamped within this of where the run's sample count puts it (after the stamps'
    slow drift, below) continues the run (DAC stamps jitter); further away starts a new run at
    its own stamp."""
    clock_gain: float = 0.02
    """Share of each block's stamp error taken into the running estimate of the stamps' drift
    from the sample count.  The ring's time line is the sample count itself (the DAC's clock): the
    delay tracker follows the drift between the DAC's and the microphone's clocks, and an
    adaptive filter needs the reference not to wobble with the stamps' jitter."""
    initial_delay_s: float = 0.0
    """DAC-to-microphone delay assumed before the first measurement."""
    min_delay_s: float = -0.05
    """Shortest delay searched (negative: the stamps may place the echo before its DAC time)."""
    max_delay_s: float = 0.5
    """Longest delay searched (room plus unreported driver latency)."""
    min_reference_rms: float = 0.003
    """The reference must be at least this loud (float RMS, about -50 dBFS) to measure against."""
    min_peak_ratio: float = 6.0
    """A correlation peak counts only this many times above the RMS of the searched lags."""
    drift_window_s: float = 120.0
    """Measurements older than this (monotonic seconds) leave the drift fit."""
    min_fit_span_s: float = 8.0
    """The drift line is fitted only once the measurements span this long; before, the median."""
    max_drift_ppm: float = 1000.0
    """The fitted drift is clamped to this (clocks of sound cards stay well inside)."""
    outlier_s: float = 0.004
    """A measurement this far from the track is an outlier; three agreeing outliers start a new track."""
    check_peak_ratio: float = 8.0
    """A quick check's correlation peak (:meth:`FarEndReference.check_near`) counts only this many
    times above the RMS of its lags: its window is short, and a stray peak would move the path."""
    check_old_share: float = 0.3
    """…and, away from the tracked delay, only where the correlation there fell below this share
    of the peak (see :meth:`FarEndReference.check_near`)."""


class CountedClock:
    """A stream's time line by its own sample count; its stamps only find where it broke.

    Sound-card stamps jitter (PortAudio's capture stamps through PulseAudio by ±22 ms), and a time
    line that followed them even by a small share moved an adaptive filter's echo path by a
    fraction of a millisecond.  So each block is placed where the count puts it, and a stamp only
    says whether it continues the stream: within ``tolerance_s`` of the count (after the stamps'
    own slow drift from it, a running estimate taking ``gain`` of each error) it does; further off,
    samples were lost and the stream starts again at that stamp."""

    def __init__(self, tolerance_s: float, gain: float) -> None:
        self.tolerance_s = tolerance_s
        self.gain = gain
        self.reset()

    def reset(self) -> None:
        self._next: float | None = None  # the next block's time by the count
        self._drift = 0.0  # how far the stamps have crept from the count (smoothed)
        self.last_error: float | None = None
        """The last block's stamp less where the count put it (None: the first block)."""

    def continues(self, at: float, seconds: float, same_stream: bool = True) -> bool:
        """Whether the block stamped ``at`` continues the stream (``same_stream`` False: a new
        rate, say, breaks it whatever the stamp); either way the count then moves on by its
        ``seconds``, from ``at`` after a break."""
        error = None if self._next is None else at - self._next
        self.last_error = error
        went_on = same_stream and error is not None and abs(error - self._drift) <= self.tolerance_s
        if went_on:
            assert error is not None
            self._drift += self.gain * (error - self._drift)
        else:
            self._next, self._drift = at, 0.0
        assert self._next is not None
        self._next += seconds
        return went_on


def gcc_phat(mic: np.ndarray, ref: np.ndarray, max_lag: int) -> np.ndarray:
    """The PHAT-weighted cross-correlation of ``mic`` with ``ref`` at lags ``0..max_lag``:
    element k is how well mic[i] matches ref[i + k].  ``ref`` must be ``len(mic) + max_lag`` long."""
    # Circular correlation: lags past len(ref) never occur, and negative ones (down to
    # -len(mic)) must not wrap into 0..max_lag.
    n = 1 << int(np.ceil(np.log2(max(len(ref), len(mic) + max_lag + 1))))
    x = np.fft.rfft(mic.astype(np.float64), n)
    y = np.fft.rfft(ref.astype(np.float64), n)
    cross = np.conj(x) * y
    mag = np.abs(cross)
    cross /= mag + 1e-3 * mag.max() + 1e-20  # PHAT, regularised against empty bins
    return np.fft.irfft(cross, n)[: max_lag + 1]


def peak_lag(c: np.ndarray, min_peak_ratio: float) -> float | None:
    """The lag (fractional) of the correlation's peak; None when it does not stand
    ``min_peak_ratio`` times above the RMS of all the lags (no echo, or only noise)."""
    peak = int(np.argmax(c))
    spread = float(np.sqrt(np.mean(c**2)))
    if spread <= 0.0 or c[peak] < min_peak_ratio * spread:
        return None
    frac = 0.0
    if 0 < peak < len(c) - 1:  # parabolic interpolation between the neighbours
        a, b, d = c[peak - 1], c[peak], c[peak + 1]
        den = a - 2 * b + d
        if den < 0:
            frac = float(np.clip(0.5 * (a - d) / den, -0.5, 0.5))
    return peak + frac


def gcc_phat_delay(mic: np.ndarray, ref: np.ndarray, max_lag: int, min_peak_ratio: float) -> float | None:
    """Lag in samples (fractional) at which ``ref`` best matches ``mic``: mic[k] ~ ref[k + lag].

    ``ref`` must be ``len(mic) + max_lag`` long; lags ``0..max_lag`` are searched.  None when the
    peak does not stand out (no echo, or only noise).
    """
    return peak_lag(gcc_phat(mic, ref, max_lag), min_peak_ratio)


class DelayTrack:
    """Measured delays over time, fitted with a line (offset plus clock drift); not thread-safe."""

    def __init__(self, settings: ReferenceSettings) -> None:
        self.settings = settings
        self._points: deque[tuple[float, float]] = deque()
        self._outliers: list[tuple[float, float]] = []
        self._fit: tuple[float, float, float] | None = None  # (t0, delay at t0, slope)

    def delay_at(self, t: float) -> float:
        if self._fit is None:
            return self.settings.initial_delay_s
        t0, d0, slope = self._fit
        return d0 + slope * (t - t0)

    @property
    def measured(self) -> bool:
        return self._fit is not None

    @property
    def drift_ppm(self) -> float:
        return 0.0 if self._fit is None else self._fit[2] * 1e6

    def add(self, t: float, delay: float) -> None:
        s = self.settings
        if self._fit is not None and abs(delay - self.delay_at(t)) > s.outlier_s:
            self._outliers.append((t, delay))
            recent = self._outliers[-3:]
            if len(recent) == 3 and max(d for _, d in recent) - min(d for _, d in recent) <= s.outlier_s:
                self.restart(recent)  # the path changed (a device restarted)
            return
        self._outliers.clear()
        self._points.append((t, delay))
        while self._points and self._points[0][0] < t - s.drift_window_s:
            self._points.popleft()
        self._refit()

    def restart(self, points: list[tuple[float, float]]) -> None:
        """The path moved: the track starts again from these (time, delay) measurements."""
        log.info("the echo path moved: %.1f ms -> %.1f ms", self.delay_at(points[-1][0]) * 1e3, float(np.median([d for _, d in points])) * 1e3)
        self._points = deque(points)
        self._outliers.clear()
        self._refit()

    def _refit(self) -> None:
        s = self.settings
        ts = np.array([p[0] for p in self._points])
        ds = np.array([p[1] for p in self._points])
        t0 = float(ts[-1])
        if ts[-1] - ts[0] < s.min_fit_span_s or len(ts) < 4:
            self._fit = (t0, float(np.median(ds)), 0.0)
            return
        keep = np.ones(len(ts), bool)
        for _ in range(2):  # least squares, then again without the points it leaves far off
            slope, icpt = np.polyfit(ts[keep] - t0, ds[keep], 1)
            resid = np.abs(ds - (icpt + slope * (ts - t0)))
            keep = resid <= max(0.001, 2.5 * float(np.median(resid)))
            if keep.sum() < 4:
                break
        limit = s.max_drift_ppm * 1e-6
        self._fit = (t0, float(icpt), float(np.clip(slope, -limit, limit)))

    def step(self, by: float) -> None:
        """The whole path stepped by ``by`` seconds: every measurement moves with it, the drift kept."""
        self._points = deque((t, d + by) for t, d in self._points)
        self._outliers.clear()
        if self._fit is not None:
            t0, d0, slope = self._fit
            self._fit = (t0, d0 + by, slope)

    def clear(self) -> None:
        self._points.clear()
        self._outliers.clear()
        self._fit = None


class FarEndReference:
    """What the speaker played, kept at 16 kHz on a monotonic time line (see the module doc)."""

    def __init__(self, settings: ReferenceSettings | None = None) -> None:
        self.settings = settings or ReferenceSettings()
        self._lock = threading.Lock()
        self._cap = int(self.settings.history_s * RATE)
        self._ring = np.zeros(self._cap, np.float32)
        self._t0: float | None = None  # monotonic time of ring index 0
        self._end = 0  # one past the last index written
        self._resampler: soxr.ResampleStream | None = None
        self._resampler_rate = 0
        self._run = CountedClock(self.settings.contiguous_tolerance_s, self.settings.clock_gain)
        """The current run of blocks, on its sample count."""
        self._write_at = 0  # ring index of the current run's next resampled sample
        self._track = DelayTrack(self.settings)
        self.measurements = 0
        """Delay measurements accepted so far."""
        self.runs_broken = 0
        """How often the speaker's blocks broke off mid-stream (an underrun, most often: where a
        sound card's latency steps)."""
        self.run_began: float | None = None
        """The DAC time (monotonic) of the current run's first block, as stamped."""

    # ---- the speaker's side

    def played(self, samples: np.ndarray, rate: int, at: float) -> None:
        """``samples`` (float32 mono at ``rate``) whose first one reached the DAC at monotonic ``at``."""
        samples = np.asarray(samples, np.float32).reshape(-1)
        if len(samples) == 0:
            return
        with self._lock:
            if self._t0 is None:
                self._t0 = at
            if not self._run.continues(at, len(samples) / rate, rate == self._resampler_rate):
                if self._run.last_error is not None and rate == self._resampler_rate:
                    log.info("the speaker's blocks broke off (stamped %+.1f ms from their count): a new run", self._run.last_error * 1e3)
                    self.runs_broken += 1
                if self._resampler is not None:  # what the old run's resampler still holds
                    self._write(
                        self._write_at, np.asarray(self._resampler.resample_chunk(np.zeros(0, np.float32), last=True), np.float32)
                    )
                self._resampler = soxr.ResampleStream(rate, RATE, 1, dtype="float32") if rate != RATE else None
                self._resampler_rate = rate
                self._write_at = round((at - self._t0) * RATE)
                self.run_began = at
            data = samples if self._resampler is None else np.asarray(self._resampler.resample_chunk(samples), np.float32)
            self._write(self._write_at, data)
            self._write_at += len(data)

    def _write(self, start: int, data: np.ndarray) -> None:
        if start < 0:  # before the first block's stamp: nothing can ask for it
            data, start = data[-start:], 0
        if len(data) == 0:
            return
        if start > self._end:  # silence between runs: clear what the ring held there before
            self._fill(self._end, np.zeros(min(start - self._end, self._cap), np.float32), start - self._end)
        self._fill(start, data, len(data))
        self._end = max(self._end, start + len(data))

    def _fill(self, start: int, data: np.ndarray, length: int) -> None:
        if len(data) > self._cap:
            data = data[-self._cap :]
        first = (start + length - len(data)) % self._cap
        head = min(len(data), self._cap - first)
        self._ring[first : first + head] = data[:head]
        self._ring[: len(data) - head] = data[head:]

    # ---- the microphone's side

    def _read(self, index: int, n: int) -> np.ndarray:
        out = np.zeros(n, np.float32)
        lo = max(index, self._end - self._cap, 0)
        hi = min(index + n, self._end)
        if hi > lo:
            idx = np.arange(lo, hi) % self._cap
            out[lo - index : hi - index] = self._ring[idx]
        return out

    def played_at(self, at: float, n: int) -> np.ndarray:
        """``n`` samples (16 kHz) of what reached the DAC from monotonic ``at`` on; zeros where nothing played.

        Between samples the reference is interpolated (4-point Lagrange), so that a delay that
        creeps with clock drift moves it smoothly rather than by a sample now and then, which
        would set an adaptive filter back each time."""
        with self._lock:
            if self._t0 is None:
                return np.zeros(n, np.float32)
            pos = (at - self._t0) * RATE
            i = int(np.floor(pos))
            f = pos - i
            if f < 1e-3 or f > 1 - 1e-3:
                return self._read(int(round(pos)), n)
            x = self._read(i - 1, n + 3)
        c0 = -f * (f - 1) * (f - 2) / 6
        c1 = (f + 1) * (f - 1) * (f - 2) / 2
        c2 = -(f + 1) * f * (f - 2) / 2
        c3 = (f + 1) * f * (f - 1) / 6
        return (c0 * x[:n] + c1 * x[1 : n + 1] + c2 * x[2 : n + 2] + c3 * x[3 : n + 3]).astype(np.float32)

    def delay_at(self, t: float) -> float:
        """The tracked DAC-to-microphone delay (seconds) for microphone time ``t``."""
        with self._lock:
            return self._track.delay_at(t)

    @property
    def delay_measured(self) -> bool:
        with self._lock:
            return self._track.measured

    @property
    def drift_ppm(self) -> float:
        """The fitted drift of the delay (DAC clock against ADC clock), in ppm."""
        with self._lock:
            return self._track.drift_ppm

    def window(self, start: float, n: int, rate: int = RATE) -> np.ndarray:
        """The reference for the ``n`` microphone samples at ``rate`` whose first was captured at ``start``."""
        if rate == RATE:
            return self.played_at(start - self.delay_at(start), n)
        m = int(np.ceil(n * RATE / rate)) + 2
        ref = self.played_at(start - self.delay_at(start), m)
        return np.interp(np.arange(n) * (RATE / rate), np.arange(m), ref).astype(np.float32)

    def measure(self, mic: np.ndarray, start: float) -> float | None:
        """Measure the delay from 16 kHz microphone audio captured from ``start``; track it and return it.

        None (and nothing tracked) when the reference is too quiet there or no peak stands out.
        """
        s = self.settings
        delay = self._search(mic, start, s.min_delay_s, s.max_delay_s, s.min_peak_ratio)
        if delay is None:
            return None
        with self._lock:
            self._track.add(start + len(mic) / (2 * RATE), delay)
            self.measurements += 1
        return delay

    def check_near(self, mic: np.ndarray, start: float, reach_s: float, step_s: float) -> float | None:
        """The delay in a short stretch of microphone audio, searched only within ``reach_s`` of
        the tracked one, and not tracked: what :meth:`moved_to` may act on.

        A peak more than ``step_s`` from the tracked delay counts only where the correlation at
        the tracked delay has fallen to ``check_old_share`` of it: a periodic voice, or a wall's
        reflection, puts peaks beside the echo's own, and they do not mean it moved.  None before
        a delay was measured, where the reference is too quiet, where no peak stands out or one
        lies at the edge of the search (the true one is further off, or there is none), and where
        the echo still comes at the tracked delay as well."""
        if not self.delay_measured:
            return None
        s = self.settings
        around = self.delay_at(start + len(mic) / (2 * RATE))
        hi = round((around + reach_s) * RATE)
        span = 2 * round(reach_s * RATE)
        ref = self.played_at(start - hi / RATE, len(mic) + span)
        # What the tracked echo would carry must sound: a room's late reflections of words that
        # ended correlate, truncated, somewhere in the search.
        aligned = ref[hi - round(around * RATE) :][: len(mic)]
        if float(np.sqrt(np.mean(aligned**2))) < s.min_reference_rms or not np.any(mic):
            return None
        c = gcc_phat(mic, ref, span)
        lag = peak_lag(c, s.check_peak_ratio)
        if lag is None or min(lag, span - lag) < 0.001 * RATE:
            return None
        delay = hi / RATE - lag / RATE
        if abs(delay - around) > step_s:
            near = round(hi - around * RATE)
            width = round(0.002 * RATE)
            if float(c[max(0, near - width) : near + width + 1].max()) > s.check_old_share * float(c.max()):
                return None
        return delay

    def step_to(self, delay: float, t: float) -> None:
        """Quick checks agree the echo comes at ``delay`` at microphone time ``t``, a little off the
        track: the track steps there, its drift kept."""
        with self._lock:
            self._track.step(delay - self._track.delay_at(t))

    def moved_to(self, points: list[tuple[float, float]]) -> None:
        """Quick checks agree the path has moved: the track starts again from their (time, delay)."""
        with self._lock:
            self._track.restart(points)

    def _search(self, mic: np.ndarray, start: float, lo_s: float, hi_s: float, peak_ratio: float) -> float | None:
        lo = round(lo_s * RATE)
        hi = round(hi_s * RATE)
        ref = self.played_at(start - hi_s, len(mic) + hi - lo)
        if float(np.sqrt(np.mean(ref**2))) < self.settings.min_reference_rms or not np.any(mic):
            return None
        lag = gcc_phat_delay(mic, ref, hi - lo, peak_ratio)
        return None if lag is None else hi_s - lag / RATE

    def reset(self) -> None:
        """Forget what was played and the measured delay."""
        with self._lock:
            self._ring[:] = 0.0
            self._t0 = None
            self._end = 0
            self._resampler = None
            self._resampler_rate = 0
            self._run.reset()
            self._write_at = 0
            self._track.clear()
            self.measurements = 0
            self.run_began = None
