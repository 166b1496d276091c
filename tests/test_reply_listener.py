"""The listener that runs while hearth talks, on the echo-cancelled microphone: scripted frames.

Audio is fed in 32 ms windows (512 samples at 16 kHz), so latencies are counted in windows, not
measured on a clock.  "Residual" is what a canceller leaves of hearth's voice: speech-like noise at
the level :class:`EchoLevel` predicts, wandering a few dB either way as real residual does.
"""

from __future__ import annotations

import asyncio
import logging

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.listening.barge_in import EchoLevel, ReplyListener, ReplySettings
from agent.record import ConversationRecord
from agent.listening.listen import Press
from agent.results import Outcome
from audio.chime import chime
from audio.protocols import AudioChunk, Transcript, VadEvent
from audio.wav import WavFileMicrophone
from firmware_py.ringing import RingSettings, ring_until_heard
from tests.fakes import EnergyVad, ScriptedRecognizer, speech_like
from tests.test_turn_cadence import CountingSpeaker, make_deps, wait_for_pause

RATE = 16000
WINDOW = 512
ECHO = EchoLevel(far_rms=0.25, erle_db=14.0, gain=1.2)
"""Hearth's reply at the reference, loud, and a canceller that takes 14 dB off it: the residual
(~0.06 RMS) is well above the detector's threshold (0.02), so the detector alone would fire."""


def residual(windows: int, rng: np.random.Generator, level: EchoLevel = ECHO) -> np.ndarray:
    """Speech-like residual echo: noise whose window level wanders ±6 dB around the expected RMS."""
    gains = 10 ** (rng.uniform(-6, 6, windows) / 20)
    noise = rng.standard_normal((windows, WINDOW)) * (level.residual_rms * gains)[:, None]
    return noise.reshape(-1).astype(np.float32)


def voice(windows: int, rms: float = 0.3) -> np.ndarray:
    """The user, close to the microphone: a voiced tone with harmonics."""
    t = np.arange(windows * WINDOW) / RATE
    wave = np.sin(2 * np.pi * 180 * t) + 0.5 * np.sin(2 * np.pi * 360 * t) + 0.25 * np.sin(2 * np.pi * 540 * t)
    return (wave / np.sqrt(np.mean(wave**2)) * rms).astype(np.float32)


class SlowOnsetVad(EnergyVad):
    """Like Silero: reports a start only after ``min_windows`` loud windows (backdated to the first)."""

    def __init__(self, min_windows: int = 8) -> None:
        self.min_windows = min_windows
        super().__init__()

    def reset(self) -> None:
        super().reset()
        self._run = 0
        self._inner_speaking = False

    def accept(self, samples: np.ndarray) -> list[VadEvent]:
        out: list[VadEvent] = []
        for i in range(0, len(samples), self.window):
            for event in super().accept(samples[i : i + self.window]):
                if event.speech:
                    self._run_start = event.sample
                    self._inner_speaking = True
                else:
                    if self._run >= self.min_windows:
                        out.append(event)
                    self._inner_speaking = False
                    self._run = 0
            if self._inner_speaking:
                self._run += 1
                if self._run == self.min_windows:
                    out.append(VadEvent(True, self._run_start))
        return out


