"""Hearing the user speak up while hearth is talking.

Without echo cancellation the microphone hears hearth's voice as well as the user's, and a voice
detector cannot tell them apart.  Cadence's pauses are the moments the speaker is silent, so
there the microphone hears the room.  :class:`PauseListener` listens only then, after a short
guard for the room's echo to die away, and reports the first speech it hears.  Someone who talks
over hearth is heard at the next pause, which is at most one unit away.

With echo cancellation working, :class:`ReplyListener` listens all the time hearth talks, on the
cleaned microphone, and also tells a stop word ("stop", "그만") from a request.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from agent.listening.stop_words import PROMPTS, heard_stop
from audio.protocols import AudioChunk, Recognizer, VoiceActivityDetector
from audio.wav import resample

log = logging.getLogger(__name__)


class PauseListener:
    """Feed it the microphone all the time; ``open()`` when a pause starts, ``close()`` when it ends.

    ``on_speech`` is called once, on the first speech heard while open.  The detector is reset on
    every ``open()``, so one shared with the turns (which reset it when they start listening) is
    fine: a pause never overlaps a turn's listening.
    """

    def __init__(self, vad: VoiceActivityDetector, on_speech: Callable[[], None], guard_s: float = 0.12) -> None:
        self.vad = vad
        self.on_speech = on_speech
        self.guard_s = guard_s
        """Echo of the last unit still in the room when its last sample has played."""
        self._listen_from: float | None = None

    @property
    def is_open(self) -> bool:
        return self._listen_from is not None

    def open(self, at: float | None = None) -> None:
        """A pause started at monotonic time ``at`` (default now): listen after the guard."""
        self._listen_from = (time.monotonic() if at is None else at) + self.guard_s
        self.vad.reset()

    def close(self) -> None:
        self._listen_from = None

    def accept(self, chunk: AudioChunk) -> None:
        if self._listen_from is None or time.monotonic() < self._listen_from:
            return
        samples = resample(chunk.samples, chunk.sample_rate, self.vad.sample_rate)
        if any(event.speech for event in self.vad.accept(samples)):
            self._listen_from = None
            log.info("the user spoke up during a pause")
            self.on_speech()


ONSET_MIN_SPEECH_S = 0.03
"""Speech the reply listener's own detector needs before it reports an onset.  A turn's detector
waits 0.25 s (a knock is not a request); over hearth's voice every 0.1 s counts toward the time
to silence, and the residual-echo guard (two windows in a row above it) already rules out a knock.
Measured on hearth's PulseAudio path: the onset came 0.17-0.24 s after the start of "stop",
against 0.29-0.40 s at 0.25 s, and no more onsets in quiet replies."""


class NearEnd(Protocol):
    """Told when the user's voice was heard over hearth's (the echo canceller: its figures must not
    take the user for echo it failed to remove)."""

    def near_end_began(self, lookback_s: float) -> None:
        """The user has been speaking for about ``lookback_s`` up to the audio just heard."""
        ...

    def near_end_ended(self) -> None:
        """The user's speech has ended."""
        ...


@dataclass(frozen=True)
class EchoLevel:
    """How much of hearth's own voice may be left in the cleaned microphone now."""

    far_rms: float
    """RMS of the reference (what hearth played) for the audio just cleaned; 0.0 when silent."""
    erle_db: float
    """Echo return loss enhancement the canceller achieves now (its running estimate)."""
    gain: float = 1.0
    """The echo's level at the microphone per unit of reference (the room and the volume), before
    cancelling; 1.0 when not measured."""

    @property
    def residual_rms(self) -> float:
        """The echo expected to survive cancelling, as an RMS in the cleaned microphone."""
        return self.far_rms * self.gain * 10 ** (-self.erle_db / 20)


