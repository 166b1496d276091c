"""The reasoner: the larger model that answers what the talker cannot (:mod:`agent.deciding.routing`).

It does two things, each bounded:

* ``answer``: a spoken answer to a question for knowledge, streamed as it is written, so Cadence
  speaks its first unit while the rest is still being written. The talker's holding line ("Let
  me think.") is already on its way to the speaker; a local model is given it as the start of its
  own reply and continues it, so the two read as one assistant. A remote model, whose API has no
  such start, is told the line in its system prompt.
* ``plan``: the calls one request asks for ("set a timer for ten minutes and add eggs"), under a
  grammar that allows only the registry's tools with valid arguments, at most ``max_calls``.

Its prompt heads (the system prompt, and the conversation so far) are kept warm: evaluated when
the voice session starts and after each turn, in the background, so a delegated request reads
only its own words. The caps (tokens, calls, wall time) are the Responder's to enforce with
:class:`ReasonerSettings`; here the token caps are passed to the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent.deciding.reference import KitchenReference
from agent.deciding.routing import Reason
from agent.deciding.tool_calls import ToolPlan, describe_tools
from agent.model.llm import ChatMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReasonerSettings:
    """How much effort one delegated request may cost."""

    max_tokens: int = 96
    """Longest spoken answer, in tokens (two short sentences)."""
    plan_max_tokens: int = 160
    """Longest list of calls, in tokens."""
    max_calls: int = 3
    """Tool calls one request may make; the rest of a longer list is dropped and said so."""
    max_s: float = 15.0
    """Wall time from delegation to the end of the answer; past it the reasoner is stopped and the
    talker says what is known."""
    history_turns: int = 4
    """Exchanges of the conversation the reasoner sees (the talker's own history is separate), so
    a turn's cost does not grow with the conversation."""


_ANSWER_PROMPT = {
    "en": (
        "You are hearth, a kitchen voice assistant, answering a cook aloud. Answer in one or two short "
        "spoken sentences that start with the answer itself; say numbers with their units. No lists, no markdown."
    ),
    "ko": (
        "당신은 부엌 음성 비서 hearth입니다. 요리하는 사람에게 소리 내어 답합니다. 답 자체로 시작하는 한두 "
        "문장의 짧은 존댓말로, 숫자는 단위와 함께 말하세요. 목록이나 마크다운은 쓰지 마세요. 한국어로만 답하세요."
    ),
}
# Worked answers, in the kept head: the length, the register and the answer-first order are shown
# rather than only asked for. None of them is a question of the knowledge suites.
_ANSWER_EXAMPLES = {
    "en": (
        ("How long does brown rice take to cook?", "Brown rice simmers covered for about 40 to 45 minutes, then rests 10 minutes off the heat.",
         "Brown rice takes about 40 to 45 minutes at a gentle simmer, then let it rest for 10 minutes."),
        ("What can I use instead of honey?", "", "Maple syrup or golden syrup, in the same amount."),
        ("Why does my bread crust go soft?", "A crust softens as moisture from the crumb moves into it; a paper bag keeps it crisper than plastic.",
         "Moisture from the inside moves into the crust; a paper bag keeps it crisp longer."),
    ),
    "ko": (
        ("고구마는 몇 분 쪄?", "고구마는 김이 오른 찜기에서 30분에서 40분쯤 쪄요. 젓가락이 쑥 들어가면 다 익은 거예요.",
         "고구마는 김이 오른 찜기에서 30분에서 40분쯤 찌면 돼요."),
        ("꿀 대신 뭘 써?", "", "올리고당이나 메이플 시럽을 같은 양으로 쓰면 돼요."),
        ("바나나는 왜 검게 변해?", "바나나 껍질은 효소가 산소와 만나 갈색으로 변해요. 냉장고에 넣으면 껍질은 더 빨리 검어져요.",
         "껍질 속 효소가 공기와 만나서 갈색으로 변하는 거예요."),
    ),
}
"""Worked answers, in the kept head: the length, the register, the answer-first order and the use of
the reference's notes are shown rather than only asked for. None is a question of the knowledge suites."""

_NOTES = {"en": "Kitchen notes: {facts}", "ko": "부엌 참고: {facts}"}

JUDGED_CHARS = 16
"""Letters of an answer's opening held before it is judged a copy of a worked answer or not."""
COPIED = 0.9
"""Share of an opening's letter triples found in a worked answer above which it is a copy of it."""
def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _triples(text: str) -> set[str]:
    letters = _letters(text)
    return {letters[i:i + 3] for i in range(len(letters) - 2)}


def _marks(text: str, language: str) -> set[str]:
    """What names a question's subject: its words of four letters or more, or in Korean each
    word's syllable pairs (감자는 → 감자, 자는)."""
    words = re.findall(r"\w+", text.casefold())
    if language == "ko":
        return {w[i:i + 2] for w in words for i in range(len(w) - 1)}
    return {w for w in words if len(w) >= 4}


def copies_a_worked_answer(opening: str, question: str, language: str) -> bool:
    """Whether ``opening`` is mostly a worked answer's (or its note's) words and names nothing the
    question names: a small model copying its example instead of answering ("감자 몇 분 쪄?"
    answered in the sweet potatoes' form, but about potatoes, is an answer)."""
    said = _triples(opening)
    if len(said) < 4:
        return False
    language = "ko" if language == "ko" else "en"
    for request, note, answer in _ANSWER_EXAMPLES[language]:
        if len(said & _triples(f"{note} {answer}")) / len(said) < COPIED:
            continue
        if not _marks(opening, language) & _marks(question, language):
            return True
    return False


def with_notes(text: str, facts: Sequence[str], language: str) -> str:
    """The question as the reasoner reads it: the facts the reference found for it first, so that a
    prompt read on the partial words (:class:`EarlyReading`) is the start of the final one."""
    if not facts:
        return text
    return f"({_NOTES['ko' if language == 'ko' else 'en'].format(facts=' '.join(facts))})\n{text}"


_PLAN_PROMPT = {
    "en": (
        "You turn a kitchen request into tool calls, one call for each thing asked, in the order "
        "said. Use only what the user said; never add a call they did not ask for.\nTools:\n{tools}"
    ),
    "ko": (
        "부엌 요청을 도구 호출로 바꿉니다. 요청한 것마다 호출 하나씩, 말한 순서대로. 사용자가 말한 것만 "
        "쓰고, 요청하지 않은 호출은 절대 추가하지 마세요.\nTools:\n{tools}"
    ),
}
_PLAN_EXAMPLE = {
    "en": ("Set a timer for five minutes and add milk to the list.",
           {"calls": [{"tool": "timer_start", "args": {"duration_s": 300}}, {"tool": "shopping_add", "args": {"item": "milk"}}]}),
    "ko": ("오 분 타이머 맞추고 우유 목록에 추가해 줘.",
           {"calls": [{"tool": "timer_start", "args": {"duration_s": 300}}, {"tool": "shopping_add", "args": {"item": "우유"}}]}),
}

_HOLDING = {
    "en": {"knowledge": "Let me think.", "talker_unsure": "Let me think.", "several_acts": "Okay, one at a time."},
    "ko": {"knowledge": "잠깐만요, 생각해 볼게요.", "talker_unsure": "잠깐만요, 생각해 볼게요.", "several_acts": "네, 하나씩 할게요."},
}
_CAP_HIT = {
    "en": "Sorry, I couldn't work that out in time.",
    "ko": "죄송해요, 제때 답을 찾지 못했어요.",
}


_SHORT_ANSWER = {
    "en": "Short answer: {fact}",
    "ko": "짧게 말씀드리면, {fact}",
}


def short_answer(fact: str, language: str) -> str:
    """The kitchen reference's fact said as it stands, marked as a short answer, when the reasoner
    ran out of time before it said anything whole; in the fact's own language."""
    korean = language == "ko" or any("가" <= ch <= "힣" for ch in fact)
    return _SHORT_ANSWER["ko" if korean else "en"].format(fact=fact.strip())


def holding_line(reason: Reason, language: str) -> str:
    """The talker's line while the reasoner works: short, and one its answer can follow."""
    return _HOLDING["ko" if language == "ko" else "en"][reason]


def cap_line(language: str) -> str:
    """What the talker says when a cap stopped the reasoner before it said anything whole, and the
    kitchen reference has nothing near enough to the question (else :func:`short_answer`)."""
    return _CAP_HIT["ko" if language == "ko" else "en"]


def _with_head(head: Sequence[ChatMessage], history: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The fixed head and the conversation, the last of them marked as the head to keep."""
    messages = [*head, *(replace(m, keep=False) for m in history)]
    messages[-1] = replace(messages[-1], keep=True)
    return messages


class Reasoner:
    """The larger model, with its prompts; stateless between requests but for the model's cache."""

    def __init__(
        self,
        chat: Any,
        registry: Any,
        language: str,
        settings: ReasonerSettings = ReasonerSettings(),
        where: str = "local",
        reference: KitchenReference | None = None,
    ) -> None:
        self.chat = chat
        self.reference = reference
        """Vetted facts a question for knowledge is answered from; None: the model's own knowledge."""
        self.registry = registry
        self.language = "ko" if language == "ko" else "en"
        self.settings = settings
        self.where = where
        """"local" or the server's address: for the log, the timeline and the bench."""
        self.calls_schema = self._calls_schema()

    # -- prompts --------------------------------------------------------------------------
    def _history(self, history: Sequence[ChatMessage]) -> list[ChatMessage]:
        keep = 2 * self.settings.history_turns
        return [m for m in history if m.role in ("user", "assistant")][-keep:] if keep else []

    def answer_messages(self, text: str, history: Sequence[ChatMessage], line: str = "", facts: Sequence[str] = ()) -> list[ChatMessage]:
        system = _ANSWER_PROMPT[self.language]
        if line and not self.continues_reply:
            system += f'\nYou have just said "{line}"; go on from there without repeating it.'
        head = [ChatMessage("system", system)]
        for request, note, answer in _ANSWER_EXAMPLES[self.language]:
            head += [ChatMessage("user", with_notes(request, [note] if note else [], self.language)), ChatMessage("assistant", answer)]
        return [*_with_head(head, self._history(history)), ChatMessage("user", with_notes(text, facts, self.language))]

    def plan_messages(self, text: str, history: Sequence[ChatMessage]) -> list[ChatMessage]:
        tools = describe_tools(self.registry.specs, detail=True)
        request, calls = _PLAN_EXAMPLE[self.language]
        head = [
            ChatMessage("system", _PLAN_PROMPT[self.language].format(tools=tools)),
            ChatMessage("user", request),
            ChatMessage("assistant", json.dumps(calls, ensure_ascii=False)),
        ]
        return [*_with_head(head, self._history(history)), ChatMessage("user", text)]

    @property
    def continues_reply(self) -> bool:
        """Whether the model can be handed the start of its own reply (a local llama.cpp model)."""
        return bool(getattr(self.chat, "continues_reply", False))

    def _calls_schema(self) -> dict[str, Any]:
        branches = []
        for branch in self.registry.tool_call_schema(allow_none=False)["anyOf"]:
            props = {k: v for k, v in branch["properties"].items() if k != "say"}
            required = [k for k in branch["required"] if k != "say"]
            branches.append({**branch, "properties": props, "required": required})
        calls = {"type": "array", "items": {"anyOf": branches}, "minItems": 1, "maxItems": self.settings.max_calls}
        return {"type": "object", "properties": {"calls": calls}, "required": ["calls"], "additionalProperties": False}

    # -- warm -----------------------------------------------------------------------------
    def heads(self, history: Sequence[ChatMessage] = ()) -> list[list[ChatMessage]]:
        """The prompt heads worth keeping now: each prompt's fixed part (for a conversation that
        starts afresh), and each with the conversation so far."""
        fixed = [self.answer_messages("", ())[:-1], self.plan_messages("", ())[:-1]]
        if not self._history(history):
            return fixed
        return [*fixed, self.answer_messages("", history)[:-1], self.plan_messages("", history)[:-1]]

    async def prewarm(self, history: Sequence[ChatMessage] = ()) -> int:
        """Evaluate and keep the heads for the conversation as it stands, in the background (a real
        call on the same model goes first). Returns how many heads were evaluated now."""
        keep = getattr(self.chat, "keep_heads", None)
        if keep is None:
            return 0
        try:
            return await keep(self.heads(history))
        except Exception:  # noqa: BLE001 - a cold reasoner is slower, not wrong
            log.warning("could not pre-warm the reasoner", exc_info=True)
            return 0

    def forget(self, cache_only: bool = False) -> None:
        """Drop what the model keeps warm (for measuring it cold), or with ``cache_only`` only what
        the last request left in its cache; a remote server keeps its own."""
        forget = getattr(self.chat, "forget_heads", None)
        if forget is not None:
            forget(cache_only=cache_only)

    async def read_ahead(self, heard: str, history: Sequence[ChatMessage] = ()) -> int:
        """Read the answer prompt for a question still being spoken (``heard``, a partial), so the
        final one reads only what the user said after it. Tokens evaluated; 0 without a local model."""
        prefill = getattr(self.chat, "prefill", None)
        if prefill is None:
            return 0
        return await prefill(self.answer_messages(heard, history, "", self.facts_for(heard)))

    # -- work -----------------------------------------------------------------------------
    def facts_for(self, text: str) -> list[str]:
        """What the kitchen reference holds for the question ([] without a reference)."""
        return self.reference.lookup(text, self.language) if self.reference is not None else []

    async def answer(self, text: str, history: Sequence[ChatMessage] = (), line: str = "", facts: Sequence[str] = ()) -> AsyncIterator[str]:
        """The spoken answer, piece by piece, continuing ``line`` (the holding line already said),
        from ``facts`` (the reference's, see :meth:`facts_for`) where there are any.

        Its opening is held until it can be judged (:data:`JUDGED_CHARS` letters, or a sentence's
        end): an opening copied from a worked answer of the prompt's head, for a question that is not
        that one, ends the answer unsaid ("장 볼 거 뭐 있더라?" was answered "30분에서 40분쯤 찌면
        돼요", the steamed sweet potatoes' answer)."""
        messages = self.answer_messages(text, history, line, facts)
        kwargs: dict[str, Any] = {"reply_start": line + " "} if line and self.continues_reply else {}
        held: list[str] = []
        judged = False
        async for piece in self.chat.stream(messages, self.settings.max_tokens, **kwargs):
            if judged:
                yield piece
                continue
            held.append(piece)
            opening = "".join(held)
            if len(_letters(opening)) < JUDGED_CHARS and not re.search(r"[.!?。]", opening):
                continue
            judged = True
            if copies_a_worked_answer(opening, text, self.language):
                log.info("the reasoner's answer to %r copies a worked answer: not said", text)
                return
            for kept in held:
                yield kept
        if not judged and held and not copies_a_worked_answer("".join(held), text, self.language):
            for kept in held:
                yield kept

    async def plan(self, text: str, history: Sequence[ChatMessage] = ()) -> list[ToolPlan]:
        """The calls ``text`` asks for, in order (at most ``max_calls``); [] when the reply is unusable."""
        pieces = [p async for p in self.chat.stream(self.plan_messages(text, history), self.settings.plan_max_tokens, json_schema=self.calls_schema)]
        raw = "".join(pieces)
        try:
            calls = json.loads(raw)["calls"]
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("the reasoner's calls are not valid JSON: %r", raw[:200])
            return []
        plans = []
        for call in calls[: self.settings.max_calls]:
            if isinstance(call, dict) and call.get("tool") in self.registry:
                plans.extend(one_item_each(ToolPlan("", str(call["tool"]), dict(call.get("args") or {}), raw=raw)))
        return plans[: self.settings.max_calls]


_LIST_TOOLS = ("shopping_add", "shopping_complete")
_KO_ITEM_JOINER = re.compile(r"(?<=[가-힣])(?:이랑|랑|하고)\s+(?=[가-힣])")
"""Korean "and" between two nouns: 대파랑 두부, 당근이랑 양파, 우유하고 계란.  Not 와/과, which end
nouns too (사과), and not English "and", which names one thing as often as two (mac and cheese)."""


def one_item_each(plan: ToolPlan) -> list[ToolPlan]:
    """A list call whose item joins two things ("대파랑 두부") as one call per thing, in order:
    the reasoner sometimes writes what was asked for as one item."""
    item = plan.args.get("item")
    if plan.tool not in _LIST_TOOLS or not isinstance(item, str):
        return [plan]
    parts = [part.strip() for part in _KO_ITEM_JOINER.split(item) if part.strip()]
    if len(parts) < 2:
        return [plan]
    return [replace(plan, args={**plan.args, "item": part}) for part in parts]


class EarlyReading:
    """The reasoner reads a question for knowledge while the user is still saying it.

    On each new partial transcript that the words already route to the reasoner as ``knowledge``,
    its answer prompt (the reference's notes and the words so far) is evaluated in the background,
    the previous reading given up; the answer's own call stops a reading still under way and goes
    on from what it evaluated. Nothing is said or done here: it only fills the model's cache.
    """

    def __init__(self, reasoner: Reasoner, history: Sequence[ChatMessage], timeline: Any, min_words: int = 3) -> None:
        self.reasoner = reasoner
        self.history = list(history)
        self.timeline = timeline
        self.min_words = min_words
        self._task: asyncio.Task[int] | None = None
        self._read = ""
        self.readings = 0

    def hear(self, text: str) -> None:
        from agent.deciding.routing import knows_how

        words = " ".join(text.split())
        if words == self._read or len(words.split()) < self.min_words or not knows_how(words, self.reasoner.language):
            return
        self.stop()
        self._read = words
        self.readings += 1
        self.timeline.mark("reasoner_read_ahead", text=words)
        self._task = asyncio.create_task(self.reasoner.read_ahead(words, self.history), name="reasoner-read-ahead")

    def stop(self) -> None:
        """Give up the reading under way (the model stops at its next slice)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