class Heard:
    """What the listener told its caller, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.decided = asyncio.Event()

    def speech(self) -> None:
        self.calls.append(("speech",))

    def stop(self, text: str) -> None:
        self.calls.append(("stop", text))
        self.decided.set()

    def request(self, chunks: list[AudioChunk], text: str) -> None:
        self.calls.append(("request", chunks, text))
        self.decided.set()

    def noise(self) -> None:
        self.calls.append(("noise",))
        self.decided.set()

    def kinds(self) -> list[str]:
        return [c[0] for c in self.calls]


def make_listener(text: str = "stop", vad=None, recognizer=None, echo: EchoLevel | None = ECHO, **settings):
    heard = Heard()
    listener = ReplyListener(
        vad or EnergyVad(),
        recognizer or ScriptedRecognizer(text),
        heard.speech,
        heard.stop,
        heard.request,
        echo_level=(lambda: echo) if echo is not None else None,
        settings=ReplySettings(**settings),
        on_noise=heard.noise,
    )
    return listener, heard


def feed(listener: ReplyListener, samples: np.ndarray, heard: Heard | None = None) -> int | None:
    """Feed window by window; the window (1-based) during which ``on_speech`` came, if it did."""
    before = heard.kinds().count("speech") if heard is not None else 0
    for n, i in enumerate(range(0, len(samples), WINDOW), start=1):
        listener.accept(AudioChunk(samples[i : i + WINDOW], RATE))
        if heard is not None and heard.kinds().count("speech") > before:
            return n
    return None


async def decided(heard: Heard) -> None:
    await asyncio.wait_for(heard.decided.wait(), timeout=10)


async def test_hearths_own_residual_voice_never_triggers_over_many_replies():
    rng = np.random.default_rng(16)
    listener, heard = make_listener()
    for _reply in range(60):  # 60 replies of ~3 s, each with its pauses
        listener.open()
        feed(listener, residual(94, rng))
        feed(listener, np.zeros(WINDOW * 10, np.float32))  # a pause between units
        feed(listener, residual(94, rng))
        listener.close()
    assert heard.calls == []
    assert listener.onsets == 0
    # The same residual with no guard is heard as speech: the guard is what keeps it quiet.
    unguarded, heard_unguarded = make_listener(echo=None)
    unguarded.open()
    feed(unguarded, residual(94, rng))
    assert heard_unguarded.kinds()[:1] == ["speech"]


async def test_the_user_over_the_reply_is_heard_within_the_detectors_own_latency():
    rng = np.random.default_rng(1)
    soft = EchoLevel(far_rms=0.1, erle_db=24.0)  # a residual the detector does not take for speech
    for min_windows in (1, 4, 8):
        listener, heard = make_listener(vad=SlowOnsetVad(min_windows), echo=soft)
        listener.open()
        feed(listener, residual(40, rng, soft))
        assert heard.calls == [] and not listener._in_speech
        user = voice(30) + residual(30, rng, soft)
        window = feed(listener, user, heard)
        # The detector says speech after ``min_windows`` windows; the guard needs 2 loud ones.
        assert window == max(min_windows, listener.settings.onset_windows)
        listener.close()


async def test_speech_is_heard_when_the_detector_was_already_in_speech_on_the_residual():
    rng = np.random.default_rng(2)
    listener, heard = make_listener()
    listener.open()
    feed(listener, residual(40, rng))  # EnergyVad is in speech on the residual all along
    assert listener._in_speech and heard.calls == []
    window = feed(listener, voice(30) + residual(30, rng), heard)
    assert window == listener.settings.onset_windows


async def test_quiet_speech_under_loud_residual_is_not_an_onset_but_is_once_hearth_is_quiet():
    rng = np.random.default_rng(3)
    level = ECHO.residual_rms * 10 ** (6 / 20)  # only 6 dB above the residual: could be echo
    listener, heard = make_listener()
    listener.open()
    feed(listener, voice(30, level) + residual(30, rng))
    assert heard.calls == []
    silent = EchoLevel(far_rms=0.0, erle_db=ECHO.erle_db)
    listener.echo_level = lambda: silent  # a pause: the reference is silent, nothing to cancel
    assert feed(listener, voice(30, level), heard) == 2


async def test_a_stop_word_stops_and_asks_for_no_new_turn():
    for said, language in (("Stop.", "en"), ("Stop, stop!", "en"), ("그만", "ko"), ("잠깐만요.", "ko")):
        listener, heard = make_listener(recognizer=ScriptedRecognizer(said, language=language))
        listener.open()
        rng = np.random.default_rng(4)
        feed(listener, residual(20, rng))
        feed(listener, voice(12) + residual(12, rng))  # ~0.4 s: "stop"
        feed(listener, residual(20, rng))  # the detector ends the speech after its 0.3 s of quiet
        await decided(heard)
        assert heard.calls == [("speech",), ("stop", said)]
        assert not listener.deciding and listener.is_open


class NBestRecognizer:
    """Its final is ``alternatives[0]``, with the n best given; notes the n best it was asked for."""

    sample_rate = 16000

    def __init__(self, alternatives: list[tuple[str, float]], language: str = "ko", always: bool = False) -> None:
        self.alternatives = tuple(alternatives)
        self.language = language
        self.always = always
        """Gives the n best even when not asked (as Whisper does where its own settings search wider)."""
        self.asked: list[int] = []

    async def transcribe(self, audio, context="", *, hypotheses=1):
        async for _chunk in audio:
            pass
        self.asked.append(hypotheses)
        text = self.alternatives[0][0]
        yield Transcript(text, True, len(text), 0.4, text, self.alternatives if hypotheses > 1 or self.always else ())


async def say_short(listener: ReplyListener, heard: Heard) -> None:
    listener.open()
    rng = np.random.default_rng(4)
    feed(listener, residual(20, rng))
    feed(listener, voice(12) + residual(12, rng))
    feed(listener, residual(20, rng))
    await decided(heard)


async def test_a_stop_word_just_behind_the_recognizers_best_is_a_stop():
    """"잠깐" heard as "참가.", with "잠깐." a little behind it in the beam: a stop, no turn."""
    recognizer = NBestRecognizer([("참가.", -0.84), ("잠깐.", -1.44), ("참고.", -1.6)])
    listener, heard = make_listener(recognizer=recognizer)
    await say_short(listener, heard)
    assert recognizer.asked == [ReplySettings().hypotheses] and ReplySettings().hypotheses > 1
    assert heard.calls == [("speech",), ("stop", "잠깐.")]


async def test_a_stop_word_far_behind_the_best_or_not_asked_for_leaves_a_request():
    far = NBestRecognizer([("도마.", -0.42), ("고마.", -1.1), ("그만.", -1.9)])
    listener, heard = make_listener(recognizer=far, stop_margin=0.75)
    await say_short(listener, heard)
    assert heard.kinds() == ["speech", "request"] and heard.calls[-1][2] == "도마."
    # With the n best not asked for, only the best is read.
    near = NBestRecognizer([("참가.", -0.84), ("잠깐.", -1.0)])
    listener, heard = make_listener(recognizer=near, hypotheses=1)
    await say_short(listener, heard)
    assert near.asked == [1] and heard.kinds() == ["speech", "request"]
    # …even from a recognizer that searched wider on its own.
    anyway = NBestRecognizer([("참가.", -0.84), ("잠깐.", -1.0)], always=True)
    listener, heard = make_listener(recognizer=anyway, hypotheses=1)
    await say_short(listener, heard)
    assert heard.kinds() == ["speech", "request"]


async def test_a_request_with_a_stop_word_in_it_stays_a_request_whatever_the_beam_holds():
    recognizer = NBestRecognizer([("Stop the timer.", -0.3), ("Stop the timer!", -0.35), ("Stop, timer.", -0.9)], "en")
    listener, heard = make_listener(recognizer=recognizer)
    await say_short(listener, heard)
    assert heard.kinds() == ["speech", "request"] and heard.calls[-1][2] == "Stop the timer."


async def test_a_breath_above_the_echo_is_neither_a_stop_nor_a_request():
    """Whisper told to expect "stop" writes "Stop." for almost anything: two windows above the
    guard (the least an onset needs) are too little of the user's voice to stop on."""
    listener, heard = make_listener(recognizer=ScriptedRecognizer("Stop."))
    listener.open()
    rng = np.random.default_rng(41)
    feed(listener, residual(20, rng))
    feed(listener, voice(2) + residual(2, rng))  # 64 ms above the guard
    feed(listener, residual(20, rng))
    await asyncio.sleep(0.2)
    assert heard.kinds() == ["speech", "noise"], "neither a stop nor a request"
    assert not listener.deciding and listener.is_open
    # Five windows (0.16 s), a short "stop", are.
    listener, heard = make_listener(recognizer=ScriptedRecognizer("Stop."))
    listener.open()
    feed(listener, residual(20, rng))
    feed(listener, voice(5) + residual(5, rng))
    feed(listener, residual(20, rng))
    await decided(heard)
    assert heard.calls == [("speech",), ("stop", "Stop.")]


