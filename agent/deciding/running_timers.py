"""A call about a timer, read against the timers that are running: the decision names one that is.

The words choose a label ("kill its timer", "the bread can keep going", "and the quinoa, how much
is left on that?"), and the reading of the words does not always cut it where the name ends. The
timers running are the household's real names: a label that is one of them stands; one that is not
becomes the one running timer the words (or the label itself) name. And more time asked for a
timer that has already rung ("give the pasta five more minutes" after it went off) is a new timer
of that length: nothing is left to add it to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agent.deciding.arguments import supported
from agent.deciding.extract import HANGUL, could_be_label
from agent.deciding.intents import TIMER_ACTS_ON_ONE, TIMER_CHANGES, cued_tools, is_question, makes_a_remark, tells_of_past
from agent.deciding.lexicon import lexicon
from agent.deciding.tool_calls import ToolPlan

ONE_TIMER_TOOLS = TIMER_CHANGES | {"timer_status"}
"""The calls about a timer that is running, which name it by its label."""


def running_labels(timers: Sequence[Any]) -> list[str]:
    """The labels of the running timers in a ``timer_status`` result's ``timers``."""
    return [t["label"] for t in timers if isinstance(t, dict) and isinstance(t.get("label"), str) and t["label"]]


def named_running(text: str, timers: Sequence[Any]) -> list[str]:
    """The labels of the running ``timers`` that ``text`` names."""
    return [label for label in running_labels(timers) if supported(label, text)]


def _same(a: str, b: str) -> bool:
    return a.casefold().strip() == b.casefold().strip()


def among_running(plan: ToolPlan, text: str, timers: Sequence[Any]) -> ToolPlan:
    """``plan`` with its label chosen among the running ``timers`` (``timer_status``'s data): kept
    when it is one of them, or when none of them is named; else the one running timer that the
    words name, or that the label holds. A call for all timers is left as it is."""
    if plan.tool not in ONE_TIMER_TOOLS or plan.args.get("all") is True:
        return plan
    labels = running_labels(timers)
    said = plan.args.get("label")
    if isinstance(said, str) and said.strip() and not could_be_label(said):
        # "잠깐만 멈춰 봐" read as the label "멈춰": a verb names no timer
        plan, said = replace(plan, args={k: v for k, v in plan.args.items() if k != "label"}), None
    if not labels or (isinstance(said, str) and any(_same(said, label) for label in labels)):
        return plan
    named = named_running(text, timers)
    if len(named) != 1 and isinstance(said, str):
        named = named_running(said, timers)
    if len(named) != 1:
        return plan
    return replace(plan, args={**plan.args, "label": named[0]})


def names_a_timer(text: str) -> bool:
    """Whether the words speak of a timer as such ("the cookie timer", "떡 타이머"), which the user
    believes is running."""
    if HANGUL.search(text):
        return any(word in text for word in lexicon("ko").phrases("timer_word"))
    return re.search(rf"\b{lexicon('en').alternation('timer_word')}\b", text.casefold()) is not None


def more_time_after_it_rang(plan: ToolPlan, timers: Sequence[Any], text: str = "") -> ToolPlan:
    """Time added when no timer runs as a new timer of that length, under the name said (none
    named, or a timer named as such: left as it is, for the tool to say no timer runs): "the
    pasta's still hard, five more minutes" after the pasta timer rang wants five minutes timed, not
    "there are no timers". Time taken off, or added while any timer runs, stays as it is (the timer
    named may be one of them under another name)."""
    delta = plan.args.get("delta_s")
    if plan.tool != "timer_adjust" or timers or not isinstance(delta, (int, float)) or isinstance(delta, bool) or delta <= 0:
        return plan
    if names_a_timer(text):
        return plan  # "three more minutes on the cookie timer" with none running: the tool says there is none
    label = plan.args.get("label")
    if not isinstance(label, str) or not label.strip():
        return plan  # "five more minutes" with nothing running and nothing named: which dish is not said
    return replace(plan, tool="timer_start", args={"duration_s": int(delta), "label": label})


def timer_act_cued(text: str, language: str) -> str | None:
    """The one act on a timer the words cue (cancel, pause or resume), when they cue just one and
    are no question, remark or story: with a running timer named in them ("떡볶이 건 이제 꺼도
    돼", "the salmon's done, kill it"), that timer is the one meant, whatever else the dish's name
    could cue (a recipe)."""
    cued = cued_tools(text, language, TIMER_ACTS_ON_ONE)
    # Korean: only a question mark makes it a question ("꺼도 돼, 다 졸았어." ends in a statement's 어)
    question = "?" in text if HANGUL.search(text) else is_question(text, language)
    if len(cued) != 1 or question or makes_a_remark(text, language) or tells_of_past(text, language):
        return None
    return next(iter(cued))


def one_named(text: str, timers: Sequence[Any]) -> str | None:
    """The one running timer whose label the words name, or None."""
    named = named_running(text, timers)
    return named[0] if len(named) == 1 else None
