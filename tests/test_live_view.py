"""The live view: the turn under way as a display shows it, revised as it goes, apart from the record."""

from __future__ import annotations

from agent.assistant import Assistant
from agent.events import (
    Delegated, EarlyCall, SpeechStarted, State, StateChanged, Thought, ToolCalled, TranscriptFinal, TranscriptPartial,
    TurnInterrupted, UnitSpoken,
)
from agent.live_view import LiveView
from tests.fakes import say
from tests.test_reasoner import ReasonerChat, with_reasoner
from tests.test_turn_tools import TimedJson


def test_partials_thoughts_and_look_ups_are_revised_as_the_turn_goes():
    view = LiveView()
    seen = []
    view.subscribe(seen.append)
    for event in [
        SpeechStarted(), StateChanged(State.LISTENING), TranscriptPartial("what's the air"),
        Thought("what's the air", "air_quality", {}), EarlyCall("air_quality", {}, "running"),
        TranscriptPartial("what's the air like in Ilsan"), EarlyCall("air_quality", {}, "ok"),
        TranscriptFinal("What's the air like in Ilsan?"), TranscriptPartial("what's the"),  # late: ignored
        ToolCalled("air_quality", {"location": "Ilsan"}, "ok"), UnitSpoken("Moderate today.", "answer"),
        TurnInterrupted(("Wear a mask outside.",)),
    ]:
        view.apply(event)
    snap = view.snapshot()
    assert snap["heard"] == "What's the air like in Ilsan?" and snap["final"]
    assert snap["thoughts"] == [{"heard": "what's the air", "tool": "air_quality", "args": {}}]
    assert snap["fetching"] == {"air_quality": {"args": {}, "status": "ok"}}
    assert [(u["text"], u["status"]) for u in snap["units"]] == [("Moderate today.", "heard"), ("Wear a mask outside.", "cut")]
    assert seen[-1] == snap and len(seen) == 10  # every change told; the speech start and the late partial change nothing
    view.apply(SpeechStarted())  # the next utterance starts a fresh view
    assert view.snapshot()["heard"] == "" and view.snapshot()["units"] == []


async def test_a_delegated_turn_shows_who_answered_and_each_unit_in_order():
    talker = TimedJson([])
    deps, sink, executor, _ = with_reasoner(talker, ReasonerChat(["About six minutes."]), "How long do I boil an egg?")
    view = LiveView()
    assistant = Assistant(deps, on_event=view)
    executor.start()
    try:
        await say(assistant, "How long do I boil an egg?")
    finally:
        await executor.close()
    snap = view.snapshot()
    assert snap["answered_by"] == "reasoner (knowledge)"
    assert [(u["kind"], u["status"]) for u in snap["units"]] == [("holding", "heard"), ("answer", "heard")]
    assert snap["heard"] == "How long do I boil an egg?"
    assert Delegated("knowledge", "local") != Delegated("knowledge", "remote")


async def test_each_unit_is_told_heard_as_it_ends_not_when_the_turn_does():
    """A synthesizer that makes each unit one chunk: the first unit is told heard before the second is spoken."""
    from audio.wav import WavFileSpeaker
    from tests.fakes import ScriptedChatModel, ToneSynthesizer, speech_like
    from tests.test_turn import make_deps, run_turn

    events: list = []
    deps = make_deps(chat=ScriptedChatModel("Bring the water to the boil. Then add the pasta."),
                     synthesizer=ToneSynthesizer(seconds_per_char=0.005), speaker=WavFileSpeaker(16000))
    result, _ = await run_turn(deps, speech_like(0.4), events=events)
    assert result.spoken == ["Bring the water to the boil.", "Then add the pasta."]
    told = [i for i, e in enumerate(events) if isinstance(e, UnitSpoken)]
    speaking = [i for i, e in enumerate(events) if isinstance(e, StateChanged) and e.state == State.SPEAKING]
    assert len(told) == 2 and len(speaking) >= 2
    assert told[0] < speaking[-1] < told[1]  # the first told before the second unit's voice began


def test_words_given_as_text_are_shown_as_text_and_its_units_as_sent_not_heard():
    view = LiveView()
    for event in [SpeechStarted(), TranscriptFinal("set a timer"), ToolCalled("timer_start", {}, "ok"),
                  UnitSpoken("Timer set.", "answer")]:
        view.apply(event)
    assert view.snapshot()["typed"] is False and view.snapshot()["units"][0]["status"] == "heard"
    # A text turn (Home Assistant's handle) comes next: its words arrive final, as text.
    for event in [TranscriptFinal("what's on my list", typed=True), UnitSpoken("Milk and eggs.", "answer"),
                  TurnInterrupted(("And flour.",))]:
        view.apply(event)
    snap = view.snapshot()
    assert snap["heard"] == "what's on my list" and snap["final"] and snap["typed"] is True
    assert snap["calls"] == []  # the turn before's calls are not this turn's
    assert [(u["text"], u["status"]) for u in snap["units"]] == [("Milk and eggs.", "sent"), ("And flour.", "cut")]
    view.apply(SpeechStarted())  # a spoken turn after it is heard again
    view.apply(TranscriptFinal("thanks"))
    assert view.snapshot()["typed"] is False