async def test_other_words_are_a_request_with_all_the_audio_from_before_the_onset_to_the_decision():
    recognizer = ScriptedRecognizer("what temperature again", decode_s=0.05)
    listener, heard = make_listener(recognizer=recognizer)
    listener.open()
    rng = np.random.default_rng(5)
    before = residual(30, rng)
    feed(listener, before)
    words = voice(25) + residual(25, rng)
    feed(listener, words)
    feed(listener, residual(12, rng))  # the detector's hangover: the speech has ended
    assert listener.deciding
    later = residual(3, rng)
    feed(listener, later)  # still arriving while it is recognized
    await decided(heard)
    kind, chunks, text = heard.calls[-1]
    assert (kind, text) == ("request", "what temperature again")
    audio = np.concatenate([c.samples for c in chunks])
    assert np.array_equal(audio[-len(later) :], later)  # everything up to the decision: nothing is lost
    preroll = len(audio) - len(words) - 12 * WINDOW - len(later)
    # What came before the onset (its own windows included) is kept: the start of the first word.
    assert preroll + listener.settings.onset_windows * WINDOW >= int(listener.settings.preroll_s * RATE)
    assert np.array_equal(audio[preroll : preroll + len(words)], words)
    assert np.array_equal(audio[:preroll], before[-preroll:])
    # Only the utterance up to the detector's end (or the cap) was recognized.
    assert recognizer.audio_seen[0] == pytest.approx((preroll + len(words) + 12 * WINDOW) / RATE, abs=0.05)


