"""Asking before an act hearth is not sure of, and hearing the answer.

An acting call that the user's words do not support (no cancel word for a cancel,
an item they never said) is not made.  hearth says what it would do, as a question
("Cancel the pasta timer?"), and keeps the call; the next utterance decides: a yes
makes exactly that call, a no drops it, anything else drops it and is heard as a
new request.  So a mishearing costs one question, never a wrong act, and the user
hears what hearth understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from agent.deciding.corrections import corrected, tells_a_reason
from agent.deciding.extract import HANGUL, shopping_item, timer_durations, timer_label
from agent.deciding.intents import asks_for_act, is_question, opens_with_a_command, speaks_korean, utterance_words
from agent.deciding.lexicon import Lexicon, lexicon
from agent.deciding.utterance import found_once
from agent.deciding.tool_calls import ToolPlan
from tools.timers import say_duration

Answer = Literal["yes", "no"]


@dataclass(frozen=True)
class PendingAct:
    """An act hearth asked about instead of making, kept for the next utterance."""

    plan: ToolPlan
    """The call as it would be made."""
    needs: str | None = None
    """A required value the user did not say ("duration_s"): the next utterance may give it."""
    origin: Literal["confirmed", "offer"] = "confirmed"
    """The origin the call is made with once answered: ``"confirmed"`` for an act hearth asked back,
    ``"offer"`` for one a tool's result offered (:data:`tools.executor.Origin`)."""


def missing_value(tool: str, args: dict[str, Any], user_text: str) -> str | None:
    """The required value of an acting call that the user's words do not hold, if any.

    "Start a timer for the pizza" says no length: it is asked for ("How long?"), never made up;
    nor is a list item nobody said named ("What should I add to the shopping list?").
    """
    if tool == "timer_start" and not timer_durations(corrected(user_text), naming=True):
        return "duration_s"
    if tool in ("shopping_add", "shopping_complete") and not args.get("item"):
        return "item"  # not one the user said (see :func:`agent.deciding.arguments.asked_back`)
    return None


def supplied(pending: PendingAct, text: str) -> ToolPlan | None:
    """The pending call completed with the value this utterance gives, or None if it gives none."""
    if pending.needs == "duration_s":
        words = corrected(text)
        said = timer_durations(words, naming=True)
        if said:
            # An answer that names its own timer ("the rice, 3 minutes", "라면 타이머 3분") is that timer.
            label = timer_label(words)
            return replace(pending.plan, args={**pending.plan.args, "duration_s": said[-1], **({"label": label} if label else {})})
    if pending.needs == "item":
        language = "ko" if HANGUL.search(text) else "en"
        if answer_of(text, language) is not None or asks_to_repeat(text, language):
            return None
        complete = pending.plan.tool == "shopping_complete"
        found = shopping_item(corrected(text), complete=complete)
        item = found[0] if found is not None else " ".join(corrected(text).split()).strip(" ,.!?")
        if item and len(item.split()) <= 4:
            return replace(pending.plan, args={**pending.plan.args, "item": item})
    return None


def ask_for(pending: PendingAct, language: str) -> str:
    """The question for a missing value ("How long should the pizza timer be?", "What should I add
    to the shopping list?")."""
    if pending.needs == "item":
        complete = pending.plan.tool == "shopping_complete"
        if language == "ko":
            return "장보기 목록에서 뭘 뺄까요?" if complete else "장보기 목록에 뭘 넣을까요?"
        return "What should I take off the shopping list?" if complete else "What should I add to the shopping list?"
    label = str(pending.plan.args.get("label") or "").strip()
    if language == "ko":
        return f"{label} 타이머를 얼마나 맞출까요?" if label else "몇 분으로 맞출까요?"
    return f"How long should the {label} timer be?" if label else "How long should the timer be?"


@found_once
def answer_of(text: str, language: str, act: str | None = None) -> Answer | None:
    """"yes" or "no" when the utterance answers a question hearth asked, else None.

    A whole answer ("yes please", "아니요"), or a yes followed by no more than a request to go on
    ("yes, do it", "응 해 줘", "네 열어 주세요") and nothing that takes it back ("yes, don't"); or,
    when the question offered a home ``act`` ("Shall I open the garage door?"), the act's own verb
    said back as a request ("open it", "열어 줘").  Words that go on to ask something new are no
    answer: they are a new request."""
    words = utterance_words(text)
    if not words:
        return None
    korean = speaks_korean(words, language)
    lex = lexicon("ko" if korean else "en")
    if (said := _answer_with_reason(text, language, act, lex)) is not None:
        return said
    if lex.has("yes", words):
        return "yes"
    if lex.has("no", words) or re.match(lex.alternation("no_lead") + r"(?:\s|$)", words):
        return "no"
    rest = words
    if (m := re.match(lex.alternation("yes") + r"\s+(?P<rest>.+)$", words)) is not None:
        # "yep, that's fine, open it": the yes said again is still the yes
        rest = re.sub(rf"^(?:(?:and|then|{lex.alternation('yes_again')})(?:\s+|$))+", "", m["rest"]).strip()
        if not rest:
            return "yes"
    elif act is None:
        return None
    if re.search(r"(?<![\w가-힣])" + lex.alternation("negation") + r"(?![\w])", rest) or (korean and re.search(r"지\s*마", rest)):
        return "no" if rest != words else None
    if rest != words and (lex.has("yes", rest) or _goes_on(rest, lex, korean)):
        return "yes"
    if act is not None and _says_act(rest, act, lex, korean):
        return "yes"
    return None


