"""The end of a tapped turn: the sound (a scripted end-of-turn model), the words before the pause, the room."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from agent.features import Features
from agent.listening.listen import ListenSettings
from agent.results import Outcome
from agent.listening.turn_end import TurnEndSettings, quiet_since, sounds_unfinished
from audio.protocols import AudioChunk, TurnEndModel
from tests.fakes import EnergyVad, ScriptedRecognizer, ScriptedTurnModel, speech_like
from tests.test_turn import make_deps, run_turn

RATE = 16000


def tones(*parts: tuple[str, float]) -> AudioChunk:
    """("speech", s) stretches of tone and ("quiet", s) stretches of silence, in order."""
    pieces = []
    for kind, seconds in parts:
        t = np.arange(int(seconds * RATE)) / RATE
        pieces.append((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32) if kind == "speech" else np.zeros(len(t), np.float32))
    return AudioChunk(np.concatenate(pieces), RATE)


class WordsRecognizer(ScriptedRecognizer):
    """Its partial after every chunk is ``text``: the words before any pause are known at once."""

    async def transcribe(self, audio, context="", *, hypotheses=1):
        from audio.protocols import Transcript

        seconds = 0.0
        async for chunk in audio:
            seconds += chunk.duration
            yield Transcript(self.text, False, 0, seconds)
        self.audio_seen.append(seconds)
        yield Transcript(self.text, True, len(self.text), seconds, self.text)


def deps_with(model: TurnEndModel | None, text: str = "what time is it", unsure_s: float = 1.0, **kw):
    kw.setdefault("recognizer", WordsRecognizer(text))
    deps = make_deps(text=text, listen=ListenSettings(turn_end=TurnEndSettings(end_silence_s=unsure_s)), **kw)
    deps.vad = EnergyVad(min_silence_s=0.1)
    deps.turn_model = model
    return deps


SPEECH_ENDS_S = 0.3 + 1.0
"""Where the speech of ``speech_like(1.0, …)`` ends in its audio (after its 0.3 s of silence)."""


def endpoint_after_speech(result, speech_ends_s: float = SPEECH_ENDS_S) -> float:
    """The silence heard after the speech before the listener ended the turn, counted in audio (the
    samples it had taken when it decided), not on the wall clock, which a busy machine stretches."""
    return result.timeline.first("endpoint").detail["audio_s"] - speech_ends_s


async def test_a_pause_that_sounds_finished_ends_the_turn_at_once():
    model = ScriptedTurnModel(p=0.9)
    recognizer = ScriptedRecognizer("what time is it", partial_every_s=100.0)
    result, _ = await run_turn(deps_with(model, recognizer=recognizer), speech_like(1.0, silence_after_s=2.0), realtime=True)
    assert result.outcome == Outcome.ANSWERED
    assert endpoint_after_speech(result) < 0.3  # the fixed tap silence would have been 0.5 s
    assert result.timeline.first("endpoint").detail["by"] == "finished"
    assert model.calls, "the model was never asked"
    # The model heard the utterance up to the pause, not the silence before the speech began.
    assert model.calls[0] == pytest.approx(0.3 + 1.0 + 0.1, abs=0.1)


async def test_a_pause_that_sounds_unfinished_waits_for_the_longer_silence():
    model = ScriptedTurnModel(p=0.1)
    result, _ = await run_turn(deps_with(model, unsure_s=0.8), speech_like(1.0, silence_after_s=2.0), realtime=True)
    assert endpoint_after_speech(result) == pytest.approx(0.8, abs=0.1)
    assert result.timeline.first("endpoint").detail["by"] == "silence"
    # While the silence grew the model was asked again.
    assert len(model.calls) >= 2


async def test_words_that_leave_the_request_open_outweigh_a_finished_sound():
    model = ScriptedTurnModel(p=0.95)
    result, _ = await run_turn(
        deps_with(model, text="set a timer for", unsure_s=0.8), speech_like(1.0, silence_after_s=2.0), realtime=True
    )
    assert endpoint_after_speech(result) == pytest.approx(0.8, abs=0.1)


async def test_a_hesitation_in_the_middle_of_a_request_does_not_cut_it_off():
    # "Set a timer for … ten minutes": the first half's words leave it open, so the turn waits
    # through the 0.6 s hesitation and hears the rest.
    model = ScriptedTurnModel(p=0.95)
    recognizer = WordsRecognizer("set a timer for")
    audio = tones(("quiet", 0.3), ("speech", 1.0), ("quiet", 0.6), ("speech", 0.7), ("quiet", 2.0))
    result, _ = await run_turn(deps_with(model, recognizer=recognizer, unsure_s=1.0), audio, realtime=True)
    assert result.outcome == Outcome.ANSWERED
    assert result.timeline.first("endpoint").t > 2.6  # after the second stretch of speech
    assert recognizer.audio_seen[-1] >= 0.3 + 1.0 + 0.6 + 0.7


async def test_without_the_feature_a_fixed_silence_ends_the_turn():
    model = ScriptedTurnModel(p=0.99)
    deps = deps_with(model)
    deps.features = Features().without("end-of-turn")
    result, _ = await run_turn(deps, speech_like(1.0, silence_after_s=2.0), realtime=True)
    assert endpoint_after_speech(result) == pytest.approx(0.5, abs=0.1)
    assert model.calls == []


async def test_a_held_button_is_not_second_guessed_by_the_model():
    model = ScriptedTurnModel(p=0.99)
    result, _ = await run_turn(deps_with(model), speech_like(2.5, silence_after_s=0.5), release_after_s=1.5, realtime=True)
    assert result.timeline.first("endpoint").detail["by"] == "button"
    assert model.calls == []
    # The release is on the timeline where the thumb came up (1.5 s into the audio), before the
    # listener's end, which waits for the next chunk.
    released, endpoint = result.timeline.first("released"), result.timeline.first("endpoint")
    assert released is not None and released.t <= endpoint.t < released.t + 0.1


class BrokenTurnModel:
    sample_rate = 16000

    def probability(self, samples: np.ndarray) -> float:
        raise RuntimeError("onnxruntime fell over")


async def test_a_failing_model_leaves_the_decision_to_the_silence(caplog):
    result, _ = await run_turn(deps_with(BrokenTurnModel(), unsure_s=0.8), speech_like(1.0, silence_after_s=2.0), realtime=True)
    assert result.outcome == Outcome.ANSWERED
    assert endpoint_after_speech(result) == pytest.approx(0.5, abs=0.1)  # the tap silence, as without a model
    assert "end-of-turn model failed" in caplog.text


@pytest.mark.parametrize(
    ("text", "language", "open_"),
    [
        ("Set a timer for", "en", True),
        ("Find me a recipe for", "en", True),
        ("Cancel the", "en", True),
        ("How many grams is", "en", True),
        ("Add", "en", True),
        ("Set a timer, um", "en", True),
        ("", "en", True),
        ("Set a timer for ten minutes.", "en", False),
        ("What's the weather like?", "en", False),
        ("Turn the lights on.", "en", False),
        ("What should I add?", "en", False),
        ("How long does it take?", "en", False),
        ("장보기 목록에", "ko", True),
        ("타이머", "ko", True),
        ("김치찌개", "ko", True),
        ("3분", "ko", True),
        ("타이머 십 분 맞춰 줘.", "ko", False),
        ("오늘 미세먼지 어때?", "ko", False),
        ("지금 몇 시야", "ko", False),
        ("레시피 찾아 주세요", "ko", False),
    ],
)
def test_words_that_leave_a_request_open(text: str, language: str, open_: bool) -> None:
    assert sounds_unfinished(text, language) is open_


def test_the_room_counts_as_quiet_until_a_voice_comes_back() -> None:
    rng = np.random.default_rng(0)
    hum = rng.normal(0, 0.003, 3 * RATE).astype(np.float32)  # an extractor fan through it all
    voice = tones(("quiet", 0.5), ("speech", 1.0), ("quiet", 1.5)).samples + hum
    speech = (int(0.5 * RATE), int(1.5 * RATE))
    assert quiet_since(voice, speech[1], speech, RATE, 0.0)
    again = voice.copy()
    again[int(2.2 * RATE) : int(2.3 * RATE)] += tones(("speech", 0.1)).samples
    assert not quiet_since(again, speech[1], speech, RATE, 0.0)
    # A softer word still counts as a voice coming back: 12 dB below the first.
    again = voice.copy()
    again[int(2.2 * RATE) : int(2.3 * RATE)] += 0.25 * tones(("speech", 0.1)).samples
    assert not quiet_since(again, speech[1], speech, RATE, 0.0)


async def test_a_user_who_goes_on_after_an_early_end_is_heard_whole_and_answered_once():
    # The sound says finished and the words before the pause look whole (a recognizer that
    # drops a dangling "for"): the turn ends early and starts thinking, but keeps listening; the
    # user goes on, so it drops what it prepared and hears the whole request.
    model = ScriptedTurnModel(p=0.95)
    recognizer = ScriptedRecognizer("find me a recipe", partial_every_s=100.0)
    audio = tones(("quiet", 0.3), ("speech", 1.0), ("quiet", 0.7), ("speech", 0.7), ("quiet", 2.5))
    deps = deps_with(model, recognizer=recognizer, unsure_s=1.5)
    result, _ = await run_turn(deps, audio, realtime=True)
    tl = result.timeline
    assert [m.detail["by"] for m in tl.all("endpoint")] == ["finished", "finished"]
    assert tl.first("listening_resumed") is not None
    assert recognizer.audio_seen[-1] >= 0.3 + 1.0 + 0.7 + 0.7  # the final decode heard it all
    assert result.outcome == Outcome.ANSWERED and result.spoken
    # Nothing was said before the user had gone on and finished.
    assert tl.first("first_audio_out").t > 2.7
    assert len(deps.chat.calls) == 2


@pytest.mark.parametrize(("p", "partial", "features", "sure"), [
    (0.95, "what time is it", Features(), True),
    (0.8, "what time is it", Features(), False),  # the sound is not sure enough
    (0.95, "what time", Features(), False),  # the last partial lacked the final's words
    (0.95, "what time is it", Features().without("sure-end"), False),
])
async def test_after_an_early_end_nothing_is_said_before_the_user_has_surely_finished(p, partial, features, sure):
    class Recognizer(WordsRecognizer):
        async def transcribe(self, audio, context="", *, hypotheses=1):
            async for hyp in super().transcribe(audio, context, hypotheses=hypotheses):
                yield hyp if hyp.is_final else replace(hyp, text=partial)

    model = ScriptedTurnModel(p=p)
    deps = deps_with(model, unsure_s=1.2, recognizer=Recognizer("what time is it"))
    deps.listen = replace(deps.listen, turn_end=replace(deps.listen.turn_end, sure_end_silence_s=0.6))
    deps.features = features
    result, _ = await run_turn(deps, speech_like(1.0, silence_after_s=2.5), realtime=True)
    tl = result.timeline
    assert tl.first("endpoint").detail["by"] == "finished"
    assert endpoint_after_speech(result) < 0.3
    assert tl.first("answer_after").detail["sure"] is sure
    if sure:  # the sound, the words, the hearing and two decodes agree: the short wait
        assert tl.first("answer_after").detail["silence_s"] == 0.6
        assert tl.between("speech_end", "first_audio_out") >= 0.6
    else:
        assert tl.first("answer_after").detail["silence_s"] == 1.2
        assert tl.between("speech_end", "first_audio_out") >= 1.2
    assert tl.first("listening_resumed") is None


def test_a_sure_end_never_waits_longer_than_an_unsure_one() -> None:
    from firmware_py.config import HearthConfig, ListenConfig
    from firmware_py.wiring import listen_settings

    turn_end = listen_settings(HearthConfig(listen=ListenConfig(end_silence_s=0.8, sure_end_silence_s=2.0))).turn_end
    assert turn_end.sure_end_silence_s == 0.8


@pytest.mark.parametrize(("words", "whole"), [("add milk please", True), ("add it please", False)])
async def test_a_sure_end_waits_the_long_silence_when_the_act_asked_for_is_not_whole(words: str, whole: bool):
    # "Set a timer." (the user paused after "for") sounds finished, but the act it asks for has no
    # length: the quick answer waits for the long silence, in case the rest is coming.
    from agent.deciding.arguments import grounded
    from agent.deciding.tool_use import ToolUse
    from tests.test_heartbeat import MILK, Kitchen, ScriptedPlanner
    from tools.executor import ToolExecutor

    kitchen = Kitchen()
    registry = kitchen.registry()
    executor = ToolExecutor(registry)
    executor.start()
    try:
        deps = deps_with(ScriptedTurnModel(p=0.95), text=words, unsure_s=1.2, recognizer=WordsRecognizer(words))
        deps.listen = replace(deps.listen, turn_end=replace(deps.listen.turn_end, sure_end_silence_s=0.6))
        deps.tools = ToolUse(ScriptedPlanner([("add", MILK)]), executor, registry, grounded=grounded)
        result, _ = await run_turn(deps, speech_like(1.0, silence_after_s=2.5), realtime=True)
    finally:
        await executor.close()
    tl = result.timeline
    assert tl.first("answer_after").detail["sure"] is True
    assert (tl.last("answer_after").detail.get("call") is False) is not whole
    assert (tl.between("speech_end", "first_audio_out") < 1.2) is whole
    assert (kitchen.runs == [("shopping_add", {"item": "milk"})]) is whole  # "it" is asked back, never added