async def test_a_long_utterance_is_recognized_at_the_cap_and_is_a_request():
    recognizer = ScriptedRecognizer("could you tell me how long the rice needs", decode_s=0.0)
    listener, heard = make_listener(recognizer=recognizer, max_utterance_s=1.0)
    listener.open()
    rng = np.random.default_rng(6)
    feed(listener, voice(100) + residual(100, rng))  # 3.2 s of talking, no end in sight
    await decided(heard)
    assert heard.kinds() == ["speech", "request"]
    onset_to_cap = recognizer.audio_seen[0] - listener.settings.onset_windows * WINDOW / RATE  # nothing came before
    assert onset_to_cap == pytest.approx(1.0, abs=WINDOW / RATE)
    # It does not start again on the same speech: the next onset needs the detector to hear it end.
    feed(listener, voice(40) + residual(40, rng))
    assert heard.kinds() == ["speech", "request"]
    feed(listener, np.zeros(15 * WINDOW, np.float32))  # the user stops; later speaks again
    feed(listener, voice(10))
    assert heard.kinds() == ["speech", "request", "speech"]


class BlockingRecognizer:
    """Never finishes on its own; notes whether it was cancelled."""

    language = "en"
    sample_rate = 16000

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def transcribe(self, audio, context="", *, hypotheses=1):
        async for _chunk in audio:
            pass
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield Transcript("stop", True)


async def test_close_mid_utterance_cancels_the_recognition_and_reports_nothing():
    recognizer = BlockingRecognizer()
    listener, heard = make_listener(recognizer=recognizer)
    listener.open()
    rng = np.random.default_rng(7)
    feed(listener, voice(12) + residual(12, rng))
    feed(listener, np.zeros(12 * WINDOW, np.float32))
    await asyncio.wait_for(recognizer.started.wait(), timeout=10)
    listener.close()
    await asyncio.sleep(0.01)
    assert recognizer.cancelled
    assert heard.kinds() == ["speech"]
    assert not listener.deciding and not listener.is_open
    # Closed while still collecting: nothing is recognized at all.
    listener2, heard2 = make_listener(recognizer=(r2 := ScriptedRecognizer("stop")))
    listener2.open()
    feed(listener2, voice(10))
    listener2.close()
    feed(listener2, np.zeros(20 * WINDOW, np.float32))
    await asyncio.sleep(0.05)
    assert heard2.kinds() == ["speech"] and r2.audio_seen == []