def _answer_with_reason(text: str, language: str, act: str | None, lex: Lexicon) -> Answer | None:
    """A whole yes or no said in a clause of its own, with only sounds or "wait" before it and
    nothing after it that asks anything ("아 잠깐, 하지 마. 비 오기 시작했어.", "Wait, no, leave it,
    it's raining", "응, 풀어 줘, 빨리."), else None."""
    lead = re.compile(r"^(?:(?:" + lex.alternation("lead") + r"|" + lex.alternation("fill") + r")(?:\s+|$))+")
    said = [utterance_words(c) for c in re.split(r"[,.;!?…]+", text)]
    clauses = [c if lex.has("yes", c) or lex.has("no", c) else lead.sub("", c).strip() for c in said]
    clauses = [c for c in clauses if c]
    if len(clauses) < 2:
        return None
    first, rest = clauses[0], clauses[1:]
    answer: Answer | None = "yes" if lex.has("yes", first) else "no" if lex.has("no", first) else None
    if answer is None:
        return None
    korean = speaks_korean(first, language)
    negation = re.compile(r"(?<![\w가-힣])" + lex.alternation("negation") + r"(?![\w])|지\s*마")
    for clause in rest:
        if answer == "yes" and (lex.has("yes", clause) or lex.has("yes_again", clause) or _goes_on(clause, lex, korean)
                                or (act is not None and _says_act(clause, act, lex, korean))):
            continue
        if answer == "no" and (lex.has("no", clause) or _leave_it(clause, lex)):
            continue
        if answer == "yes" and negation.search(clause):
            return None  # "yes, don't": taken back
        if not _a_reason(clause, language, lex, korean):
            return None
    return answer


def _a_reason(clause: str, language: str, lex: Lexicon, korean: bool) -> bool:
    """Whether a clause after an answer only tells why ("it's raining", "비 오기 시작했어", "장 봐
    왔어요"): a statement, no request or question of its own."""
    if asks_for_act(clause, language) or is_question(clause, language) or opens_with_a_command(clause, language):
        return False
    if korean:
        # "요" and "라" alone end statements too ("장 봐 왔어요")
        helping = [re.escape(p).replace(r"\ ", r"\s*") for p in lex.phrases("request_end") if p not in ("요", "라")]
        return re.search(r"(?:" + "|".join(helping) + r")$", clause) is None
    return tells_a_reason(clause)


def _leave_it(clause: str, lex: Lexicon) -> bool:
    """Whether the words only ask to leave things as they are ("leave it", "그냥 둬")."""
    return lex.has("leave_it", clause)


def _goes_on(rest: str, lex: Lexicon, korean: bool) -> bool:
    """Whether the words after a yes only ask to go on: "go ahead", "do it please", "해 줘"."""
    if korean:
        return len(rest.split()) <= 2 and re.search(lex.alternation("request_end") + r"$", rest) is not None
    return len(rest.split()) <= 4 and re.fullmatch(r"(?:please\s+)?(?:go ahead|do it|do that|go for it|please|thanks|thank you)"
                                                   r"(?:\s+(?:please|thanks|thank you|now))*", rest) is not None


def _says_act(rest: str, act: str, lex: Lexicon, korean: bool) -> bool:
    """Whether the words are the offered act's verb said back as a request ("open it", "잠가 줘")."""
    name = f"home_{act}"
    if name not in lex.classes:
        return False
    if f"{name}_answer" in lex.classes and lex.has(f"{name}_answer", rest):
        return True  # "풀어 줘" to "현관문 잠금을 풀까요?": the act's short verb, enough as an answer
    if korean:
        return len(rest.split()) <= 3 and re.fullmatch(
            r"(?:(?:그거|그것|그걸|좀)\s*)*" + lex.alternation(name) + r"(?:\s*" + lex.alternation("request_end") + r")*", rest) is not None
    return re.fullmatch(r"(?:please\s+)?(?:go ahead and\s+)?" + lex.alternation(name) + r"(?:\s+(?:it|them|that|up))?"
                        r"(?:\s+(?:please|now|thanks))*", rest) is not None


