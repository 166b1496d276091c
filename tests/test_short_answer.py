"""The reasoner out of time: the kitchen reference's best fact, plainly marked, rather than nothing.

"How long should I rest a steak?" got "Let me think." and, 15.7 s later on a busy machine,
"Sorry, I couldn't work that out in time." The reference held the answer all along; it is said as
a short answer. The apology stays for a question the reference has nothing near enough for.
"""

from __future__ import annotations

import asyncio

import pytest

from agent.deciding.arguments import grounded
from agent.deciding.reasoner import Reasoner, ReasonerSettings, cap_line, holding_line, short_answer
from agent.deciding.reference import KitchenReference
from tests.test_reasoner import ReasonerChat, run_text
from tests.test_turn_tools import Kitchen, TimedJson, tool_deps


class Busy(ReasonerChat):
    """A reasoner on a busy machine: ``said`` first, then nothing for a long while."""

    def __init__(self, said: str = "") -> None:
        super().__init__()
        self.said = said

    async def stream(self, messages, max_tokens=None, json_schema=None, reply_start: str = ""):
        self.asked.append((list(messages), json_schema, reply_start))
        if self.said:
            yield self.said
        await asyncio.sleep(10)
        yield "Never heard."


def busy(question: str, language: str, said: str = ""):
    deps, sink, executor = tool_deps(TimedJson([]), Kitchen(), text=question, grounded=grounded, language=language)
    deps.reasoner = Reasoner(Busy(said), deps.tools.registry, language, ReasonerSettings(max_s=0.5), reference=KitchenReference())
    return deps, sink, executor


@pytest.mark.parametrize(("question", "language", "fact"), [
    ("How long should I rest a steak?", "en", "Rest a steak about 5 to 10 minutes before cutting"),
    ("스테이크는 얼마나 쉬게 둬?", "ko", "스테이크는 구운 뒤 5~10분 쉬게 했다가"),
])
async def test_out_of_time_the_reference_gives_a_short_answer(question: str, language: str, fact: str) -> None:
    deps, sink, executor = busy(question, language)
    (result,), _ = await run_text(deps, executor, question)
    best = KitchenReference().lookup(question, language)[0]
    assert best.startswith(fact)
    assert result.spoken[0] == holding_line("knowledge", language)
    assert " ".join(result.spoken[1:]) == short_answer(best, language)  # "Short answer:" is a unit of its own, a breath
    assert result.reply == holding_line("knowledge", language) + " " + short_answer(best, language)
    assert cap_line(language) not in result.reply
    assert result.timeline.first("reasoner_capped") is not None and result.timeline.first("short_answer") is not None


def test_the_short_answer_is_marked_as_one() -> None:
    assert short_answer("Rest a steak about 5 minutes.", "en") == "Short answer: Rest a steak about 5 minutes."
    assert short_answer("스테이크는 5분 쉬게 하세요.", "ko") == "짧게 말씀드리면, 스테이크는 5분 쉬게 하세요."


@pytest.mark.parametrize(("question", "language"), [("Why is the sky blue?", "en"), ("왜 하늘은 파래?", "ko")])
async def test_with_nothing_relevant_in_the_reference_the_apology_stays(question: str, language: str) -> None:
    deps, sink, executor = busy(question, language)
    (result,), _ = await run_text(deps, executor, question)
    assert result.spoken == [holding_line("knowledge", language), cap_line(language)]


async def test_a_whole_sentence_the_reasoner_said_in_time_stands_alone() -> None:
    deps, sink, executor = busy("How long should I rest a steak?", "en", said="Rest it about five minutes. Then slice it")
    (result,), _ = await run_text(deps, executor, "How long should I rest a steak?")
    assert result.spoken == [holding_line("knowledge", "en"), "Rest it about five minutes."]


async def test_a_half_sentence_in_time_is_dropped_and_the_short_answer_follows() -> None:
    deps, sink, executor = busy("How long should I rest a steak?", "en", said="A steak should rest for about")
    (result,), _ = await run_text(deps, executor, "How long should I rest a steak?")
    assert " ".join(result.spoken[1:]).startswith("Short answer: Rest a steak about 5 to 10 minutes")
    assert "should rest for" not in result.reply