async def test_close_when_decided_still_reports_the_utterance_then_closes():
    listener, heard = make_listener(text="그만")
    listener.open()
    feed(listener, voice(12))
    listener.close_when_decided()  # the reply stopped at the onset: hearth is idle now
    assert listener.is_open and listener.deciding
    feed(listener, np.zeros(12 * WINDOW, np.float32))
    await decided(heard)
    assert heard.calls == [("speech",), ("stop", "그만")]
    assert not listener.is_open
    idle, heard_idle = make_listener()
    idle.open()
    idle.close_when_decided()
    assert not idle.is_open


class FailingRecognizer:
    language = "en"
    sample_rate = 16000

    async def transcribe(self, audio, context="", *, hypotheses=1):
        async for _chunk in audio:
            pass
        raise RuntimeError("the model fell over")
        yield  # an async generator


async def test_a_recognizer_that_raises_is_logged_and_taken_as_a_request(caplog):
    listener, heard = make_listener(recognizer=FailingRecognizer())
    listener.open()
    with caplog.at_level(logging.ERROR, logger="agent.listening.barge_in"):
        feed(listener, voice(12))
        feed(listener, np.zeros(12 * WINDOW, np.float32))
        await decided(heard)
    assert heard.kinds() == ["speech", "request"]
    assert heard.calls[-1][2] == ""
    assert "could not recognize" in caplog.text and "the model fell over" in caplog.text


async def test_a_callback_that_raises_is_logged_and_listening_goes_on(caplog):
    calls: list[str] = []

    def boom() -> None:
        calls.append("speech")
        raise RuntimeError("wiring bug")

    listener = ReplyListener(EnergyVad(), ScriptedRecognizer("stop"), boom, lambda t: calls.append(t), lambda c, t: None)
    listener.open()
    with caplog.at_level(logging.ERROR, logger="agent.listening.barge_in"):
        feed(listener, voice(12))
        feed(listener, np.zeros(12 * WINDOW, np.float32))
        for _ in range(100):
            if "stop" in calls:
                break
            await asyncio.sleep(0.01)
    assert calls == ["speech", "stop"]
    assert "wiring bug" in caplog.text


async def test_any_sample_rate_is_heard_and_closed_hears_nothing():
    listener, heard = make_listener(echo=None)
    loud = voice(12)
    listener.accept(AudioChunk(loud, RATE))
    assert heard.calls == []  # closed
    listener.open()
    at_48k = np.repeat(voice(6), 3)  # 0.19 s at 48 kHz
    for i in range(0, len(at_48k), 1440):
        listener.accept(AudioChunk(at_48k[i : i + 1440], 48000))
    assert heard.kinds() == ["speech"]
    assert EchoLevel(0.5, 20.0).residual_rms == pytest.approx(0.05)


# -- the assistant's side: a spoken stop ends the reply and starts nothing -------------------

async def _speaking(barge_in: str):
    record = ConversationRecord.open(":memory:")
    events: list = []
    deps = make_deps(speaker=CountingSpeaker(), seconds_per_char=0.01)
    assistant = Assistant(deps, on_event=events.append, record=record, barge_in=barge_in)
    turn = assistant.start_turn(WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), Press())
    await wait_for_pause(assistant, events)
    return assistant, turn, record


