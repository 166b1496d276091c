"""After a release, the last partial was decoded on fewer words than the final, its last word cut
off: its disagreement with the final is no sign that the final was misheard. After a tap, the
last partial heard the words to their end, and disagreeing still counts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agent.features import Features
from audio.protocols import AudioChunk, Transcript
from tests.fakes import speech_like
from tests.test_turn import make_deps, run_turn


class EarlyWrongPartial:
    """A recognizer whose partials, each made on the audio so far, misheard the words cut short;
    its final, on all the audio, has them right."""

    language = "en"
    sample_rate = 16000

    def __init__(self, partial: str, final: str) -> None:
        self.partial, self.final = partial, final

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        seconds, next_partial = 0.0, 0.5
        async for chunk in audio:
            seconds += chunk.duration
            if seconds >= next_partial:
                next_partial += 0.5
                yield Transcript(self.partial, False, 0, seconds, self.partial)
        await asyncio.sleep(0.01)
        yield Transcript(self.final, True, len(self.final), seconds, self.final, avg_logprob=-0.1, no_speech_prob=0.01)


CASES = [
    ("Start the race time.", "Stop the rice timer."),
    ("Tecmo cough my shopping", "Take milk off my shopping list."),
    ("Said a time of four", "Set a timer for forty minutes."),
]


def _heard(result) -> dict:
    return result.timeline.first("final_transcript").detail


@pytest.mark.parametrize(("partial", "final"), CASES)
async def test_a_held_turn_is_not_doubted_for_a_partial_made_before_the_release(partial: str, final: str) -> None:
    deps = make_deps(recognizer=EarlyWrongPartial(partial, final))
    result, _ = await run_turn(deps, speech_like(2.0, silence_after_s=0.5), release_after_s=1.6, realtime=True)
    assert result.timeline.first("released") is not None
    assert result.timeline.first("partial_not_weighed") is not None
    assert _heard(result)["verdict"] == "sure" and _heard(result)["agreement"] is None


@pytest.mark.parametrize(("partial", "final"), CASES)
async def test_switched_off_or_tapped_the_disagreeing_partial_still_counts(partial: str, final: str) -> None:
    held = make_deps(recognizer=EarlyWrongPartial(partial, final))
    held.features = Features().without("released-hearing")
    result, _ = await run_turn(held, speech_like(2.0, silence_after_s=0.5), release_after_s=1.6, realtime=True)
    assert result.timeline.first("partial_not_weighed") is None
    assert _heard(result)["verdict"] != "sure" and _heard(result)["weakest"] == "agreement"

    tapped = make_deps(recognizer=EarlyWrongPartial(partial, final))
    result, _ = await run_turn(tapped, speech_like(1.0, silence_after_s=2.0), realtime=True)
    assert result.timeline.first("released") is None and result.timeline.first("partial_not_weighed") is None
    assert _heard(result)["verdict"] != "sure" and _heard(result)["weakest"] == "agreement"