_REPEAT_EN = re.compile(
    r"^(what did you (just )?say|what was that|say (that|it) again|come again|pardon( me)?|sorry|excuse me|"
    r"repeat (that|it)( again)?|can you repeat (that|it)|could you repeat (that|it)|once more|"
    r"(can|could) you say (that|it) again)( please)?$"
)
_REPEAT_KO = re.compile(r"^(뭐라고(요)?|다시 (한 ?번 )?(말해|말씀해) ?(줘|주세요|줄래)?(요)?|다시요|한 ?번 더( 말해 ?(줘|주세요)?)?|방금 뭐라고 했어(요)?)$")


@found_once
def asks_to_repeat(text: str, language: str) -> bool:
    """Whether the whole utterance asks to hear the last reply again ("What did you say?", "다시 말해줘")."""
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    return bool(words) and (_REPEAT_KO if korean else _REPEAT_EN).match(words) is not None


def _label(args: dict[str, Any], language: str) -> str:
    label = str(args.get("label") or "").strip()
    if language == "ko":
        return f"{label} 타이머" if label else "타이머"
    return f"the {label} timer" if label else "the timer"


def _duration(args: dict[str, Any], key: str, language: str) -> str:
    value = args.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value:
        return ""
    return say_duration(abs(value), language="ko" if language == "ko" else "en")


def question(tool: str, args: dict[str, Any], language: str) -> str:
    """What hearth would do, asked back in the user's language ("Cancel the pasta timer?")."""
    item = str(args.get("item") or "").strip()
    if language == "ko":
        questions = {
            "timer_start": f"{_duration(args, 'duration_s', language)} 타이머 맞출까요?".strip(),
            "timer_cancel": "모든 타이머를 취소할까요?" if args.get("all") else f"{_label(args, language)} 취소할까요?",
            "timer_pause": f"{_label(args, language)} 멈출까요?",
            "timer_resume": f"{_label(args, language)} 다시 시작할까요?",
            "timer_adjust": f"{_label(args, language)} 시간을 바꿀까요?",
            "shopping_add": f"장보기 목록에 {item} 넣을까요?" if item else "장보기 목록에 넣을까요?",
            "shopping_complete": f"장보기 목록에서 {item} 뺄까요?" if item else "장보기 목록에서 뺄까요?",
            "note_add": "메모로 남길까요?",
            "home_control": _home_question(args, language),
        }
        return questions.get(tool, "그렇게 할까요?")
    minutes = _duration(args, "duration_s", language)
    delta = _duration(args, "delta_s", language)
    questions = {
        "timer_start": f"Start a timer for {minutes}?" if minutes else "Start a timer?",
        "timer_cancel": "Cancel all the timers?" if args.get("all") else f"Cancel {_label(args, language)}?",
        "timer_pause": f"Pause {_label(args, language)}?",
        "timer_resume": f"Resume {_label(args, language)}?",
        "timer_adjust": (
            f"{'Add' if (args.get('delta_s') or 0) >= 0 else 'Take'} {delta} {'to' if (args.get('delta_s') or 0) >= 0 else 'off'} {_label(args, language)}?"
            if delta else f"Change {_label(args, language)}?"
        ),
        "shopping_add": f"Add {item} to the shopping list?" if item else "Add that to the shopping list?",
        "shopping_complete": f"Take {item} off the shopping list?" if item else "Take that off the shopping list?",
        "note_add": "Save that as a note?",
        "home_control": _home_question(args, language),
    }
    return questions.get(tool, "Shall I do that?")


def _home_question(args: dict[str, Any], language: str) -> str:
    """A home act asked back with the words heard for the thing ("Turn on the kitchen lights?")."""
    target = " ".join(str(args.get("target") or "").split())
    action = str(args.get("action") or "")
    value = args.get("value")
    amount = f"{value:g}" if isinstance(value, (int, float)) else ""
    if language == "ko":
        verb = {"on": "켤까요", "off": "끌까요", "open": "열까요", "close": "닫을까요", "lock": "잠글까요",
                "unlock": "잠금을 풀까요", "toggle": "바꿀까요", "set": f"{amount}도로 맞출까요" if amount else "맞출까요"}
        return f"{target} {verb.get(action, '바꿀까요')}?".strip() if target else "그렇게 할까요?"
    verb = {"on": "Turn on", "off": "Turn off", "open": "Open", "close": "Close", "lock": "Lock", "unlock": "Unlock",
            "toggle": "Switch", "set": "Set"}
    thing = target or "that"
    if action == "set" and amount:
        return f"Set {thing} to {amount}?"
    return f"{verb.get(action, 'Change')} {thing}?"


def declined(language: str) -> str:
    """What hearth says when the user answers no."""
    return "알겠어요, 안 할게요." if language == "ko" else "Okay, I won't."
