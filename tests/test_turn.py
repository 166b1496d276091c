"""The turn logic between recorders: scripted user speech, model and voice; what the listener gets."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.speaking.cadence import speech_pauses
from agent.events import State, StateChanged, TurnInterrupted
from agent.timeline import KEY_MARKS
from agent.deps import TurnDeps
from agent.listening.listen import ListenSettings, Press
from agent.results import Outcome
from audio.wav import WavFileMicrophone, WavFileSpeaker
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer, speech_like


def make_deps(reply="It is noon. Enjoy your lunch.", text="what time is it", **kw) -> TurnDeps:
    return TurnDeps(
        vad=EnergyVad(),
        recognizer=kw.pop("recognizer", ScriptedRecognizer(text)),
        chat=kw.pop("chat", ScriptedChatModel(reply)),
        synthesizer=kw.pop("synthesizer", ToneSynthesizer()),
        speaker=kw.pop("speaker", WavFileSpeaker(16000)),
        language="en",
        system_prompt="be brief",
        listen=kw.pop("listen", ListenSettings()),
    )


async def run_turn(deps: TurnDeps, audio, *, release_after_s: float | None = 0.0, realtime=False, events=None):
    assistant = Assistant(deps, on_event=(events.append if events is not None else lambda e: None))
    mic = WavFileMicrophone(audio, realtime=realtime)
    press = Press()
    if release_after_s is not None:
        asyncio.get_running_loop().call_later(release_after_s, press.release)
    return await assistant.handle(mic.chunks(), press), assistant


async def test_tapped_turn_answers_and_records_every_key_mark_in_order():
    deps = make_deps()
    events: list = []
    result, _ = await run_turn(deps, speech_like(1.0), events=events, realtime=True)
    assert result.outcome == Outcome.ANSWERED
    assert result.transcript == "what time is it"
    assert result.spoken == ["It is noon.", "Enjoy your lunch."]
    assert result.unspoken == []
    times = [result.timeline.first(name).t for name in KEY_MARKS]
    assert times == sorted(times), result.timeline.render()
    # The user spoke from 0.3 s to 1.3 s of the recording; the detector's stamp says so.
    assert result.timeline.first("speech_start").t == pytest.approx(0.3, abs=0.07)
    assert result.timeline.first("speech_end").t == pytest.approx(1.3, abs=0.07)
    states = [e.state for e in events if isinstance(e, StateChanged)]
    # Between the two sentences the light shows "still talking" while Cadence pauses.
    assert states == [State.LISTENING, State.THINKING, State.SPEAKING, State.PAUSING, State.SPEAKING, State.IDLE]
    # What the speaker played is the two units' audio with Cadence's pause between them.
    pause = speech_pauses(result.spoken)[1]
    assert result.timeline.first("pause").detail["pause_s"] == pytest.approx(pause, abs=1e-3)
    assert deps.speaker.recording().duration == pytest.approx(result.reply_audio_s + pause, abs=0.05)


async def test_recognizer_gets_speech_with_preroll_and_tail_but_not_the_trailing_silence():
    recognizer = ScriptedRecognizer("hello")
    deps = make_deps(recognizer=recognizer)
    await run_turn(deps, speech_like(1.0, silence_before_s=1.0, silence_after_s=1.5))
    # 1.0 s of speech + 0.3 s pre-roll + 0.25 s tail (+ one detector window of slack).
    assert recognizer.audio_seen[0] == pytest.approx(1.55, abs=0.07)


async def test_hold_to_talk_release_ends_the_utterance_even_mid_speech():
    deps = make_deps()
    result, _ = await run_turn(deps, speech_like(3.0, silence_after_s=0.5), release_after_s=1.0, realtime=True)
    assert result.outcome == Outcome.ANSWERED
    assert result.timeline.first("endpoint").t == pytest.approx(1.0, abs=0.1)


async def test_silence_only_gets_a_spoken_no_speech_answer():
    synth = ToneSynthesizer()
    deps = make_deps(synthesizer=synth, listen=ListenSettings(no_speech_timeout_s=1.0))
    silence = speech_like(0.0, silence_before_s=1.5, silence_after_s=0.0)
    result, _ = await run_turn(deps, silence)
    assert result.outcome == Outcome.NO_SPEECH
    assert synth.texts == ["I didn't hear anything. Press the button and try again."]
    assert deps.chat.calls == []


async def test_empty_transcript_is_not_sent_to_the_model():
    deps = make_deps(text="   ")
    result, _ = await run_turn(deps, speech_like(0.8))
    assert result.outcome == Outcome.NOT_UNDERSTOOD
    assert deps.chat.calls == []
    assert deps.synthesizer.texts == ["Sorry, I didn't catch that."]


@pytest.mark.parametrize("reply", ["", " ... ,, !", "\n\n"])
async def test_empty_or_garbage_reply_gets_a_fallback_line(reply):
    deps = make_deps(chat=ScriptedChatModel(list(reply)))
    result, _ = await run_turn(deps, speech_like(0.8))
    assert result.outcome == Outcome.NO_ANSWER
    assert deps.synthesizer.texts[-1] == "Sorry, I don't have an answer for that."


async def test_model_crash_is_apologised_for_and_the_next_press_is_served():
    chat = ScriptedChatModel("One. Two. Three.", fail_after=2)
    deps = make_deps(chat=chat)
    result, assistant = await run_turn(deps, speech_like(0.8))
    assert result.outcome == Outcome.FAILED
    assert deps.synthesizer.texts[-1] == "Sorry, something went wrong with my answer. Please try again."
    deps.chat = ScriptedChatModel("Fine now.")
    mic = WavFileMicrophone(speech_like(0.8), realtime=False)
    press = Press()
    press.release()
    second = await assistant.handle(mic.chunks(), press)
    assert second.outcome == Outcome.ANSWERED and second.spoken == ["Fine now."]


async def test_monologue_is_capped_and_still_answered():
    recognizer = ScriptedRecognizer("a very long story")
    deps = make_deps(recognizer=recognizer, listen=ListenSettings(max_utterance_s=5.0))
    result, _ = await run_turn(deps, speech_like(60.0))
    assert result.outcome == Outcome.ANSWERED
    assert result.timeline.first("utterance_capped") is not None
    assert recognizer.audio_seen[0] < 6.0


async def test_history_carries_the_previous_exchange_into_the_next_prompt():
    deps = make_deps(reply="It is noon.")
    _, assistant = await run_turn(deps, speech_like(0.6))
    mic = WavFileMicrophone(speech_like(0.6), realtime=False)
    press = Press()
    press.release()
    await assistant.handle(mic.chunks(), press)
    second_prompt = deps.chat.calls[-1]
    assert [m.role for m in second_prompt] == ["system", "user", "assistant", "user"]
    assert second_prompt[2].content == "It is noon."


async def test_barge_in_silences_the_speaker_at_once_and_records_what_was_not_said():
    long_reply = "First sentence here. Second sentence is longer. Third one. Fourth one. Fifth and last."
    chat = ScriptedChatModel(long_reply)
    speaker = WavFileSpeaker(16000)
    deps = make_deps(chat=chat, speaker=speaker, synthesizer=ToneSynthesizer(seconds_per_char=0.03))
    events: list = []
    assistant = Assistant(deps, on_event=events.append)
    press = Press()
    press.release()
    turn = assistant.start_turn(WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), press)
    while turn.timeline.first("first_audio_out") is None:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    # A second press: the first turn is cancelled, its audio cut where the clock was.
    cut_at = time.monotonic()
    second = assistant.start_turn(WavFileMicrophone(speech_like(0.0, silence_before_s=0.1, silence_after_s=0.0), realtime=False).chunks(), Press())
    first = await turn._task
    assert first.outcome == Outcome.INTERRUPTED
    assert first.spoken == ["First sentence here."]
    assert "Fifth and last." in first.unspoken
    assert any(isinstance(e, TurnInterrupted) for e in events)
    origin = speaker._pieces[0][0]
    played_until = origin + speaker.recording().duration
    assert cut_at <= speaker.interruptions[0]
    assert played_until <= speaker.interruptions[0] + 2 / 16000
    # Only what was heard enters the history.
    assert assistant.history[-1].content == "First sentence here."
    second.cancel()
    await asyncio.gather(second._task, return_exceptions=True)


class ChunkedToneSynthesizer(ToneSynthesizer):
    """Each unit as ten short chunks, all ready at once (a fast voice, audio queued ahead)."""

    async def synthesize(self, text):
        async for chunk in super().synthesize(text):
            for piece in np.array_split(chunk.samples, 10):
                yield type(chunk)(piece, chunk.sample_rate)


class InterruptingSpeaker(WavFileSpeaker):
    """Calls ``on_voice`` (the user speaking up) from inside the write of the first voiced chunk,
    and never waits in ``write``, as a sound card with room in its queue does not."""

    def __init__(self) -> None:
        super().__init__(16000, max_buffer_s=60.0)
        self.on_voice = None
        self.after_interrupt: list[int] = []

    async def write(self, chunk, on_heard=None):
        if self.interruptions and np.any(chunk.samples):
            self.after_interrupt.append(len(chunk.samples))
        await super().write(chunk, on_heard)
        if self.on_voice is not None and np.any(chunk.samples):
            on_voice, self.on_voice = self.on_voice, None
            on_voice()


async def test_nothing_queued_is_written_after_a_barge_in_silenced_the_speaker():
    """The speaker falls silent at once, but the task playing the reply runs on until it next
    really waits: audio already synthesized must not reach the speaker in that moment."""
    speaker = InterruptingSpeaker()
    deps = make_deps(reply="One two three four five six seven.", speaker=speaker, synthesizer=ChunkedToneSynthesizer(0.02))
    assistant = Assistant(deps)
    speaker.on_voice = assistant.user_spoke
    press = Press()
    press.release()
    turn = assistant.start_turn(WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), press)
    result = await turn._task
    assert result.outcome == Outcome.INTERRUPTED
    assert speaker.interruptions, "the barge-in silenced the speaker"
    assert speaker.after_interrupt == [], "no voiced audio was written after the speaker was silenced"


async def test_warm_evaluates_the_system_prompt_before_the_first_press():
    deps = make_deps()
    assistant = Assistant(deps)
    await assistant.warm()
    assert deps.chat.warmed_with == ["be brief"]


def test_energy_vad_reports_sample_offsets():
    vad = EnergyVad()
    audio = speech_like(1.0)
    events = vad.accept(audio.samples)
    assert [e.speech for e in events] == [True, False]
    assert events[0].sample == pytest.approx(0.3 * 16000, abs=512)
    assert np.isclose(events[1].sample / 16000, 1.3, atol=0.04)


class CoveringRecognizer(ScriptedRecognizer):
    """Reports partials covering all audio so far, but its final decode is slow.

    ``whole``: the partials are whole hypotheses (decoded the way the final is); otherwise they
    are only the shown text, here the stable prefix without the request's last words.
    """

    def __init__(self, text: str, shown: str | None = None, whole: bool = True) -> None:
        super().__init__(text)
        self.shown = shown or text
        self.whole = whole

    async def transcribe(self, audio, context="", *, hypotheses=1):
        from audio.protocols import Transcript

        seconds = 0.0
        async for chunk in audio:
            seconds += chunk.duration
            yield Transcript(self.shown, False, 0, seconds, self.text if self.whole else None)
        self.audio_seen.append(seconds)
        await asyncio.sleep(0.5)
        yield Transcript(self.text, True, len(self.text), seconds, self.text)


async def test_a_whole_partial_that_heard_all_the_speech_stands_in_for_a_slow_final():
    deps = make_deps(recognizer=CoveringRecognizer("set a timer"))
    result, _ = await run_turn(deps, speech_like(1.0))
    assert result.transcript == "set a timer"
    assert result.timeline.first("final_from_partial") is not None
    assert result.outcome == Outcome.ANSWERED


async def test_a_prefix_only_partial_never_stands_in_for_the_final():
    # The shown partial covers all the audio but is the stable prefix of earlier decodes: the
    # request's end ("for pancakes") is missing.  The final must wait for the whole hypothesis.
    recognizer = CoveringRecognizer("Find me a recipe for pancakes.", shown="Find me a recipe", whole=False)
    deps = make_deps(recognizer=recognizer)
    result, _ = await run_turn(deps, speech_like(1.0))
    assert result.transcript == "Find me a recipe for pancakes."
    assert result.timeline.first("final_from_partial") is None


async def test_without_speculative_final_the_decode_starts_only_at_the_endpoint():
    from agent.features import Features

    for features, before_endpoint in ((Features(), True), (Features().without("speculative-final"), False)):
        deps = make_deps()
        deps.features = features
        result, _ = await run_turn(deps, speech_like(1.0), realtime=True)
        tl = result.timeline
        assert (tl.first("final_decode_started").t < tl.first("endpoint").t) is before_endpoint
        assert result.outcome == Outcome.ANSWERED


def test_unknown_feature_names_are_refused_with_the_known_ones():
    from agent.features import Features

    known = "asr-bias, cadence, end-of-turn, finish-newest, flush-at-tool, hearing-confidence, heartbeat, partial-as-final, prefill, pretool-line, prewarm, read-ahead, ready-voice, reasoner, released-hearing, speculative-final, sure-end, two-ears"
    with pytest.raises(ValueError, match=f"known: {known}"):
        Features().without("telepathy")


async def test_leaked_role_marker_and_thinking_are_not_spoken():
    chat = ScriptedChatModel(["Assistant:", " <think>the user", " wants noon</think>", "It is noon."])
    deps = make_deps(chat=chat)
    result, _ = await run_turn(deps, speech_like(0.8))
    assert result.spoken == ["It is noon."]
    assert result.reply == "It is noon."
