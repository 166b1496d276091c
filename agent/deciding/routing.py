"""Which model answers a request: the talker, or the reasoner.

The talker (a ~100 MB model) decides fast and well among the kitchen's tools, and it is right
about little else. The reasoner (a 0.5–1.5B model, local or on a home server) knows how long an
egg boils and can make two calls from one request, but it takes seconds. The rule, in the order a
request meets it:

1. **By the words, before any model** (instant, so the reasoner starts at once):

   * ``knowledge``: a question for know-how, not about the household. It asks why, what to use
     instead or what is good (:func:`~agent.deciding.intents.asks_to_know`); or it opens like a
     know-how question ("how long do I…", "what temperature…", "몇 분…", "어떻게 보관…") and
     names nothing the tools keep (a timer, the list, a note, the weather, the air, the clock, a
     recipe), no measuring unit and no dish to make (the conversion and recipe tools answer those
     exactly), and no digit (a quantity to convert or a duration to set).
   * ``several_acts``: an act request that joins two things ("set a timer for ten minutes and
     add eggs", "add flour and butter", "우유랑 계란 추가해 줘"): the talker makes one call a turn.

2. **By the talker's decision**, when the words did not route:

   * ``talker_unsure``: a question, and the talker chose no tool for it, so it would answer
     from what it knows, which is little; or an act it chose on words that are a question and
     not a request ("Is the five second rule real?" is no timer; "Can you set a timer…?" is
     one), or an act the words do not support (it would be asked back) on words that ask.

Everything else stays with the talker. Nothing here acts: the reasoner's calls go through the
same checks as the talker's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from agent.deciding.extract_lookup import place, recipe_query, when
from agent.deciding.spoken_numbers import durations
from agent.deciding.several import one_act_on_things, timers_in
from agent.deciding.corrections import asked_part
from agent.deciding.intents import asks_for_act, asks_to_know, cued_tools, is_question, speaks_korean, tells_of_past, utterance_words
from agent.deciding.lexicon import lexicon
from agent.deciding.tool_calls import ToolPlan
from tools.recipes import MAX_QUERY_CHARS

Reason = Literal["knowledge", "several_acts", "talker_unsure"]


@dataclass(frozen=True)
class Route:
    """Where a request goes, and why (for the timeline, the record and the bench)."""

    to: Literal["talker", "reasoner"]
    reason: Reason | Literal["tool", "plain"]


TALKER_TOOL = Route("talker", "tool")
TALKER_PLAIN = Route("talker", "plain")

def _alternation(language: str, name: str) -> str:
    """A class of the language's lexicon as an alternation; in Korean the spaces inside a phrase are optional."""
    made = lexicon(language).alternation(name)
    return made.replace(r"\s+", r"\s*") if language == "ko" else made


@functools.cache
def _rules(language: str) -> dict[str, re.Pattern[str]]:
    """This module's rules for ``language``, made from its lexicon on first use.

    ``know_how``: how a know-how question opens. ``household``: what the tools keep or know; a
    question about these is the household's, for the talker's tools. ``tool_answers``: a quantity
    to convert, or a dish to look up: the talker's tools answer these exactly. ``joined``: two
    things joined ("and", "then", "also", "plus"; Korean 하고, 그리고, (이)랑). A comma is not
    enough: "Take the lemons off, I got them" and "six, no, eight minutes" are one act."""
    a = functools.partial(_alternation, language)
    if language == "ko":
        return {
            "know_how": re.compile(a("know_how")),
            "household": re.compile(a("household")),
            "tool_answers": re.compile(rf"{a('unit_word')}|{a('recipe_words')}"),
            "joined": re.compile(rf"하고\s|[가-힣]랑\s|{a('joiner')}"),
        }
    person = a("person")
    how = (
        rf"how\s+(?:{a('know_how_size')}|{a('know_sign_modal')}\s+{person}\s+{a('know_sign')}"
        rf"|(?:do|can|should)\s+{person}\s+{a('know_how_verb')}|should\s+i|can\s+i)"
    )
    return {
        "know_how": re.compile(
            rf"^(?:(?:{a('lead')}|{a('hedge')})\s+)*"
            rf"(?:{how}|(?:at\s+)?what\s+(?:\w+\s+)?temperature|what(?:'s|\s+is|\s+are)\s+the\s+{a('method_word')}"
            rf"|should\s+i|is\s+it\s+{a('judgement')}|can\s+i\s+{a('can_i_verb')}|{a('timing_open')}|which)\b"
        ),
        "household": re.compile(rf"\b{a('household')}\b"),
        "tool_answers": re.compile(
            rf"\b{a('unit_word')}\b|\bhow\s+{a('know_sign_modal')}\s+{person}\s+{a('recipe_verb')}\b"
        ),
        "joined": re.compile(rf"\b{a('joiner')}\b(?!\s+a\s+half\b)"),
    }