@dataclass(frozen=True)
class ReplySettings:
    """How :class:`ReplyListener` tells the user's voice from what is left of hearth's."""

    margin_db: float = 12.0
    """An onset needs the cleaned microphone this far above the residual echo expected."""
    max_trusted_erle_db: float = 30.0
    """The guard expects at least the echo this much ERLE would leave, however well the canceller
    measures: what a loudspeaker adds to hearth's voice (distortion, peaks clipped by the sound
    card) is not in the reference, so a linear canceller leaves it, 30-40 dB down on a small
    speaker, in bursts on the loudest syllables.  On the bench's room a running ERLE of 45 dB let
    such a burst at the start of a reply through as an onset."""
    floor_rms: float = 0.004
    """…and at least this loud, whatever the echo (the room's own noise is not speech)."""
    onset_windows: int = 2
    """Consecutive 32 ms windows above both while the detector says speech: one loud window is a
    clatter.  The detector's own latency is longer, so this adds nothing when speech starts in
    quiet; it matters when the detector was already in speech on the residual."""
    end_quiet_s: float = 0.35
    """The utterance has ended when the detector has said no speech for this long, or the level
    has stayed under the guard this long (the detector may stay in speech on the residual echo).
    Shorter than the pause in "hearth, … stop" would cut it in two."""
    max_utterance_s: float = 1.5
    """Recognition starts when the detector says the speech ended, or this long after its onset:
    a stop phrase is shorter, and a longer utterance is a request whatever it says."""
    keep_around_s: float = 0.1
    """What the recognizer gets keeps this much on either side of the windows above the guard
    (the quiet edges of a word); the rest, hearth's residual voice, is silenced."""
    min_voiced_s: float = 0.1
    """An utterance with less than this above the guard is not the user's (a clatter, a burst of
    hearth's own residual voice), whatever it is decoded as: Whisper told to expect "stop" writes
    "Stop." for a breath of residual, and a request made of one would answer what nobody asked.
    On the bench's room the bursts had 0.06 s; espeak-ng's quickest "잠깐" had 0.13 s."""
    preroll_s: float = 0.5
    """Audio kept from before the onset (the detector reports speech after it started)."""
    context: str | None = None
    """Given to the recognizer with each utterance; None: the stop phrases of its language
    (:data:`~agent.listening.stop_words.PROMPTS`)."""
    hypotheses: int = 5
    """The recognizer's n best asked for each utterance (a beam search this wide): a stop word
    misheard as its neighbour is usually just behind in the beam.  1: only its best is read."""
    stop_margin: float = 0.75
    """An utterance is a stop when one of its n best is, scoring within this much (mean token
    log-probability) of the best (:func:`~agent.listening.stop_words.stop_among`)."""