async def test_stop_policy_a_spoken_stop_after_the_onset_leaves_the_reply_stopped_and_starts_no_turn():
    assistant, turn, record = await _speaking("stop")
    assistant.user_spoke()  # the onset: silent at once
    assert assistant.stop_speaking("Stop.") is False  # nothing was left playing
    result = await turn.wait()
    await asyncio.sleep(0)
    assert result.outcome == Outcome.INTERRUPTED
    assert [u.status for u in result.units] == ["spoken", "unspoken", "unspoken", "unspoken", "unspoken"]
    assert assistant.turns_started == 1 and assistant.current is None and assistant.stops_heard == 1
    rows = [(e.role, e.text, e.status) for e in record.entries()]
    assert ("user", "Stop.", "stop") in rows
    assert rows.index(("user", "Stop.", "stop")) > rows.index(("assistant", result.spoken[0], "spoken"))
    # The stop word is not history: the model reads the request and what was heard of the reply.
    assert [m.content for m in assistant.history if m.role == "user"] == [result.transcript]


async def test_rush_policy_a_spoken_stop_cuts_the_rushed_reply_at_once():
    assistant, turn, record = await _speaking("rush")
    assistant.user_spoke()  # the onset rushes the reply
    assert assistant.stop_speaking("그만") is True
    result = await turn.wait()
    await asyncio.sleep(0)
    assert result.outcome == Outcome.INTERRUPTED
    assert result.unspoken
    assert result.timeline.first("barge_in").detail["mode"] == "rush"
    assert result.timeline.all("barge_in")[-1].detail["mode"] == "stop_word"
    assert assistant.turns_started == 1 and assistant.current is None
    rows = [(e.role, e.text, e.status) for e in record.entries()]
    assert [status for role, _, status in rows if role == "turn"] == ["interrupted"]
    stop = rows.index(("user", "그만", "stop"))
    # The units not heard were recorded when the reply was cut, before the stop word; what the
    # model had not finished writing then comes with the turn's end.
    assert {status for _, _, status in rows[:stop]} - {"heard", "spoken"} <= {"cut", "unspoken"}
    assert {status for _, _, status in rows[stop + 1 : -1]} <= {"cut", "unspoken"}
    assert rows[-1] == ("turn", "", "interrupted")


async def test_the_listener_wired_to_the_assistant_a_failing_recognizer_leaves_the_reply_stopped():
    assistant, turn, _record = await _speaking("stop")
    requests: list[str] = []
    listener = ReplyListener(EnergyVad(), FailingRecognizer(), assistant.user_spoke, assistant.stop_speaking,
                             lambda chunks, text: requests.append(text))
    listener.open()
    feed(listener, voice(12))  # the onset cuts the reply
    result = await turn.wait()
    assert result.outcome == Outcome.INTERRUPTED
    feed(listener, np.zeros(12 * WINDOW, np.float32))
    for _ in range(200):
        if requests:
            break
        await asyncio.sleep(0.01)
    assert requests == [""]  # handed on as a request: the caller decides whether a turn hears it
    assert assistant.turns_started == 1 and assistant.stops_heard == 0


async def test_a_spoken_stop_silences_a_ringing_timer_and_it_rings_no_more():
    from tests.test_turn import make_deps as plain_deps

    deps = plain_deps()
    deps.synthesizer.seconds_per_char = 0.2  # a long line, so the stop lands in the middle
    assistant = Assistant(deps)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    ringing = asyncio.create_task(ring_until_heard(assistant, "Your pasta timer is done.", chime(16000), RingSettings(times=5), sleep))
    while assistant._announcing is None:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    assert assistant.stop_speaking("stop") is True
    assert await asyncio.wait_for(ringing, timeout=10) == 1
    assert slept == [] and len(deps.speaker.interruptions) == 1
    assert assistant.turns_started == 0


async def test_a_short_pause_inside_the_utterance_does_not_cut_it_in_two():
    recognizer = ScriptedRecognizer("Hearth, stop.", decode_s=0.0)
    listener, heard = make_listener(recognizer=recognizer, vad=EnergyVad(min_silence_s=0.1))
    listener.open()
    feed(listener, voice(10))  # "hearth"
    feed(listener, np.zeros(8 * WINDOW, np.float32))  # 0.26 s: the detector has already said "ended"
    feed(listener, voice(10))  # "stop"
    feed(listener, np.zeros(12 * WINDOW, np.float32))
    await decided(heard)
    assert heard.calls == [("speech",), ("stop", "Hearth, stop.")]
    assert len(recognizer.audio_seen) == 1 and recognizer.audio_seen[0] >= 28 * WINDOW / RATE


