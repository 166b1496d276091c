"""Listening to one utterance: microphone → voice detector → recognizer, and when it is over.

When a tapped utterance is over is decided at each pause from its sound, its
words and the room (see :mod:`agent.listening.turn_end`); while the button is held, its
release ends the utterance exactly.

The final transcript may be prepared speculatively: once a pause has lasted
``speculative_silence_s``, the recognizer's input is closed, so its final decode
runs while hearth is still waiting to be sure the user has finished.  If the
user speaks again, that attempt is dropped and a new one is fed the whole
utterance.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace

import numpy as np

from agent.events import Event, SpeechStarted, TranscriptFinal, TranscriptPartial, UtteranceEnded
from agent.features import Features
from agent.timeline import RESUMED, Timeline
from agent.listening.turn_end import TurnEndSettings, quiet_since, sounds_unfinished
from agent.listening.hearing import SURE, Hearing, HearingSettings, weigh, words_of
from audio.levels import finite_samples, speech_snr_db
from audio.protocols import AudioChunk, Recognizer, Transcript, TurnEndModel, VoiceActivityDetector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListenSettings:
    """When an utterance is over."""

    tap_silence_s: float = 0.5
    """After a tap (button released before speaking), silence this long after speech ends it when
    there is no end-of-turn model (or it is switched off); with one, ``turn_end`` decides."""
    turn_end: TurnEndSettings = TurnEndSettings()
    """How the end of a tapped utterance is decided from the sound, the words and the silence."""
    speculative_silence_s: float = 0.25
    """A pause this long starts the final decode before the utterance is known to be over."""
    hold_silence_s: float = 1.5
    """While the button is held, a pause this long ends the utterance anyway."""
    no_speech_timeout_s: float = 6.0
    """Give up if no speech starts within this long after the press."""
    max_utterance_s: float = 28.0
    """Longest utterance; Whisper sees at most 30 s, and a monologue must not block the speaker."""
    preroll_s: float = 0.3
    """Audio kept from before the detected speech start, so the first syllable is not cut."""
    tail_s: float = 0.25
    """Most audio passed on after the detected speech end."""
    hearing: HearingSettings = HearingSettings()
    """How sure a hearing must be to be answered, and to be acted on without asking back."""


COVER_MARGIN_S = 0.05
"""Audio past the detected end of speech a partial must cover to stand in for the final."""


class Press:
    """One press of the push-to-talk button, as a turn sees it."""

    def __init__(self, pressed_at: float | None = None) -> None:
        self.pressed_at = time.monotonic() if pressed_at is None else pressed_at
        self.released_at: float | None = None

    def release(self, at: float | None = None) -> None:
        if self.released_at is None:
            self.released_at = time.monotonic() if at is None else at


class _Attempt:
    """One run of the recognizer over the utterance so far."""

    def __init__(self, recognizer: Recognizer, timeline: Timeline, emit: Callable[[Event], None], context: str) -> None:
        self.queue: asyncio.Queue[AudioChunk | None] = asyncio.Queue()
        self.fed = 0  # samples handed over
        self.closed = False
        self.last_partial: Transcript | None = None
        self.whole: Transcript | None = None  # the newest partial that is a whole hypothesis
        self.covered = asyncio.Event()
        self.cover_needed_s: float | None = None
        self.task = asyncio.create_task(self._recognize(recognizer, timeline, emit, context), name="recognize")

    def require_cover(self, seconds: float) -> None:
        """A whole hypothesis covering ``seconds`` of audio is as good as the final: it heard all the speech."""
        self.cover_needed_s = seconds
        if self.whole is not None and self.whole.audio_s >= seconds:
            self.covered.set()

    async def _audio(self) -> AsyncIterator[AudioChunk]:
        while (chunk := await self.queue.get()) is not None:
            yield chunk

    async def _recognize(self, recognizer: Recognizer, timeline: Timeline, emit: Callable[[Event], None], context: str) -> Transcript:
        final = Transcript("", True)
        async for hyp in recognizer.transcribe(self._audio(), context):
            if hyp.is_final:
                final = replace(hyp, text=hyp.text.strip())
            else:
                self.last_partial = hyp
                if hyp.hypothesis is not None:
                    # Only a whole hypothesis may stand in for the final; the shown text keeps
                    # earlier partials' words and could lack the end of the request.
                    self.whole = hyp
                    if self.cover_needed_s is not None and hyp.audio_s >= self.cover_needed_s:
                        self.covered.set()
                timeline.mark("partial_transcript", text=hyp.text, stable_chars=hyp.stable_chars, audio_s=round(hyp.audio_s, 3))
                emit(TranscriptPartial(hyp.text))
        return final

    def feed(self, audio: np.ndarray, rate: int) -> None:
        if len(audio):
            self.queue.put_nowait(AudioChunk(audio.astype(np.float32, copy=False), rate))
            self.fed += len(audio)

    def close(self) -> None:
        if not self.closed:
            self.queue.put_nowait(None)
            self.closed = True

    async def discard(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


class _Pause:
    """One pause in the speech, and what is known about it so far."""

    def __init__(self, at: int) -> None:
        self.at = at
        """Sample where the speech stopped."""
        self.p: float | None = None
        """The end-of-turn model's latest P(finished)."""
        self.p_silence_s = 0.0
        """The silence the latest P was computed after."""
        self.judging: asyncio.Task[float] | None = None

    def stop(self) -> None:
        if self.judging is not None:
            self.judging.cancel()  # the thread finishes on its own; its answer is dropped


