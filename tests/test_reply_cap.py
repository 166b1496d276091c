"""A reply is never cut mid-sentence: a model stopped at its cap ends at its last whole sentence.

"hello … there" got "Hello, I'm here to help you with your business. You can find": the talker's
line is capped at 60 characters by the decision's grammar, and the cap fell mid-sentence. The same
happens wherever a model's text is cut: the plain reply's token cap, the reasoner's, the phrasing
of a tool's answer, the reasoner's wall time. What was spoken stays; the unfinished sentence is
neither spoken nor recorded.
"""

from __future__ import annotations

import asyncio

import pytest

from agent.assistant import Assistant
from agent.deciding.arguments import grounded
from agent.deciding.reasoner import Reasoner, ReasonerSettings, holding_line
from agent.deciding.tool_examples import default_planner
from agent.speaking.cadence import whole_sentences
from tests.fakes import ScriptedChatModel, say
from tests.test_reasoner import ReasonerChat, run_text
from tests.test_turn import make_deps
from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps

SAY_CHARS = 60
"""The talker's line as the default planner caps it (``max_chars``)."""


def cut(text: str, at: int = SAY_CHARS) -> str:
    assert len(text) > at
    return text[:at]


EN_LONG = "Hello, I'm here to help you with your business. You can find recipes and timers."
KO_LONG = "안녕하세요! 저는 부엌 도우미예요. 타이머, 장보기 목록, 메모를 도와드릴 수 있고 레시피도 찾아 드릴 수 있어요."


@pytest.mark.parametrize(("text", "expected"), [
    ("Hello, I'm here to help you with your business. You can find", "Hello, I'm here to help you with your business."),
    ("Bake at 180 °C. Then", "Bake at 180 °C."),
    ("It is done.", "It is done."),
    ("You can find", ""),
    ("안녕하세요. 저는 부엌 도우미예요 무엇을", "안녕하세요. 저는 부엌 도우미예요"),
    ("스테이크는 5분 쉬게 두세요. 그다음에 결", "스테이크는 5분 쉬게 두세요."),
])
def test_whole_sentences(text: str, expected: str) -> None:
    assert whole_sentences(text) == expected


# ---- the talker's line, capped by the decision's grammar -----------------------------------------


@pytest.mark.parametrize(("heard", "line", "expected", "language"), [
    # The talker's own line is never said, cut at its cap or not: a template is.
    ("tell me about yourself there", cut(EN_LONG), "Sorry, I'm not sure what you'd like. Could you say it another way?", "en"),
    ("안녕 거기", cut(KO_LONG), "죄송해요, 무슨 말씀인지 잘 모르겠어요. 다르게 한 번 말해 주시겠어요?", "ko"),
])
async def test_the_talkers_line_cut_at_its_cap_is_not_said(heard: str, line: str, expected: str, language: str) -> None:
    talker = TimedJson(decision(line, "none"))
    kitchen = Kitchen()
    deps, sink, executor = tool_deps(talker, kitchen, text=heard, grounded=grounded, language=language)
    deps.tools = type(deps.tools)(default_planner(talker, kitchen.registry(), language), executor, deps.tools.registry, grounded=grounded)
    (result,), assistant = await run_text(deps, executor, heard)
    assert " ".join(result.spoken) == expected and result.reply == expected
    assert assistant.history[-1].content == expected


async def test_a_decision_cut_by_the_token_cap_inside_its_line_says_the_whole_sentences() -> None:
    # A Korean line costs several tokens a syllable: the decision's token cap can fall inside it,
    # and the JSON never closes. No error is said; and since the talker's Korean is never spoken,
    # a greeting gets the greeting's template.
    pieces = [(0.0, '{"say": "안녕하세요. 저는 부엌 도우미예요. 타이머, 장보기 목록, 메모를 도와')]
    talker = TimedJson(pieces)
    deps, sink, executor = tool_deps(talker, Kitchen(), text="안녕", grounded=grounded, language="ko")
    (result,), _ = await run_text(deps, executor, "안녕")
    assert result.spoken == ["안녕하세요!"]


# ---- streamed replies, cut by their token cap ------------------------------------------------------


class CappedChat(ScriptedChatModel):
    """Streams its reply, then says it stopped at its token cap, as llama.cpp's ``finish_reason`` does."""

    capped = False

    async def stream(self, messages, max_tokens=None):
        self.capped = False
        async for piece in super().stream(messages, max_tokens):
            yield piece
        self.capped = True


@pytest.mark.parametrize(("reply", "kept"), [
    ("Rest the steak for five minutes. Then slice it across the", ["Rest the steak for five minutes."]),
    ("스테이크는 5분 쉬게 두세요. 그다음에 결 반대로", ["스테이크는 5분 쉬게 두세요."]),
])
async def test_a_plain_reply_at_its_token_cap_ends_at_its_last_sentence(reply: str, kept: list[str]) -> None:
    deps = make_deps(chat=CappedChat(reply))
    result = await say(Assistant(deps), "how long should I rest a steak")
    assert result.spoken == kept and result.reply == " ".join(kept)