async def test_an_echo_level_that_cannot_be_read_is_logged_once_and_hears_no_onset(caplog):
    def broken() -> EchoLevel:
        raise RuntimeError("reference gone")

    listener = ReplyListener(EnergyVad(), ScriptedRecognizer("stop"), lambda: None, lambda t: None, lambda c, t: None, echo_level=broken)
    listener.open()
    with caplog.at_level(logging.ERROR, logger="agent.listening.barge_in"):
        feed(listener, voice(30))  # the microphone keeps flowing, nothing raises
    assert listener.onsets == 0
    assert [r.getMessage() for r in caplog.records] == ["the echo level could not be read; no onset until it can"]
    listener.echo_level = lambda: EchoLevel(0.0, 20.0)
    feed(listener, voice(30))
    assert listener.onsets == 1


class RecordingRecognizer(ScriptedRecognizer):
    """Keeps the audio it was given."""

    async def transcribe(self, audio, context="", *, hypotheses=1):
        self.heard = []

        async def keep():
            async for chunk in audio:
                self.heard.append(chunk.samples)
                yield chunk

        async for transcript in super().transcribe(keep(), context):
            yield transcript


async def test_the_recognizer_gets_the_users_words_with_the_residual_around_them_silenced_and_the_stop_phrases_as_prompt():
    from agent.listening.stop_words import PROMPTS

    recognizer = RecordingRecognizer("그만", language="ko")
    listener, heard = make_listener(recognizer=recognizer)
    listener.open()
    rng = np.random.default_rng(8)
    feed(listener, residual(30, rng))
    words = voice(12) + residual(12, rng)
    feed(listener, words)
    feed(listener, residual(20, rng))
    await decided(heard)
    assert recognizer.contexts == [PROMPTS["ko"]]
    audio = np.concatenate(recognizer.heard)
    words_at = len(audio) - len(words) - 11 * WINDOW  # it ended after 0.35 s under the guard: 11 windows
    reach = 3 * WINDOW  # keep_around_s of 0.1 s, in whole windows
    start = int(np.flatnonzero(audio)[0])
    assert words_at - reach <= start <= words_at  # the preroll's residual is silenced up to the words' edge
    assert np.array_equal(audio[words_at : words_at + len(words)], words)
    assert not audio[words_at + len(words) + reach :].any()  # and the residual after them


class Told:
    """The canceller's side of :class:`~agent.listening.barge_in.NearEnd`: what it was told, in order."""

    def __init__(self) -> None:
        self.said: list[float | None] = []

    def near_end_began(self, lookback_s: float) -> None:
        self.said.append(lookback_s)

    def near_end_ended(self) -> None:
        self.said.append(None)


async def test_the_canceller_is_told_of_the_users_voice_from_before_its_onset_until_it_ended():
    rng = np.random.default_rng(21)
    listener, heard = make_listener()
    told = Told()
    listener.near_end = told
    listener.open()
    feed(listener, residual(20, rng))
    assert told.said == [], "hearth's residual is not the user"
    feed(listener, voice(12) + residual(12, rng))
    assert told.said == [listener.settings.preroll_s], "from the onset, reaching back over the preroll"
    feed(listener, residual(5, rng))
    assert told.said == [listener.settings.preroll_s], "a short gap inside the utterance is still the user"
    feed(listener, residual(20, rng))
    assert told.said == [listener.settings.preroll_s, None]
    await decided(heard)
    assert heard.calls == [("speech",), ("stop", "stop")]
    # Closed in the middle of the next utterance (a press): the canceller hears the end of it too.
    feed(listener, residual(20, rng))
    feed(listener, voice(12) + residual(12, rng))
    assert told.said[-1] == listener.settings.preroll_s
    listener.close()
    assert told.said == [listener.settings.preroll_s, None, listener.settings.preroll_s, None]
    listener.close()
    assert len(told.said) == 4, "told once"
