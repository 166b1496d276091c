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

import re
from dataclasses import dataclass
from typing import Literal

from agent.deciding.intents import asks_for_act, asks_to_know, cued_tools, is_question, speaks_korean, utterance_words

Reason = Literal["knowledge", "several_acts", "talker_unsure"]


@dataclass(frozen=True)
class Route:
    """Where a request goes, and why (for the timeline, the record and the bench)."""

    to: Literal["talker", "reasoner"]
    reason: Reason | Literal["tool", "plain"]


TALKER_TOOL = Route("talker", "tool")
TALKER_PLAIN = Route("talker", "plain")

_KNOW_HOW_EN = re.compile(
    r"^(?:(?:ok|okay|so|and|hey|um|uh|roughly|about|quick question),? )*"
    r"(?:how (?:long|many|much|hot|cold|warm|big|thick|often|can i tell|do i know|do you know|do i (?:stop|keep|store|make|get|tell|fix|save)"
    r"|should i|can i)|(?:at )?what (?:\w+ )?temperature|what(?:'s| is| are) the (?:ratio|difference|best way|right)"
    r"|should i|is it (?:safe|ok|okay|bad|better)|can i (?:freeze|eat|use|keep|substitute|reuse|refreeze)|when should|which)\b"
)
_KNOW_HOW_KO = re.compile(r"몇 ?분|몇 ?초|몇 ?도|며칠|얼마나|얼마 동안|어떻게 보관|보관해|적당|몇 ?개|몇 ?큰술|몇 ?작은술|비율|차이|해도 돼|괜찮아")

# What the tools keep or know: a question about these is the household's, for the talker's tools.
_HOUSEHOLD_EN = re.compile(
    r"\b(?:timers?|alarms?|left|remaining|longer|still|lists?|shopping|notes?|remind\w*|weather|forecast|rain\w*|snow\w*|"
    r"umbrella|outside|air|dust|pollen|time is it|o'clock|today|tomorrow|tonight|recipes?)\b"
)
_HOUSEHOLD_KO = re.compile(r"타이머|알람|남았|남은 시간|목록|리스트|장보기|메모|날씨|비 와|비와|미세먼지|먼지|공기|몇 ?시|오늘|내일|레시피")

# A quantity to convert, or a dish to look up: the talker's tools answer these exactly.
_TOOL_ANSWERS_EN = re.compile(
    r"\b(?:cups?|grams?|g|kilo\w*|kg|ounces?|oz|pounds?|lbs?|tablespoons?|tbsp|teaspoons?|tsp|lit(?:re|er)s?|millilit\w*|ml|"
    r"fahrenheit|celsius|sticks?|gas mark)\b|\bhow (?:do|can|should) (?:i|we|you) (?:make|cook|bake|prepare)\b"
)
_TOOL_ANSWERS_KO = re.compile(r"컵|그램|킬로|온스|파운드|큰술|작은술|스푼|리터|밀리|화씨|섭씨|만드는 법|만들어")

# Two things joined: "and", "then", "also", "plus"; Korean 하고, 그리고, 랑, 이랑. A comma is not
# enough: "Take the lemons off, I got them" and "six, no, eight minutes" are one act.
_JOINED_EN = re.compile(r"\b(?:and(?! a half\b)|then|also|plus)\b")
_JOINED_KO = re.compile(r"하고 |그리고|[가-힣]랑 ")
_ACT_TOOLS = ("timer_start", "timer_cancel", "timer_adjust", "shopping_add", "shopping_complete", "note_add")


def knows_how(text: str, language: str) -> bool:
    """A question for know-how that no tool keeps the answer to (rule 1, ``knowledge``)."""
    if asks_to_know(text, language):
        return True
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    if re.search(r"\d", words) or (_TOOL_ANSWERS_KO if korean else _TOOL_ANSWERS_EN).search(words):
        return False
    if korean:
        return _KNOW_HOW_KO.search(words) is not None and _HOUSEHOLD_KO.search(words) is None and is_question(text, language)
    return _KNOW_HOW_EN.search(words) is not None and _HOUSEHOLD_EN.search(words) is None


def several_acts(text: str, language: str) -> bool:
    """An act request joining two things (rule 1, ``several_acts``)."""
    if is_question(text, language):
        return False
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    # The joiner must join: a follow-up's opening "and" ("and another one for the broccoli") joins
    # this request to the last, not two things in it.
    opened = words.split(" ", 1)[1] if " " in words else ""
    if not (_JOINED_KO if korean else _JOINED_EN).search(opened):
        return False
    return bool(cued_tools(text, language, _ACT_TOOLS))


def route_by_words(text: str, language: str) -> Route | None:
    """Rule 1: the reasoner's route when the words alone decide it, else None."""
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