async def test_a_plain_reply_that_ends_by_itself_keeps_its_last_words() -> None:
    deps = make_deps(chat=ScriptedChatModel("Sure. Here you go"))
    result = await say(Assistant(deps), "hi")
    assert result.spoken == ["Sure.", "Here you go"]


class CappedReasoner(ReasonerChat):
    capped = False

    async def stream(self, messages, max_tokens=None, json_schema=None, reply_start: str = ""):
        self.capped = False
        async for piece in super().stream(messages, max_tokens, json_schema, reply_start):
            yield piece
        self.capped = True


@pytest.mark.parametrize(("question", "answer", "kept", "language"), [
    ("How long should I rest a steak?", ["Rest it about five minutes. ", "Then slice it against the"], "Rest it about five minutes.", "en"),
    ("스테이크는 얼마나 쉬게 둬?", ["5분쯤 쉬게 두세요. ", "그다음에 결 반대로"], "5분쯤 쉬게 두세요.", "ko"),
])
async def test_the_reasoner_at_its_token_cap_ends_at_its_last_sentence(question: str, answer: list[str], kept: str, language: str) -> None:
    reasoner = CappedReasoner(answer)
    deps, sink, executor = tool_deps(TimedJson([]), Kitchen(), text=question, grounded=grounded, language=language)
    deps.reasoner = Reasoner(reasoner, deps.tools.registry, language)
    (result,), _ = await run_text(deps, executor, question)
    assert result.spoken == [holding_line("knowledge", language), kept]


async def test_the_reasoner_stopped_by_its_wall_time_mid_sentence_says_no_half_sentence() -> None:
    class Slow(ReasonerChat):
        async def stream(self, messages, max_tokens=None, json_schema=None, reply_start: str = ""):
            yield "Bread goes stale because the "
            await asyncio.sleep(5)
            yield "starch crystallises."

    deps, sink, executor = tool_deps(TimedJson([]), Kitchen(), text="Why does bread go stale?", grounded=grounded)
    deps.reasoner = Reasoner(Slow(), deps.tools.registry, "en", ReasonerSettings(max_s=0.5))
    (result,), _ = await run_text(deps, executor, "Why does bread go stale?")
    assert not any("because" in unit for unit in result.spoken + result.unspoken)
    assert "because" not in result.reply


async def test_a_phrased_tool_answer_at_its_token_cap_ends_at_its_last_sentence() -> None:
    class CappedJson(TimedJson):
        capped = False

        async def stream(self, messages, max_tokens=None, json_schema=None):
            self.capped = False
            async for piece in super().stream(messages, max_tokens, json_schema):
                yield piece
            self.capped = json_schema is None

    talker = CappedJson(decision("", "time_now", {}), answer="It's noon. Time for lunch, maybe a sand")
    deps, sink, executor = tool_deps(talker, Kitchen(), text="what time is it", grounded=grounded, answer="model")
    (result,), _ = await run_text(deps, executor, "what time is it")
    assert result.spoken == ["It's noon."]


async def test_near_its_cap_a_reply_is_cut_only_at_sentences_so_no_clause_of_a_cut_sentence_is_said() -> None:
    # The last sentence is long enough for Cadence to cut it at its comma; the cap falls after the
    # comma. Near the cap units end only at sentences, so neither half of it is heard.
    reply = ["Rest the steak for five minutes. ", "After that, ", "slice it thinly across the grain with a very sharp knife so each"]
    pieces = [w + " " for part in reply for w in part.split()]
    chat = CappedChat(pieces)
    deps = make_deps(chat=chat)
    deps.max_reply_tokens = len(pieces) + 4
    result = await say(Assistant(deps), "how long should I rest a steak")
    assert result.spoken == ["Rest the steak for five minutes."]
    assert result.reply == "Rest the steak for five minutes."


async def test_far_from_its_cap_a_long_sentence_is_still_cut_at_its_clauses() -> None:
    text = "Rest the steak for five minutes, then slice it thinly across the grain."
    deps = make_deps(chat=ScriptedChatModel(text))
    deps.max_reply_tokens = 200
    result = await say(Assistant(deps), "how long should I rest a steak")
    assert result.spoken == ["Rest the steak for five minutes,", "then slice it thinly across the grain."]


async def test_a_reasoner_that_fails_mid_sentence_leaves_no_half_sentence() -> None:
    class Broken(ReasonerChat):
        async def stream(self, messages, max_tokens=None, json_schema=None, reply_start: str = ""):
            yield "An egg for a runny yolk takes "
            raise RuntimeError("http://10.0.0.5:8080: connection lost")

    talker = TimedJson(decision("About six minutes.", "none"))
    deps, sink, executor = tool_deps(talker, Kitchen(), text="How long do I boil an egg?", grounded=grounded)
    deps.reasoner = Reasoner(Broken(), deps.tools.registry, "en")
    (result,), _ = await run_text(deps, executor, "How long do I boil an egg?")
    assert result.spoken == [holding_line("knowledge", "en"), "Sorry, I don't have an answer for that."]
    assert "runny" not in result.reply
