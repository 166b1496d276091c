"""Cadence in the voice loop: units spoken while the model writes, pauses heard as silence, barge-in."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.speaking.cadence import speech_pauses, split_units
from agent.events import State, StateChanged
from agent.features import Features
from agent.record import ConversationRecord
from agent.deps import TurnDeps
from agent.listening.listen import ListenSettings, Press
from agent.results import Outcome
from audio.protocols import AudioChunk
from audio.wav import WavFileMicrophone, WavFileSpeaker
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer, speech_like

LONG = (
    "Preheat the oven to 180°C. Grease a 20 cm tin with butter. Whisk three eggs with the sugar. "
    "Fold in the flour gently. Bake it for 25 minutes and let it cool."
)


class TapeSpeaker:
    """Plays nothing, keeps everything: speech and silence in order, each as it was written."""

    sample_rate = 16000

    def __init__(self) -> None:
        self.tape: list[tuple[str, float]] = []

    async def write(self, chunk: AudioChunk, on_heard=None) -> None:
        kind = "speech" if chunk.samples.any() else "silence"
        if self.tape and self.tape[-1][0] == kind and kind == "silence":
            self.tape[-1] = (kind, self.tape[-1][1] + chunk.duration)
        else:
            self.tape.append((kind, chunk.duration))
        if on_heard is not None:
            on_heard(asyncio.get_running_loop().time())

    async def drain(self) -> float:
        return asyncio.get_running_loop().time()

    def interrupt(self) -> None:
        pass

    async def close(self) -> None:
        pass


class CountingSpeaker(WavFileSpeaker):
    """A real-time speaker that also counts the silence written to it."""

    def __init__(self) -> None:
        super().__init__(16000)
        self.silence_s = 0.0

    async def write(self, chunk: AudioChunk, on_heard=None) -> None:
        if not chunk.samples.any():
            self.silence_s += chunk.duration
        await super().write(chunk, on_heard)


def make_deps(reply=LONG, speaker=None, chat=None, features=Features(), seconds_per_char=0.02) -> TurnDeps:
    return TurnDeps(
        vad=EnergyVad(),
        recognizer=ScriptedRecognizer("how do I bake a sponge"),
        chat=chat or ScriptedChatModel(reply, token_s=0.01),
        synthesizer=ToneSynthesizer(seconds_per_char=seconds_per_char),
        speaker=speaker or TapeSpeaker(),
        language="en",
        system_prompt="be brief",
        listen=ListenSettings(),
        features=features,
    )


async def run(assistant: Assistant, during=None):
    mic = WavFileMicrophone(speech_like(0.6), realtime=False)
    turn = assistant.start_turn(mic.chunks(), Press())
    if during is not None:
        await during(assistant)
    return await turn.wait()


async def test_the_first_unit_is_synthesised_while_the_model_is_still_writing():
    deps = make_deps(chat=ScriptedChatModel(LONG, token_s=0.03))
    result = await run(Assistant(deps))
    tl = result.timeline
    assert result.spoken == [u.strip() for u in split_units(LONG)]
    assert len(result.spoken) == 5
    assert tl.first("tts_start").t < tl.first("llm_end").t


async def test_with_cadence_off_the_reply_is_synthesised_whole_after_the_model_finishes():
    deps = make_deps(chat=ScriptedChatModel(LONG, token_s=0.03), features=Features().without("cadence"))
    result = await run(Assistant(deps))
    tl = result.timeline
    assert result.spoken == [LONG]
    assert tl.first("tts_start").t >= tl.first("llm_end").t
    assert [kind for kind, _ in deps.speaker.tape] == ["speech"]


async def test_pauses_are_written_as_silence_between_the_units_and_match_cadence():
    deps = make_deps(chat=ScriptedChatModel(LONG, token_s=0))  # the whole reply is known before the first pause
    result = await run(Assistant(deps))
    units = split_units(LONG)
    tape = deps.speaker.tape
    assert [kind for kind, _ in tape] == ["speech", "silence"] * 4 + ["speech"]
    silences = [seconds for kind, seconds in tape if kind == "silence"]
    assert silences == pytest.approx(speech_pauses(units)[1:], abs=1e-3)
    marks = result.timeline.all("pause")
    assert [m.detail["unit"] for m in marks] == [1, 2, 3, 4]
    # The voice's own quiet edges (here the tone's first and last samples) count toward the pause.
    heard = [m.detail["silence_s"] + m.detail["voice_edges_s"] for m in marks]
    assert heard == pytest.approx(speech_pauses(units)[1:], abs=2e-3)


async def test_the_silence_a_voice_leaves_at_its_edges_counts_toward_the_pause():
    class PaddedVoice(ToneSynthesizer):
        """A voice that, like piper, leaves 0.05 s of silence before and 0.15 s after a unit."""

        async def synthesize(self, text):
            async for chunk in super().synthesize(text):
                pad = lambda s: np.zeros(int(s * chunk.sample_rate), np.float32)  # noqa: E731
                yield AudioChunk(np.concatenate([pad(0.05), chunk.samples, pad(0.15)]), chunk.sample_rate)

    deps = make_deps(reply="Hang on a second. Let me look at the pantry for you.", chat=ScriptedChatModel(
        "Hang on a second. Let me look at the pantry for you.", token_s=0))
    deps.synthesizer = PaddedVoice()
    result = await run(Assistant(deps))
    mark = result.timeline.first("pause")
    assert mark.detail["voice_edges_s"] == pytest.approx(0.2, abs=2e-3)
    assert mark.detail["silence_s"] == pytest.approx(mark.detail["pause_s"] - 0.2, abs=2e-3)


async def test_the_light_shows_still_talking_during_each_pause():
    deps = make_deps(speaker=CountingSpeaker(), seconds_per_char=0.005)
    events: list = []
    await run(Assistant(deps, on_event=events.append))
    states = [e.state for e in events if isinstance(e, StateChanged)]
    speaking = states[states.index(State.SPEAKING) : states.index(State.IDLE)]
    assert speaking == [State.SPEAKING, State.PAUSING] * 4 + [State.SPEAKING]


async def test_a_pause_counts_the_silence_already_heard_while_the_model_was_busy():
    # The model stalls after starting its second sentence (the first is certain once the next
    # word begins) for longer than the pause: no silence is added.
    class Stalling(ScriptedChatModel):
        async def stream(self, messages, max_tokens=None):
            yield "Hang on. "
            yield "It"
            await asyncio.sleep(0.8)
            yield " is done."

    speaker = CountingSpeaker()
    deps = make_deps(chat=Stalling(""), speaker=speaker)
    result = await run(Assistant(deps))
    mark = result.timeline.first("pause")
    assert mark.detail["already_s"] > mark.detail["pause_s"] > 0
    assert mark.detail["silence_s"] == 0
    assert speaker.silence_s == 0
    assert result.spoken == ["Hang on.", "It is done."]


async def wait_for_pause(assistant: Assistant, events: list) -> None:
    while not any(isinstance(e, StateChanged) and e.state == State.PAUSING for e in events):
        await asyncio.sleep(0.005)


async def test_speaking_up_stops_the_reply_and_the_rest_is_recorded_as_unspoken():
    record = ConversationRecord.open(":memory:")
    events: list = []
    deps = make_deps(speaker=CountingSpeaker(), seconds_per_char=0.01)
    assistant = Assistant(deps, on_event=events.append, record=record)

    async def speak_up(a: Assistant) -> None:
        await wait_for_pause(a, events)
        a.user_spoke()

    result = await run(assistant, speak_up)
    assert result.outcome == Outcome.INTERRUPTED
    statuses = [u.status for u in result.units]
    assert statuses == ["spoken", "unspoken", "unspoken", "unspoken", "unspoken"]
    assert result.timeline.first("barge_in").detail["mode"] == "stop"
    rows = [(e.role, e.status) for e in record.entries()]
    assert rows == [("user", "heard"), ("assistant", "spoken")] + [("assistant", "unspoken")] * 4 + [("turn", "interrupted")]
    # Everything the model wrote is in the record, heard or not.
    written = "".join(e.text for e in record.entries() if e.role == "assistant")
    assert written.replace(" ", "") == result.reply.replace(" ", "")


async def test_in_rush_mode_speaking_up_says_the_rest_at_once_without_pauses():
    events: list = []
    speaker = CountingSpeaker()
    deps = make_deps(speaker=speaker, seconds_per_char=0.01)
    assistant = Assistant(deps, on_event=events.append, barge_in="rush")
    rushed_at_silence: list[float] = []

    async def speak_up(a: Assistant) -> None:
        await wait_for_pause(a, events)
        a.user_spoke()
        rushed_at_silence.append(speaker.silence_s)

    result = await run(assistant, speak_up)
    assert result.outcome == Outcome.ANSWERED
    assert [u.status for u in result.units] == ["spoken"] * 5
    # No silence was written after the barge-in: the first pause was cut short, the rest skipped.
    assert speaker.silence_s == rushed_at_silence[0]
    rushed = result.timeline.first("barge_in")
    assert rushed.detail["mode"] == "rush"
    later = [m for m in result.timeline.all("pause") if m.t > rushed.t]
    assert later and all(m.detail["silence_s"] == 0 for m in later)


async def test_a_press_stops_the_reply_even_in_rush_mode():
    events: list = []
    deps = make_deps(speaker=CountingSpeaker(), seconds_per_char=0.01)
    assistant = Assistant(deps, on_event=events.append, barge_in="rush")

    async def press_again(a: Assistant) -> None:
        await wait_for_pause(a, events)
        a.start_turn(WavFileMicrophone(speech_like(0.3), realtime=False).chunks(), Press())

    result = await run(assistant, press_again)
    assert result.outcome == Outcome.INTERRUPTED
    assert result.spoken == [split_units(LONG)[0].strip()]
    assert result.unspoken and all(u.status == "unspoken" for u in result.units[1:])


async def test_a_turn_is_written_to_the_record_as_it_happens_unit_by_unit():
    record = ConversationRecord.open(":memory:")
    deps = make_deps(reply="It is noon. Enjoy your lunch.")
    seen: list[list[tuple[str, str]]] = []

    def on_event(event) -> None:
        # What the record held when each event was told: the words before the reply, each unit
        # as soon as it was heard, not all of it at the end.
        seen.append([(e.role, e.text) for e in record.entries()])

    result = await run(Assistant(deps, on_event=on_event, record=record))
    await asyncio.sleep(0)
    rows = [(e.turn, e.role, e.text, e.status, e.kind) for e in record.entries()]
    assert rows == [
        (1, "user", result.transcript, "heard", ""),
        (1, "assistant", "It is noon.", "spoken", "answer"),
        (1, "assistant", "Enjoy your lunch.", "spoken", "answer"),
        (1, "turn", "", "answered", ""),
    ]
    first, second = ("assistant", "It is noon."), ("assistant", "Enjoy your lunch.")
    assert any(("user", result.transcript) in then and first not in then for then in seen)
    assert any(first in then and second not in then for then in seen)


def test_an_unknown_barge_in_mode_is_refused():
    with pytest.raises(ValueError, match="'stop' or 'rush'"):
        Assistant(make_deps(), barge_in="shout")



def test_the_pause_listener_hears_only_in_pauses_and_after_the_guard():
    from agent.listening.barge_in import PauseListener
    from tests.fakes import EnergyVad

    heard: list[int] = []
    listener = PauseListener(EnergyVad(), lambda: heard.append(1), guard_s=0.0)
    loud = AudioChunk((0.3 * np.sin(np.arange(4096) / 3)).astype(np.float32), 16000)
    listener.accept(loud)
    assert heard == []  # closed: hearth is talking, the microphone hears hearth
    listener.open(at=time.monotonic() + 60)
    listener.accept(loud)
    assert heard == []  # the echo guard has not passed
    listener.open()
    listener.accept(AudioChunk(loud.samples, 48000))  # another rate is resampled, not refused
    listener.accept(loud)
    assert heard == [1]
    listener.accept(loud)
    assert heard == [1]  # once per pause