_RELEASE_SLACK_S = 0.05
"""A partial that decoded all but this much of a held utterance heard it all."""


class UtteranceListener:
    """Consumes microphone audio until the utterance ends; returns (heard speech?, transcript)."""

    def __init__(
        self,
        vad: VoiceActivityDetector,
        recognizer: Recognizer,
        settings: ListenSettings,
        press: Press,
        timeline: Timeline,
        emit: Callable[[Event], None],
        features: Features = Features(),
        turn_model: TurnEndModel | None = None,
        language: str = "en",
        context: str = "",
    ) -> None:
        self.features = features
        self.hearing: Hearing = SURE
        """The last utterance's hearing, weighed once its final transcript is in."""
        self.end_p: float | None = None
        """The end-of-turn model's P(finished) that ended the utterance early ("finished")."""
        self.vad = vad
        self.recognizer = recognizer
        self.s = settings
        self.press = press
        self.timeline = timeline
        self.emit = emit
        self.turn_model = turn_model if features.end_of_turn else None
        self.language = language
        self.context = context
        self.rate = vad.sample_rate
        self._buffer = np.zeros(16000 * 8, np.float32)  # grows by doubling
        self.total = 0
        self.origin: float | None = None
        self.speech_start: int | None = None
        self.speech_start_at = 0.0
        self.speech_end: int | None = None
        self.attempt: _Attempt | None = None
        self.pause: _Pause | None = None
        self.speculations = 0
        self.ended_by = ""
        self.speaking = False
        self._source: AsyncIterator[AudioChunk] | None = None

    # -- helpers ---------------------------------------------------------------------------
    def _at(self, sample: int) -> float:
        # Stream time, not arrival time: chunks may arrive in bursts, samples do not.
        assert self.origin is not None
        return self.origin + sample / self.rate

    def _append(self, samples: np.ndarray) -> None:
        needed = self.total + len(samples)
        if needed > len(self._buffer):
            grown = np.zeros(max(needed, 2 * len(self._buffer)), np.float32)
            grown[: self.total] = self._buffer[: self.total]
            self._buffer = grown
        self._buffer[self.total : needed] = samples
        self.total = needed

    def _samples(self, start: int, end: int) -> np.ndarray:
        return self._buffer[start:end].copy()

    def _utterance_start(self) -> int:
        assert self.speech_start is not None
        return max(0, self.speech_start - int(self.s.preroll_s * self.rate))

    def _feed_until(self, end: int) -> None:
        attempt = self.attempt
        if attempt is None or attempt.closed:
            return
        begin = self._utterance_start() + attempt.fed
        if end > begin:
            attempt.feed(self._samples(begin, end), self.rate)

    def _new_attempt(self) -> None:
        self.attempt = _Attempt(self.recognizer, self.timeline, self.emit, self.context)

    async def _restart_attempt(self) -> None:
        # The user spoke again after a pause: the speculative final is stale.
        if self.attempt is not None:
            await self.attempt.discard()
        self._new_attempt()

    # -- the loop --------------------------------------------------------------------------
    async def run(self, audio: AsyncIterator[AudioChunk]) -> tuple[bool, str]:
        """Listen until the utterance ends; (heard speech?, final transcript)."""
        self.vad.reset()
        self._source = aiter(audio)
        return await self.carry_on()

    async def carry_on(self) -> tuple[bool, str]:
        """Listen on after :meth:`watch` heard the user go on, to the next end; then the final transcript."""
        try:
            return await self._listen()
        finally:
            if self.pause is not None:
                self.pause.stop()
                self.pause = None
            if self.attempt is not None and not self.attempt.task.done():
                await self.attempt.discard()

    async def watch(self, until_silence_s: float) -> bool:
        """After an end: keep listening until the silence has lasted ``until_silence_s``.

        True when the user spoke again first (a hesitation taken for the end): the turn then
        drops what it prepared and calls :meth:`carry_on`, which hears the whole utterance.
        """
        if self.speech_start is None or self.speech_end is None or self._source is None:
            return False
        while (self.total - self.speech_end) / self.rate < until_silence_s:
            chunk = await anext(self._source, None)
            if chunk is None:
                return False
            if await self._take(chunk, watching=True):
                self.timeline.mark(RESUMED)
                return True
            if self.speech_end is None:
                return False
        return False

    async def _listen(self) -> tuple[bool, str]:
        s, tl, rate = self.s, self.timeline, self.rate
        assert self._source is not None
        self.ended_by = ""
        async for chunk in self._source:
            await self._take(chunk)
            if self.speech_start is None:
                if self.total / rate >= s.no_speech_timeout_s:
                    break
                continue
            if self._ended(self.speaking):
                break
        tl.mark("endpoint", audio_s=round(self.total / rate, 3), by=self.ended_by or "end_of_audio")
        if self.speech_start is None or self.attempt is None:
            return False, ""
        if self.speech_end is None:  # the button, the cap or the end of the source cut speech off
            tl.mark("speech_end")
            self.speech_end = self.total
            self._feed_until(self.total)
        self.emit(UtteranceEnded())
        if not self.attempt.closed:
            self.attempt.close()
            tl.mark("final_decode_started")
        final = await self._final_text(self.attempt)
        text = final.text
        self.hearing = self._weigh(final, self.attempt.last_partial)
        tl.mark("final_transcript", text=text, **self.hearing.marks())
        self.emit(TranscriptFinal(text, confidence=self.hearing.confidence))
        return True, text

    async def _take(self, chunk: AudioChunk, watching: bool = False) -> bool:
        """One chunk of microphone audio: detect, feed, weigh a pause; True when speech started again
        after the recognizer's input was closed."""
        s, tl, rate = self.s, self.timeline, self.rate
        if chunk.sample_rate != rate:
            raise ValueError(f"microphone gives {chunk.sample_rate} Hz, the detector needs {rate} Hz")
        # What the detector and both recognizers get: no NaN, infinity or beyond full scale.
        chunk = AudioChunk(finite_samples(chunk.samples), rate)
        if self.origin is None:
            self.origin = time.monotonic() - chunk.duration
        self._append(chunk.samples)
        resumed = False
        for event in self.vad.accept(chunk.samples):
            if event.speech:
                self.speaking = True
                if self.speech_start is None:
                    self.speech_start = event.sample
                    self.speech_start_at = self._at(event.sample)
                    tl.mark("speech_start", self.speech_start_at)
                    self.emit(SpeechStarted())
                    self._new_attempt()
                elif self.attempt is not None and self.attempt.closed:
                    tl.mark("speech_resumed", self._at(event.sample))
                    await self._restart_attempt()
                    resumed = True
                self.speech_end = None
                if self.pause is not None:
                    self.pause.stop()
                    self.pause = None
            else:
                self.speaking = False
                self.speech_end = event.sample
                tl.mark("speech_end", self._at(event.sample))
        if self.speech_start is None:
            return False
        if self.speaking or self.speech_end is None:
            self._feed_until(self.total)
        elif not watching:
            # A pause: hand over what there is, ask for its words, and weigh whether it is the end.
            self._feed_until(min(self.total, self.speech_end + int(s.tail_s * rate)))
            self._weigh_pause(self.speech_end)
            silence = (self.total - self.speech_end) / rate
            if (
                self.features.speculative_final
                and silence >= s.speculative_silence_s
                and self.attempt is not None
                and not self.attempt.closed
            ):
                self.attempt.close()
                self.speculations += 1
                tl.mark("final_decode_started")
        return resumed

    def _weigh(self, final: Transcript, partial: Transcript | None) -> Hearing:
        """How sure the hearing of ``final`` is (:mod:`agent.listening.hearing`)."""
        assert self.speech_start is not None and self.speech_end is not None
        start = self._utterance_start()
        end = min(self.total, self.speech_end + int(self.s.tail_s * self.rate))
        # The room is heard before the speech (from the press) and after it; the voice between.
        snr = speech_snr_db(self._buffer[: self.total], self.rate, (self.speech_start, self.speech_end))
        if not self.features.two_ears:
            final = replace(final, second_hearing=None)
        final = replace(final, audio_s=final.audio_s or (end - start) / self.rate)
        if self.ended_by == "button" and self.features.released_hearing and partial is not None and (
                partial.audio_s < final.audio_s - _RELEASE_SLACK_S):
            # Made before the release, so on fewer words than the final, the last one cut off: its
            # words differ from the final's even when both are right ("Start the race time." for
            # "Stop the rice timer.", decoded 0.3 s before the release).
            self.timeline.mark("partial_not_weighed", partial_s=round(partial.audio_s, 3), final_s=round(final.audio_s, 3))
            partial = None
        hearing = weigh(final, snr, partial, self.s.hearing)
        if hearing.verdict != "sure":
            log.info("heard %r %s (confidence %.2f, weakest: %s)", final.text, hearing.verdict, hearing.confidence, hearing.weakest)
        return hearing

    async def _final_text(self, attempt: _Attempt) -> Transcript:
        """The final decode's text, or a whole partial hypothesis' if one already covered all the speech.

        A partial decode running when the utterance ends would otherwise delay the
        final decode by a whole decode; if it was decoded the way the final is and
        started after the speech ended, its text is what the final would say.
        """
        if not self.features.partial_as_final:
            return await attempt.task
        if self.speech_end is not None:
            speech_s = (self.speech_end - self._utterance_start()) / self.rate
            attempt.require_cover(speech_s + COVER_MARGIN_S)
        covered = asyncio.create_task(attempt.covered.wait())
        await asyncio.wait([attempt.task, covered], return_when=asyncio.FIRST_COMPLETED)
        covered.cancel()
        if attempt.task.done():
            return attempt.task.result()
        assert attempt.whole is not None
        self.timeline.mark("final_from_partial", audio_s=round(attempt.whole.audio_s, 3))
        await attempt.discard()
        whole = attempt.whole
        text = (whole.hypothesis or "").strip()
        return replace(whole, text=text, is_final=True, stable_chars=len(text))

    def _weigh_pause(self, at: int) -> None:
        """Start (or renew) what decides whether this pause ends the turn: the words, the sound."""
        model, pause = self.turn_model, self.pause
        if model is None or self.press.released_at is None:
            return  # no model, or the button is held: the release decides
        if pause is None or pause.at != at:
            if pause is not None:
                pause.stop()
            pause = self.pause = _Pause(at)
        silence = (self.total - at) / self.rate
        due = pause.p is None or silence >= pause.p_silence_s + self.s.turn_end.recheck_s
        if pause.judging is None and due:
            samples = self._samples(self._utterance_start(), self.total)
            pause.p_silence_s = silence
            pause.judging = asyncio.ensure_future(asyncio.to_thread(model.probability, samples))
        elif pause.judging is not None and pause.judging.done():
            job, pause.judging = pause.judging, None
            try:
                pause.p = job.result()
            except Exception:  # noqa: BLE001 - a failing model must not end the turn early or late
                log.exception("the end-of-turn model failed; the silence decides")
                self.turn_model = None
                return
            self.timeline.mark("turn_end_p", p=round(pause.p, 3), silence_s=round(pause.p_silence_s, 3))

    def _words_before_pause(self, pause: _Pause) -> str | None:
        """The words up to the pause, if a decode has covered them already (None otherwise)."""
        attempt = self.attempt
        if attempt is None:
            return None
        if attempt.task.done() and not attempt.task.cancelled() and attempt.task.exception() is None:
            return attempt.task.result().text
        needed = (pause.at - self._utterance_start()) / self.rate
        latest = attempt.last_partial
        return latest.text if latest is not None and latest.audio_s >= needed else None

    def answer_after_s(self, final: str) -> float:
        """After an early end ("finished"), how long the silence must last before hearth answers:
        ``sure_end_silence_s`` when the sound is sure, the final's words leave nothing open, the
        hearing is sure and the last partial decode had the final's words (two decodes agree);
        else ``end_silence_s``. Marked on the timeline as ``answer_after``."""
        turn_end = self.s.turn_end
        partial = self.attempt.last_partial if self.attempt is not None else None
        signs = {
            "sound": self.end_p is not None and self.end_p >= turn_end.sure_threshold,
            "words": not sounds_unfinished(final, self.language),
            "hearing": self.hearing.verdict == "sure",
            "partial": partial is not None and words_of(partial.text) == words_of(final),
        }
        sure = self.features.sure_end and self.ended_by == "finished" and all(signs.values())
        wait = turn_end.sure_end_silence_s if sure else turn_end.end_silence_s
        self.timeline.mark("answer_after", silence_s=wait, sure=sure, **{k: v for k, v in signs.items() if not v})
        return wait

    def _sounds_finished(self) -> bool:
        pause, turn_end = self.pause, self.s.turn_end
        if pause is None or pause.p is None or pause.p < turn_end.finished_threshold:
            return False
        # The words are not waited for: decoding them at the pause would halve the speed of the
        # model on two cores, and an end that was wrong is taken back (see ``watch``).
        words = self._words_before_pause(pause)
        if words is not None and sounds_unfinished(words, self.language):
            return False
        speech = (self._utterance_start(), pause.at)
        return quiet_since(self._buffer[: self.total], pause.at, speech, self.rate, turn_end.quiet_margin_db)

    def _ended(self, speaking: bool) -> bool:
        s, rate = self.s, self.rate
        assert self.speech_start is not None
        if (self.total - self.speech_start) / rate >= s.max_utterance_s:
            log.info("utterance reached %.0f s; ending it", s.max_utterance_s)
            self.timeline.mark("utterance_capped")
            self.ended_by = "cap"
            return True
        # Hold-to-talk: releasing after speech began ends the utterance exactly.
        # A tap before speaking means "listen until I stop": the pause decides.
        released = self.press.released_at
        if released is not None and released >= self.speech_start_at:
            self.ended_by = "button"
            self.timeline.mark("released", released)  # the user's own end of speech, to the millisecond
            return True
        if self.speech_end is None or speaking:
            return False
        silence = (self.total - self.speech_end) / rate
        if released is None:
            limit = s.hold_silence_s
        elif self.turn_model is None:
            limit = s.tap_silence_s
        else:
            if self._sounds_finished():
                self.ended_by = "finished"
                self.end_p = self.pause.p if self.pause is not None else None
                return True
            limit = s.turn_end.end_silence_s
        if silence >= limit:
            self.ended_by = "silence"
            return True
        return False