class ReplyListener:
    """Hears the user over hearth's own voice, in the echo-cancelled microphone.

    Same surface as :class:`PauseListener`: feed every cleaned microphone chunk to
    :meth:`accept` (any sample rate), :meth:`open` while hearth talks (SPEAKING or PAUSING, an
    announcement, a ringing timer), :meth:`close` when it stops.  While open:

    1. The first speech onset calls ``on_speech()`` at once, before anything is recognized (the
       barge-in: with the "stop" policy hearth goes silent now, with "rush" it rushes).  An onset
       needs the detector's speech AND the cleaned level ``margin_db`` above the residual echo
       that ``echo_level()`` predicts, in ``onset_windows`` windows running (the double-talk guard).
    2. The utterance is collected until it ends (``end_quiet_s`` without the detector's speech,
       or under the guard) or ``max_utterance_s`` after the onset, then recognized in the
       background (``recognizer.transcribe`` over the collected audio, cancellable).
    3. A stop phrase (:func:`~agent.listening.stop_words.is_stop`), or one close behind the
       recognizer's best in its n best (``hypotheses``, ``stop_margin``), calls ``on_stop(text)``:
       the caller ends the reply and starts nothing (:meth:`Assistant.stop_speaking`).  Anything else
       calls ``on_request(chunks, text)``: ``chunks`` is all the audio from ``preroll_s`` before the
       onset up to this moment (accepted chunks as given, in order), so a caller that starts a turn
       from it *in the same callback*, with the live microphone after it, loses nothing between the
       two.  ``text`` is the short decode ("" if the recognizer failed, which is logged); the turn
       recognizes the whole utterance itself.  Under "rush" a caller may ignore it.  An utterance
       with less than ``min_voiced_s`` above the guard calls ``on_noise()`` instead, whatever it
       was decoded as.

    From each onset until that speech has ended (or the listener closes), ``near_end`` is told so,
    from ``preroll_s`` before the onset: the canceller's ERLE, on which the guard rests, leaves
    those frames out.

    Then it listens for the next onset once that speech has ended.  The callbacks run on the
    event loop; one that raises is logged.  :attr:`deciding` is true from the onset until the
    callback.  When hearth stops talking because of ``on_speech`` (the state goes IDLE), call
    :meth:`close_when_decided`, not :meth:`close`: the utterance is still recognized and
    reported, then the listener closes.  :meth:`close` drops the utterance and cancels its
    recognition (what a press wants).  The detector is reset on :meth:`open`; it may be shared
    with the turns (a turn listens only after this listener has decided, or been closed).
    """

    def __init__(
        self,
        vad: VoiceActivityDetector,
        recognizer: Recognizer,
        on_speech: Callable[[], None],
        on_stop: Callable[[str], None],
        on_request: Callable[[list[AudioChunk], str], None],
        echo_level: Callable[[], EchoLevel] | None = None,
        settings: ReplySettings = ReplySettings(),
        on_noise: Callable[[], None] = lambda: None,
        near_end: NearEnd | None = None,
    ) -> None:
        self.vad = vad
        self.recognizer = recognizer
        self.on_speech = on_speech
        self.on_stop = on_stop
        self.on_request = on_request
        self.on_noise = on_noise
        """Called instead of either when the onset turned out too little to be the user
        (``min_voiced_s``): the caller asks nothing (the reply stays stopped under "stop")."""
        self.echo_level = echo_level
        """The reference's level and the canceller's ERLE now; None: no echo expected (tests, a
        speaker that is silent)."""
        self.near_end = near_end
        self.settings = settings
        self.onsets = 0
        """Onsets reported so far (the bench counts false barge-ins with it)."""
        self._open = False
        self._window = 512
        self._fresh_detector_state()
        self._recent: collections.deque[AudioChunk] = collections.deque()
        """The chunks of the last ``preroll_s`` (for ``on_request``)."""
        self._windows: collections.deque[tuple[np.ndarray, bool]] = collections.deque(
            maxlen=max(1, round(settings.preroll_s * vad.sample_rate / self._window)))
        """The detector's windows of the last ``preroll_s``, each with whether it was above the guard."""
        self._heard_windows: list[tuple[np.ndarray, bool]] | None = None
        """From the onset until recognition starts: the windows to recognize."""
        self._utterance: list[AudioChunk] | None = None
        """From the onset until the decision: the audio so far."""
        self._heard_samples = 0
        """Detector samples since the onset (for ``max_utterance_s``)."""
        self._recognizing: asyncio.Task[None] | None = None
        self._closing = False
        """Close once the utterance under way is decided (:meth:`close_when_decided`)."""
        self._echo_failed = False
        self._user_voice = False
        """``near_end`` was told the user's voice began, and not yet that it ended."""

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def deciding(self) -> bool:
        """Between an onset and its ``on_stop``/``on_request``."""
        return self._utterance is not None

    def open(self, at: float | None = None) -> None:
        """Hearth started talking (``at`` is accepted for :class:`PauseListener`'s sake): listen.
        Opening one already open changes nothing (SPEAKING → PAUSING → SPEAKING)."""
        self._closing = False
        if self._open:
            return
        self._open = True
        self.vad.reset()
        self._fresh_detector_state()

    def _fresh_detector_state(self) -> None:
        """What the detector and the level runs know, as before any audio."""
        self._pending = np.zeros(0, np.float32)
        self._in_speech = False
        """The detector's state: between its start and stop events."""
        self._loud_run = 0
        self._quiet_run = 0
        self._unvoiced_run = 0
        self._await_quiet = False
        """An utterance was decided while perhaps still spoken: no new onset until it has ended."""

    def close(self) -> None:
        """Stop listening; an utterance under way is dropped and its recognition cancelled."""
        self._open = False
        self._closing = False
        self._drop_utterance()
        self._voice_ended()
        self._recent.clear()
        self._windows.clear()

    def close_when_decided(self) -> None:
        """Hearth stopped talking: no new onset, but an utterance under way is still collected,
        recognized and reported; then the listener closes (at once if there is none)."""
        if self._utterance is None:
            self.close()
        else:
            self._closing = True

    def accept(self, chunk: AudioChunk) -> None:
        if not self._open:
            return
        self._keep_recent(chunk)
        if self._utterance is not None:
            self._utterance.append(chunk)
        s = self.settings
        threshold = s.floor_rms
        echo: EchoLevel | None = None
        try:
            echo = self.echo_level() if self.echo_level is not None else None
        except Exception:  # noqa: BLE001 - the microphone must keep flowing
            if not self._echo_failed:
                log.exception("the echo level could not be read; no onset until it can")
            self._echo_failed = True
            threshold = math.inf  # hearth's voice may be anywhere: nothing counts as the user's
        else:
            self._echo_failed = False
        if echo is not None:
            trusted = EchoLevel(echo.far_rms, min(echo.erle_db, s.max_trusted_erle_db), echo.gain)
            threshold = max(threshold, trusted.residual_rms * 10 ** (s.margin_db / 20))
        samples = resample(chunk.samples, chunk.sample_rate, self.vad.sample_rate)
        self._pending = np.concatenate([self._pending, samples.astype(np.float32, copy=False)])
        whole = len(self._pending) - len(self._pending) % self._window
        windows, self._pending = self._pending[:whole], self._pending[whole:]
        for i in range(0, whole, self._window):
            self._window_heard(windows[i : i + self._window], threshold, echo)
            if not self._open:
                return  # a callback closed it

    def _window_heard(self, window: np.ndarray, threshold: float, echo: EchoLevel | None) -> None:
        for event in self.vad.accept(window):
            self._in_speech = event.speech
        loud = float(np.sqrt(np.mean(window.astype(np.float64) ** 2))) > threshold
        self._loud_run = self._loud_run + 1 if loud else 0
        self._quiet_run = 0 if loud else self._quiet_run + 1
        self._unvoiced_run = 0 if self._in_speech else self._unvoiced_run + 1
        self._windows.append((window, loud))
        if self._heard_windows is not None and self._recognizing is None:
            self._heard_windows.append((window, loud))
        # Ended when the detector has said no speech for a while, or the level has been under the
        # guard for as long: the detector may stay in speech on the residual echo (hearth's voice
        # is speech, after all).  "For a while", so "hearth, … stop" is one utterance.
        ended = max(self._quiet_run, self._unvoiced_run) * len(window) >= self.settings.end_quiet_s * self.vad.sample_rate
        if ended:
            self._await_quiet = False
            self._voice_ended()
        if self._utterance is None:
            if self._in_speech and not self._await_quiet and not self._closing and self._loud_run >= self.settings.onset_windows:
                self._onset(echo)
            return
        if self._recognizing is None:
            self._heard_samples += len(window)
            if ended or self._heard_samples >= self.settings.max_utterance_s * self.vad.sample_rate:
                self._recognize()

    def _onset(self, echo: EchoLevel | None) -> None:
        self.onsets += 1
        self._utterance = list(self._recent)
        self._heard_windows = list(self._windows)
        self._heard_samples = 0
        if self.near_end is not None and not self._user_voice:
            self._user_voice = True
            self._call(self.near_end.near_end_began, self.settings.preroll_s)
        if echo is not None and echo.far_rms > 0:
            log.info("the user spoke up over hearth (residual echo %.4f, ERLE %.1f dB)", echo.residual_rms, echo.erle_db)
        else:
            log.info("the user spoke up while hearth talked")
        self._call(self.on_speech)

    def _recognize(self) -> None:
        assert self._heard_windows is not None
        heard = self._gated(self._heard_windows)
        voiced_s = sum(len(w) for w, loud in self._heard_windows if loud) / self.vad.sample_rate
        self._heard_windows = None
        self._recognizing = asyncio.get_running_loop().create_task(self._decide(heard, voiced_s), name="reply-listener-recognize")

    def _gated(self, windows: list[tuple[np.ndarray, bool]]) -> np.ndarray:
        """The utterance as the recognizer gets it: windows under the guard, away from the user's
        loud ones, silenced.  Whisper hears hearth's residual voice however quiet it is (it
        transcribes the words of a reply 25 dB down rather than the "stop" over it)."""
        loud = np.array([flag for _, flag in windows], dtype=bool)
        reach = max(0, round(self.settings.keep_around_s * self.vad.sample_rate / self._window))
        keep = loud.copy()
        for shift in range(1, reach + 1):
            keep[shift:] |= loud[:-shift]
            keep[:-shift] |= loud[shift:]
        return np.concatenate([w if k else np.zeros_like(w) for (w, _), k in zip(windows, keep, strict=True)] or [np.zeros(0, np.float32)])

    async def _decide(self, heard: np.ndarray, voiced_s: float) -> None:
        rate = self.recognizer.sample_rate
        samples = resample(heard, self.vad.sample_rate, rate)

        async def audio() -> AsyncIterator[AudioChunk]:
            step = rate // 10
            for i in range(0, len(samples), step):
                yield AudioChunk(samples[i : i + step], rate)

        text: str | None = ""
        alternatives: tuple[tuple[str, float], ...] = ()
        try:
            context = self.settings.context
            if context is None:
                context = PROMPTS.get(self.recognizer.language, "")
            async for transcript in self.recognizer.transcribe(audio(), context, hypotheses=self.settings.hypotheses):
                if transcript.is_final:
                    text = transcript.text
                    # Read only when asked for: a recognizer may search wider on its own.
                    alternatives = transcript.alternatives if self.settings.hypotheses > 1 else ()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a failed decode must not stop the listening
            log.exception("could not recognize what the user said over hearth; taken as a request")
            text = None
        utterance = self._utterance or []
        self._recognizing = None
        self._utterance = None
        self._await_quiet = True  # until the speech decided on is over
        if self._closing:
            self.close()
        if voiced_s < self.settings.min_voiced_s:
            log.info("only %.2f s above hearth's echo (decoded %r): not the user; nothing is asked", voiced_s, text)
            self._call(self.on_noise)
        elif text is not None and (stop := heard_stop(text, alternatives, self.settings.stop_margin)) is not None:
            if stop == text:
                log.info("stop word heard over hearth: %r", text)
            else:
                log.info("stop word heard over hearth: %r (the recognizer's best was %r)", stop, text)
            self._call(self.on_stop, stop)
        else:
            log.info("heard over hearth, not a stop word: %r", text)
            self._call(self.on_request, utterance, text or "")

    def _drop_utterance(self) -> None:
        task, self._recognizing = self._recognizing, None
        if task is not None and not task.done():
            task.cancel()
        self._utterance = None
        self._heard_windows = None

    def _voice_ended(self) -> None:
        if self._user_voice and self.near_end is not None:
            self._user_voice = False
            self._call(self.near_end.near_end_ended)

    def _keep_recent(self, chunk: AudioChunk) -> None:
        self._recent.append(chunk)
        while sum(c.duration for c in self._recent) - self._recent[0].duration >= self.settings.preroll_s:
            self._recent.popleft()

    def _call(self, callback: Callable[..., None], *args: object) -> None:
        try:
            callback(*args)
        except Exception:  # noqa: BLE001 - the caller's fault must not stop the listening
            log.exception("a barge-in callback failed")