_LOOK_UPS = ("weather", "air_quality")
_ACT_TOOLS = ("timer_start", "timer_cancel", "timer_adjust", "shopping_add", "shopping_complete", "note_add")


def knows_how(text: str, language: str) -> bool:
    """A question for know-how that no tool keeps the answer to (rule 1, ``knowledge``)."""
    if cued_tools(text, language, _LOOK_UPS) and (place(text) is not None or when(text) is not None):
        return False  # "How warm will it be in Lisbon on Saturday?": the forecast's, never a guess
    if asks_to_know(text, language):
        return True
    words = utterance_words(text)
    if cued_tools(text, language, ("date_today", "time_now")) and re.search(
            rf"\b(?:{lexicon('en').alternation('clock_question_end')})$", words) and not speaks_korean(words, language):
        return False  # "What day are we on?": the calendar's answer, not know-how
    korean = speaks_korean(words, language)
    rules = _rules("ko" if korean else "en")
    if re.search(r"\d", words) or rules["tool_answers"].search(words):
        return False
    if rules["know_how"].search(words) is None or rules["household"].search(words) is not None:
        return False
    return is_question(text, language) if korean else True


def several_acts(text: str, language: str) -> bool:
    """An act request joining two things (rule 1, ``several_acts``)."""
    if is_question(text, language) or tells_of_past(text, language):
        return False
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    # The joiner must join: a follow-up's opening "and" ("and another one for the broccoli") joins
    # this request to the last, not two things in it.
    opened = words.split(" ", 1)[1] if " " in words else ""
    for length in reversed(durations(opened)):
        opened = opened[: length.start] + " " + opened[length.end :]  # "an hour and twenty minutes" is one length
    if not _rules("ko" if korean else "en")["joined"].search(opened):
        return False
    cued = cued_tools(text, language, _ACT_TOOLS)
    if one_act_on_things(text, cued):
        return False  # "add eggs, milk and butter": one act on several things, made once per thing
    if cued == {"timer_start"} and len(durations(text)) <= 1 and len(timers_in(text)) <= 1:
        return False  # "Forty-five minutes, and call it lasagna": one timer, and its name
    return bool(cued)


def route_by_words(text: str, language: str) -> Route | None:
    """Rule 1: the reasoner's route when the words alone decide it, else None. The words that
    ask are read, without the reasons told around them ("What day are we on? I've been away so
    long I've lost track.")."""
    text = asked_part(text, language)
    if knows_how(text, language):
        return Route("reasoner", "knowledge")
    if several_acts(text, language):
        return Route("reasoner", "several_acts")
    return None


def route_after_decision(text: str, language: str, tool: str | None, supported: bool, acts: bool = False) -> Route:
    """Rule 2: given the talker's decision (``tool`` None for no tool; ``acts`` when it changes
    something; ``supported`` False when an act it chose is not in the words), whether the reasoner
    should answer after all."""
    question = is_question(text, language)
    if tool is None:
        return Route("reasoner", "talker_unsure") if question else TALKER_PLAIN
    if question and (not supported or (acts and not asks_for_act(text, language))):
        return Route("reasoner", "talker_unsure")
    return TALKER_TOOL


def idea_search(plan: ToolPlan, text: str) -> ToolPlan:
    """A request for an idea of what to cook (:func:`~agent.deciding.intents.asks_for_idea`) as
    the recipe search, whatever the talker decided, with the user's own words as its query (what
    is at hand, when said; the book offers its quickest recipes when they name no dish). The
    talker's line is kept when it chose the search."""
    query = (recipe_query(text) or " ".join(text.split()))[:MAX_QUERY_CHARS]
    return ToolPlan(plan.say if plan.tool == "recipe_search" else "", "recipe_search", {"query": query}, raw=plan.raw)
