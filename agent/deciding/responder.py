"""The answer to a finished request, when hearth has tools.

One place holds the whole policy, in the order a request meets it:

1. words that need no decision: a yes or no to the question asked the turn before, "undo that",
   a new length for the timer just set ("actually, make that fifteen minutes"), a command
   ("louder", "next step"), how long is left while a timer runs ("how long until it's done?"), which
   timers run ("which timers have I got going?"),
   "what did you say?";
2. the reasoner, when the words route there (:mod:`agent.deciding.routing`): a question for
   knowledge, or several acts in one request; the talker's holding line is said meanwhile;
3. one decision under the grammar, or the Thinker's own when it decided on exactly these words;
   and the reasoner after all when the talker found no tool for a question, or chose an act the
   words do not support on words that ask something; a request for an idea of what to cook is
   the recipe search on the user's words whatever was decided (the book's quickest recipes);
4. the tool, with the call's origin (:mod:`agent.deciding.origins`): asked back when the words do
   not support an act, refused when only a tool's result holds what it would do, answered from
   what the Thinker fetched early when that is the very call (waiting for it when it is still
   running), else run, with the line before a slow tool spoken first when there is a wait.

The Turn keeps listening and control; it hands the Responder the final transcript and the
Thinker's record, and owns the task the Responder runs in, so one cancel stops it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing, contextmanager
from dataclasses import replace
from typing import Any, Protocol

from agent.deciding.arguments import asked_back, repair_arguments
from agent.deciding.extract import timer_label
from agent.deciding.commands import READING_TOOLS, local_command, lookup_again
from agent.deciding.home_and_more import home_and_more
from agent.deciding.home_commands import home_command
from agent.deciding.confirm import PendingAct, answer_of, ask_for, asks_to_repeat, declined, missing_value, question, supplied
from agent.deciding.instead import whole_act_instead
from agent.deciding.corrections import asked_part
from agent.deciding.intents import (
    asks_for_act, asks_for_idea, asks_nothing, asks_time_left, asks_which_timers, opens_with_a_command, small_talk, speaks_korean,
)
from agent.deciding.origins import offered_act, unsupported_origin
from agent.deciding.reasoner import cap_line, holding_line, short_answer
from agent.deciding.running_timers import ONE_TIMER_TOOLS, among_running, more_time_after_it_rang, named_running, one_named, timer_act_cued
from agent.deciding.several import continued, each_thing
from agent.deciding.routing import Route, idea_search, is_question, route_after_decision, route_by_words
from agent.deciding.speculation import SpeculativeCall, SpeculativeRecord, call_key
from agent.deciding.thinker import example_key, words_of
from agent.deciding.tool_calls import NO_TOOL, ToolChosen, ToolPlan
from agent.deciding.tool_use import Grounding, ToolUse, answer_prompt, pretool_line, spoken_result
from agent.deciding.undo import Act, amended, asks_to_undo, cannot_undo, nothing_to_undo, opposite
from agent.deps import TurnDeps
from agent.events import Delegated, Event, ToolCalled, ToolStarted
from agent.listening.hearing import SURE, Hearing
from agent.model.llm import ChatMessage, stopped_at_cap
from agent.results import ToolCallRecord, TurnResult
from agent.speaking.foresight import Foresight
from agent.speaking.phrases import Phrase, phrase
from agent.timeline import Timeline
from tools.executor import MAY_ACT, Origin

log = logging.getLogger(__name__)

SMALL_TALK_REPLIES = {"thanks": Phrase.THANKS, "greeting": Phrase.GREETING, "never_mind": Phrase.NEVER_MIND, "praise": Phrase.PRAISED}
"""The answer to each kind of small talk (:func:`agent.deciding.intents.small_talk`)."""


class Reply(Protocol):
    """Where the answer's text goes: the turn's :class:`~agent.speaking.reply.ReplyPath` (filters,
    Cadence, then the speaker)."""

    kind: str
    source: str

    @property
    def text(self) -> str: ...

    def feed(self, piece: str) -> None: ...

    def flush(self) -> None: ...

    async def written(self) -> None: ...

    def end(self) -> None: ...


Answer = Callable[[str, Reply], Awaitable[None]]


@contextmanager
def written_by(reply: Reply, source: str) -> Iterator[None]:
    """Text fed meanwhile was written by ``source`` (:data:`agent.speaking.reply.SOURCES`); after,
    however the writer ended, what is fed is hearth's own fixed lines again."""
    reply.source = source
    try:
        yield
    finally:
        reply.source = "template"


def say(reply: Reply, text: str, source: str = "template") -> None:
    """Feed ``text`` written by ``source``: a fixed line of hearth's unless said otherwise."""
    with written_by(reply, source):
        reply.feed(text)


def feed_counted(reply: Reply, piece: str, count: int, cap: int | None) -> None:
    """Feed the ``count``-th piece of a model stream capped at ``cap`` tokens: near the cap the
    reply path cuts only at sentences (:meth:`ReplyPath.feed_counted
    <agent.speaking.reply.ReplyPath.feed_counted>`); a writer that only keeps text is fed."""
    counted = getattr(reply, "feed_counted", None)
    if counted is None:
        reply.feed(piece)
    else:
        counted(piece, count, cap)


def cut_short(reply: Reply) -> None:
    """The end of a model's text that was stopped mid-way (its token cap, its wall time): the
    sentence it was writing is not said (:meth:`ReplyPath.cut_short
    <agent.speaking.reply.ReplyPath.cut_short>`); a writer that only keeps text is flushed."""
    getattr(reply, "cut_short", reply.flush)()


class Responder:
    """Answers one finished request with the tools; one per turn."""

    def __init__(
        self,
        deps: TurnDeps,
        timeline: Timeline,
        result: TurnResult,
        committed: asyncio.Event,
        history: Sequence[ChatMessage] = (),
        *,
        pending: PendingAct | None = None,
        last_act: Act | None = None,
        last_tool: str | None = None,
        last_things: tuple[str, ...] = (),
        speculation: SpeculativeRecord | None = None,
        emit: Callable[[Event], None] = lambda _e: None,
        hearing: Hearing = SURE,
        on_decided: Callable[[bool], None] = lambda _whole: None,
        foresight: Foresight | None = None,
    ) -> None:
        assert deps.tools is not None
        self.foresight = foresight
        """Makes ahead the audio of what a call will say, while the turn waits to make it."""
        self.on_decided = on_decided
        """Told once what the words ask for is known: whether it is a whole request (no call, a
        look-up, or an act the words bear out) or not ("Set a timer." asks for a length): the turn
        answers a sure end quickly only when it is."""
        self.hearing = hearing
        """How sure the words were heard: on a doubtful hearing an act is asked back first."""
        self.emit = emit
        """Where a settled tool call is told (:class:`ToolCalled`), for the record."""
        self.deps = deps
        self.tools: ToolUse = deps.tools
        self.timeline = timeline
        self.result = result
        self.committed = committed
        """Set once the user has surely finished: no tool runs before."""
        self.history = list(history)
        self.pending = pending
        self.last_act = last_act
        self.last_tool = last_tool
        self.last_things = last_things
        """The home's things the turn before switched or asked about: what "it" means."""
        self.speculation = speculation
        self.results: list[str] = []
        """The texts of the tools run in this turn, as the models read them: not the user's words."""

    # -- 1. no decision needed ------------------------------------------------------------
    def without_model(self, text: str) -> Answer | None:
        """The answer when the words call for no decision, or None."""
        d, tl = self.deps, self.timeline
        pending = self.pending
        completed = supplied(pending, text) if pending is not None else None
        offered = str(pending.plan.args.get("action") or "") if pending is not None and pending.plan.tool == "home_control" else None
        answer = answer_of(text, d.language, offered or None) if pending is not None else None
        if pending is not None and (completed is not None or answer == "no" or (answer == "yes" and pending.needs is None)):
            tl.mark("confirmation", answer=answer or "completed", tool=pending.plan.tool)

            async def answered(text: str, reply: Reply) -> None:
                if answer == "no" and completed is None:
                    say(reply, declined(d.language))
                else:
                    await self.call_tool(completed or pending.plan, text, reply, origin=pending.origin)
                reply.flush()
                reply.end()

            return answered
        if asks_to_undo(text, d.language):
            act = self.last_act
            tl.mark("undo", tool=act.tool if act else None)
            undo = opposite(act) if act is not None else None

            async def undone(text: str, reply: Reply) -> None:
                if undo is None:
                    say(reply, nothing_to_undo(d.language) if act is None else cannot_undo(d.language))
                else:
                    await self.call_tool(ToolPlan("", undo[0], undo[1]), text, reply, origin="user")
                reply.flush()
                reply.end()

            return undone
        amend = amended(self.last_act, text, d.language) if "timer_adjust" in self.tools.registry else None
        if amend is not None:
            # "Actually, make that fifteen minutes": the timer just set, worked out from what it did.
            tl.mark("amend", tool=amend[0])
            change = ToolPlan("", amend[0], amend[1])

            async def changed(text: str, reply: Reply) -> None:
                await self.call_tool(change, text, reply, origin="user")
                reply.end()

            return changed
        more = continued(self.last_act, text, d.language) if self.last_tool == (self.last_act.tool if self.last_act else None) else None
        if more is not None and more.tool in self.tools.registry:
            # "And parmesan." right after adding pasta: the same act on the thing joined on.
            tl.mark("continued", tool=more.tool)

            async def joined_on(text: str, reply: Reply) -> None:
                await self.call_tool(more, text, reply, origin="user")
                reply.end()

            return joined_on
        command = local_command(text, d.language, self.tools.registry, self.last_tool in READING_TOOLS)
        if command is None and (again := lookup_again(text, d.language, self.last_tool)) is not None and again.tool in self.tools.registry:
            # "모레는?" right after the weather: the same look-up for that day, where the turn before asked
            earlier = " ".join(m.content for m in self.history if m.role == "user") or None
            command = replace(again, args=repair_arguments(str(again.tool), again.args, text, earlier=earlier))
        home = self.tools.home_devices
        if home is not None and "home_control" in self.tools.registry \
                and (parts := home_and_more(text, d.language, home, list(self.last_things) or None)) is not None:
            # "Hood fan on, and give me a ten minute timer": each request of the two, in order
            tl.mark("home_and_more", parts=len(parts))

            async def each_request(text: str, reply: Reply) -> None:
                for words, plan in parts:
                    if plan is None:
                        await self._decide_and_call(words, reply)
                    elif plan.tool is None:
                        say(reply, plan.say)  # refused in its own words
                    else:
                        await self.call_tool(plan, words, reply, origin="user")
                reply.flush()
                reply.end()

            return each_request
        if home is not None and "home_control" in self.tools.registry:
            # "Turn it off" means the device the turn just before switched or asked about, and only
            # then: said to a ringing timer an hour later, it must not find the lights.
            at_home = home_command(text, d.language, home, list(self.last_things) or None)
            # A thing of the home named ("stop the hood fan") is the home's, whatever else the words
            # could be; "it" is the home's only when no command of hearth's own took the words.
            if at_home is not None and (command is None or "entity_ids" not in at_home.args):
                command = at_home
        if command is not None:
            tl.mark("command", tool=command.tool or NO_TOOL)

            async def commanded(text: str, reply: Reply) -> None:
                if command.tool is None:
                    say(reply, command.say)  # a home command refused in its own words ("I can't control the boiler.")
                    reply.flush()
                else:
                    await self.call_tool(command, text, reply, origin="user")
                reply.end()

            return commanded
        if (act := timer_act_cued(text, d.language)) is not None and act in self.tools.registry:
            # "떡볶이 건 이제 꺼도 돼": a running timer named, and one act on a timer asked
            async def on_named_timer(text: str, reply: Reply) -> None:
                label = one_named(text, await self._timers_running())
                if label is None:
                    await self.think(text, reply)
                    return
                tl.mark("named_timer", tool=act, label=label)
                await self.call_tool(ToolPlan("", act, {"label": label}), text, reply, origin="user")
                reply.end()

            return on_named_timer
        if asks_time_left(text, d.language) and "timer_status" in self.tools.registry:
            # "How long until it's done?": with a timer running, its time left; else as before.
            async def time_left(text: str, reply: Reply) -> None:
                args = await self._running_timer(text)
                if args is None:
                    await self.think(text, reply)
                    return
                tl.mark("time_left", tool="timer_status")
                await self.call_tool(ToolPlan("", "timer_status", args), text, reply, origin="user")
                reply.end()

            return time_left
        if asks_which_timers(text, d.language) and "timer_status" in self.tools.registry:
            # "Which timers have I got going?": the timers' status, the one named when one is.
            async def which_timers(text: str, reply: Reply) -> None:
                tl.mark("which_timers", tool="timer_status")
                args = await self._running_timer(text) or {}
                await self.call_tool(ToolPlan("", "timer_status", args), text, reply, origin="user")
                reply.end()

            return which_timers
        last = next((m.content for m in reversed(self.history) if m.role == "assistant" and m.content.strip()), None)
        if last is not None and asks_to_repeat(text, d.language):
            tl.mark("repeat")

            async def repeated(_text: str, reply: Reply) -> None:
                self.result.repeated = True
                say(reply, last, "repeat")
                reply.flush()
                reply.end()

            return repeated
        return None

    async def _running_timer(self, text: str) -> dict[str, Any] | None:
        """The status call's arguments when a timer runs (its label when the words name one of the
        running timers: "is the rice done?"), or None when none does."""
        timers = await self._timers_running()
        if not timers:
            return None
        named = named_running(text, timers)
        if len(named) == 1:
            return {"label": named[0]}
        # "국 끓이는 타이머 얼마 남았지?" with no soup timer: the name asked about, which the timers'
        # answer says is not running, rather than every timer's time
        said = timer_label(text) if not named else None
        return {"label": said} if said else {}

    async def _timers_running(self) -> list[Any]:
        """The running and paused timers, as ``timer_status`` gives them ([] when none, or no timers)."""
        if "timer_status" not in self.tools.registry:
            return []
        probe = await self.tools.executor.call("timer_status", {}, origin="user")
        data = probe.output.data if probe.ok and probe.output is not None else None
        return list((data or {}).get("timers") or [])

    # -- 2. the decision ------------------------------------------------------------------
    async def think(self, text: str, reply: Reply) -> None:
        """The reasoner when the words route there; else one decision under the grammar (the line,
        the tool, its arguments), then the tool, or the reasoner when the talker is unsure."""
        delegating = self.deps.reasoner is not None and self.deps.features.reasoner
        # "What should I cook?", "뭐 해 먹지?": the recipe book answers, whatever the talker decides.
        idea = asks_for_idea(text, self.deps.language) and "recipe_search" in self.tools.registry
        if delegating and not idea and (route := route_by_words(text, self.deps.language)) is not None:
            self.on_decided(True)
            await self.delegate(route, text, reply)
            reply.end()
            return
        decided = self._decided_already(text)
        if decided is not None:
            plan, line = decided.plan, None
            self.timeline.mark("first_token")
            self.timeline.mark("heartbeat_decision_reused", tool=plan.tool or NO_TOOL)
            self.on_decided(self._supported(plan, text))
            early = self._early(plan)
            if plan.tool is not None and (early is None or not early.task.done()):
                line = self._line(plan.tool)  # a wait is ahead: it gets its line
        else:
            plan, line = await self._decide(text, reply)
            self.on_decided(self._supported(plan, text))
        if plan.tool is not None and self.tools.acts(plan.tool) and not self._supported(plan, text) \
                and (instead := whole_act_instead(plan, text, self.deps.language, self.tools.registry)) is not None:
            self.timeline.mark("whole_act_instead", tool=instead.tool, was=plan.tool)
            plan, line = instead, None
        if idea:
            plan, line = self._idea(plan, line, text)
        elif delegating:
            acts = plan.tool is not None and self.tools.acts(plan.tool)
            route = route_after_decision(text, self.deps.language, plan.tool, self._supported(plan, text), acts)
            if route.to == "reasoner":
                await self.delegate(route, text, reply, fallback=plan)
                reply.end()
                return
        if plan.tool is None:
            say(reply, self._no_tool_reply(text))
            reply.flush()
        else:
            plans = each_thing(plan, text)
            if len(plans) > 1:
                self.timeline.mark("each_thing", tool=plan.tool, things=len(plans))
            for i, one in enumerate(plans):
                await self.call_tool(one, text, reply, line=line if i == 0 else None, afresh=len(plans) == 1)
        reply.end()

    def _idea(self, plan: ToolPlan, line: str | None, text: str) -> tuple[ToolPlan, str | None]:
        """A request for an idea of what to cook as the recipe search, with the user's own words
        as its query (the book offers its quickest recipes when they name no dish): the talker's
        line is kept when it chose the search, else the search's own line is said. It had chosen
        the search for "quick" and the book asked back which dish; or it had answered alone."""
        self.timeline.mark("idea", decided=plan.tool or NO_TOOL)
        if plan.tool != "recipe_search":
            line = self._line("recipe_search")
        return idea_search(plan, text), line

    def _heard_doubtfully(self, plan: ToolPlan) -> bool:
        """Whether the words an act stands on may have been misheard: the hearing was doubtful, a
        nearly-as-likely hearing of the same audio does not support its arguments ("seven
        minutes" against "thirty minutes"), a second ear did not hear its values, or the act needs
        a word the recognizer was unsure of ("five seconds" heard over the fan)."""
        hearing = self.hearing
        if hearing.verdict != "sure":
            return True
        rival = next((r for r in hearing.rivals if not self._supported(plan, r)), None)
        if rival is not None:
            self.timeline.mark("rival_hearing", tool=plan.tool, rival=rival)
            return True
        second = hearing.second_hearing
        if second is not None and not self._values_in(plan, second):
            self.timeline.mark("ears_disagree", tool=plan.tool, second=second)
            return True
        if hearing.unsure_words and hearing.sure_text is not None and not self._values_in(plan, hearing.sure_text):
            self.timeline.mark("unsure_words", tool=plan.tool, words=list(hearing.unsure_words))
            return True
        return False

    def _no_tool_reply(self, text: str) -> str:
        """What to say when no tool serves the words and the reasoner does not answer: never the
        talker's own line. A 135M model's free text was nonsense as often as not ("Sorry, I'm not
        a fan of those." to a request to run the hood fan; in Korean, strings of syllables that
        are no words), so thanks, a greeting and "never mind" get their usual answer, a question
        that nothing could answer says so, a request to do something nothing here does says that,
        and anything else is asked for again in other words."""
        language = "ko" if speaks_korean(text, self.deps.language) else "en"
        which = SMALL_TALK_REPLIES.get(small_talk(text, language) or "")
        if which is None and asks_nothing(text, language):
            which = Phrase.NEVER_MIND  # "…, so no need for you to do anything": "Okay."
        if which is None:
            if asks_for_act(text, language):
                which = Phrase.CANNOT_YET
            elif is_question(text, language):
                which = Phrase.NO_ANSWER
            else:
                which = Phrase.SAY_ANOTHER_WAY
        self.timeline.mark("template", phrase=which.value)
        return phrase(language, which)

    def _supported(self, plan: ToolPlan, text: str) -> bool:
        return self._holds(plan, text, self.tools.grounded)

    def _values_in(self, plan: ToolPlan, text: str) -> bool:
        # Only the values: the verb is often the least sure word (Whisper splits a first word's
        # probability between "Cancel" and "cancel"), and a misheard verb mostly leaves the act.
        return self._holds(plan, text, self.tools.holds_values)

    def _holds(self, plan: ToolPlan, text: str, check: Grounding | None) -> bool:
        """Whether ``text`` bears the planned act out by ``check`` (true for no act, or no check)."""
        return plan.tool is None or not self.tools.acts(plan.tool) or check is None or check(plan.tool, plan.args, text)

    # -- the reasoner ---------------------------------------------------------------------
    async def delegate(self, route: Route, text: str, reply: Reply, fallback: ToolPlan | None = None) -> None:
        """The reasoner answers, within its caps, while the talker's holding line is said. When a cap
        stops it, what it said or did stands, but never an unfinished sentence; when it said nothing
        whole, the kitchen reference's best fact for the question is said as a short answer, or,
        with none near enough, that it could not be worked out in time. When it fails (a server
        gone), the talker's decision stands: its tool, or the line for words no tool serves."""
        d, tl = self.deps, self.timeline
        reasoner = d.reasoner
        assert reasoner is not None and route.reason in ("knowledge", "several_acts", "talker_unsure")
        self.result.route = route.reason
        line = holding_line(route.reason, d.language)  # type: ignore[arg-type]
        tl.mark("route", to="reasoner", reason=route.reason, where=reasoner.where)
        self.emit(Delegated(route.reason, reasoner.where))
        self._say_line(line, reply, kind="holding")
        said = False
        facts: list[str] = []
        start = len(reply.text)  # where the reasoner's own answer begins

        def answered() -> bool:
            return any(ch.isalpha() for ch in reply.text[start:])

        try:
            async with asyncio.timeout(reasoner.settings.max_s):
                tl.mark("reasoner_start")
                if route.reason == "several_acts":
                    plans = await reasoner.plan(text, self.history)
                    tl.mark("reasoner_end", calls=len(plans))
                    if not plans:
                        raise ValueError("the reasoner made no usable call")
                    # Not repaired from the words: the repair reads one call's values from the whole
                    # request ("flour and butter" as one item, twice); the grounding check still
                    # asks back any value the words do not hold.
                    for plan in plans:
                        said = True
                        await self.call_tool(plan, text, reply)
                else:
                    facts = reasoner.facts_for(text)
                    tl.mark("reference", facts=len(facts))
                    count = 0
                    with written_by(reply, "reasoner"):
                        async for piece in reasoner.answer(text, self.history, line, facts):
                            tl.mark_once("reasoner_first_token")
                            said = said or bool(piece.strip())
                            count += 1
                            feed_counted(reply, piece, count, reasoner.settings.max_tokens)
                    tl.mark("reasoner_end")
                    if stopped_at_cap(reasoner.chat):
                        tl.mark("reasoner_token_cap", tokens=reasoner.settings.max_tokens)
                        cut_short(reply)  # its last sentence was cut off: not said
                        if not answered():
                            self._short_answer(facts, reply, fallback=phrase(d.language, Phrase.NO_ANSWER))
                    elif not said:
                        # Nothing worth saying (an answer copied from its examples was held back)
                        tl.mark("reasoner_said_nothing")
                        unsure = route.reason == "talker_unsure"  # a request missed, more likely than a question
                        self._short_answer(facts, reply, fallback=phrase(d.language, Phrase.SAY_ANOTHER_WAY if unsure else Phrase.NO_ANSWER))
        except TimeoutError:
            tl.mark("reasoner_capped", after_s=reasoner.settings.max_s, said=said)
            log.info("the reasoner ran past %.1f s on %r", reasoner.settings.max_s, text)
            cut_short(reply)  # a sentence it was writing is not said
            if route.reason == "several_acts":
                if not said:
                    say(reply, cap_line(d.language))
            elif not answered():
                self._short_answer(facts, reply, fallback=cap_line(d.language))
        except Exception as exc:  # noqa: BLE001 - a reasoner that fails leaves the talker's decision to stand
            log.warning("the reasoner failed (%s); the talker's decision stands for %r", exc, text)
            tl.mark("reasoner_failed", error=str(exc)[:200])
            if said:
                cut_short(reply)  # a sentence it broke off in is not said
                if route.reason == "several_acts" or answered():
                    return
            self.result.route = None
            plan = fallback if fallback is not None else (await self._decide(text, reply))[0]
            if plan.tool is None:
                say(reply, self._no_tool_reply(text))
            else:
                await self.call_tool(plan, text, reply)
        reply.flush()

    def _short_answer(self, facts: Sequence[str], reply: Reply, fallback: str) -> None:
        """The reference's best fact for the question (found by its own bar), marked as a short
        answer; ``fallback`` when it has none."""
        if facts:
            self.timeline.mark("short_answer", facts=len(facts))
            say(reply, short_answer(facts[0], self.deps.language), "tool")  # a vetted fact, as a tool's result is
        else:
            say(reply, fallback)

    def _decided_already(self, text: str):
        record = self.speculation
        latest = record.latest_decision() if record is not None else None
        if latest is None or words_of(latest.heard) != words_of(text):
            return None
        return latest

    async def _decide(self, text: str, reply: Reply) -> tuple[ToolPlan, str | None]:
        """The decision as the model writes it; the line before a slow tool is fed the moment the
        tool is chosen, unless an early result for that tool may make it needless (then it is
        returned, to be said only if there is a wait after all). The talker's own line is never
        said: without a tool, the answer is the caller's to choose (:meth:`_no_tool_reply`)."""
        tl, tools = self.timeline, self.tools
        plan: ToolPlan | None = None
        held: str | None = None
        tl.mark("llm_start")
        try:
            async with aclosing(tools.planner.stream(text, self.history, examples=self._shared_examples(text))) as events:
                async for event in events:
                    tl.mark_once("first_token")
                    if isinstance(event, ToolChosen):
                        slow = event.tool is not None and tools.speaks_first(event.tool)
                        tl.mark("tool_chosen", tool=event.tool or NO_TOOL, slow=slow)
                        if event.tool is None:
                            # No tool: the line the talker would write next is never said, so it is
                            # not written either (closing the stream stops the model).
                            plan = ToolPlan("", None, {})
                            break
                        if (line := self._line(event.tool)) is not None:
                            if self._fetched_early(event.tool):
                                held = line
                            else:
                                self._say_line(line, reply)
                    elif isinstance(event, ToolPlan):
                        plan = event
        finally:
            tl.mark("llm_end")
            prompt = getattr(tools.planner.chat, "last_prompt", None)
            if isinstance(prompt, tuple):
                tl.mark("decision_prompt", tokens=prompt[0], evaluated=prompt[1])
        assert plan is not None
        return plan, held

    def _shared_examples(self, text: str) -> Sequence[Any] | None:
        """The examples the Thinker's newest decision was shown, when they are about what the final
        words ask for (the nearest example calls the same tool): the prompt it evaluated is then
        shared, and only the last words are left to read.  None: pick for the final words."""
        record = self.speculation
        started = record.last_prompt if record is not None else None
        if not self.deps.features.prefill or started is None or not started[1]:
            return None
        heard, examples, key = started
        if key is None:
            return examples if words_of(text).startswith(words_of(heard)) else None
        return examples if example_key(self.tools.planner, text) == key else None

    def _line(self, tool: str) -> str | None:
        """The line before a slow tool: the tool's own ("Let me check the weather."), never the
        talker's, which answered in it as often as not ("It's 21 degrees", before the tool ran)."""
        d = self.deps
        if not (d.features.pretool_line and self.tools.speaks_first(tool)):
            return None
        return pretool_line(tool, d.language)

    def _say_line(self, line: str | None, reply: Reply, kind: str = "pretool") -> None:
        if not line:
            return
        reply.kind = kind
        say(reply, line)
        if self.deps.features.flush_at_tool:
            reply.flush()
        reply.kind = "answer"

    # -- 3. the tool ----------------------------------------------------------------------
    def _fetched_early(self, tool: str) -> bool:
        record = self.speculation
        return record is not None and any(c.key.tool == tool and c.result is not None and c.result.ok for c in record.calls.values())

    def _foresee(self, plan: ToolPlan, early: SpeculativeCall | None, origin: Origin) -> None:
        """While the turn waits to make the call, the audio of what it will say is made ahead."""
        if self.foresight is None or plan.tool is None:
            return
        if early is not None and early.task.done() and not early.task.cancelled() and early.task.exception() is None:
            self.foresight.result(early.task.result())
        elif self.tools.acts(plan.tool) and origin in MAY_ACT:
            self.foresight.act(plan.tool, plan.args)

    def _early(self, plan: ToolPlan) -> SpeculativeCall | None:
        record = self.speculation
        if record is None or plan.tool is None:
            return None
        key = call_key(self.tools.registry, plan.tool, plan.args)
        return record.usable(key) if key is not None else None

    def _origin(self, plan: ToolPlan, text: str) -> Origin:
        """Where a decided call came from (:mod:`agent.deciding.origins`): the user's words when they
        support it, else a model's guess or text a tool returned."""
        assert plan.tool is not None
        if self._supported(plan, text):
            return "user"
        return unsupported_origin(plan.tool, plan.args, text, self.history, self.results)

    async def call_tool(
        self, plan: ToolPlan, text: str, reply: Reply, origin: Origin | None = None, line: str | None = None, afresh: bool = False,
    ) -> None:
        """Make ``plan`` with its ``origin``; a decision's (``origin`` None) is worked out from the words.
        ``afresh``: the talker's one decision for the request; refused as ``"tool_output"``, the
        request is decided again on its words alone (:meth:`_decide_afresh`)."""
        d, tl, tools = self.deps, self.timeline, self.tools
        assert plan.tool is not None
        origin = origin or self._origin(plan, text)  # of what was decided: more time asked for is grounded as that
        if plan.tool in ONE_TIMER_TOOLS:
            timers = await self._timers_running()
            chosen = among_running(plan, text, timers)
            if origin in MAY_ACT and (asks_for_act(text, d.language) or opens_with_a_command(asked_part(text, d.language), d.language)):
                # more time the words ask for ("…, would you time it?"), not a length the
                # talker made up, nor one only wished for ("오 분만 더 누워 있고 싶다")
                chosen = more_time_after_it_rang(chosen, timers, text)
            if chosen != plan:
                tl.mark("timer_named", tool=chosen.tool, label=chosen.args.get("label"), was=plan.tool)
                plan = chosen
        record = ToolCallRecord(plan.tool, dict(plan.args), acts=tools.acts(plan.tool), origin=origin)
        self.result.tool_calls.append(record)
        doubtful = record.acts and origin == "user" and self._heard_doubtfully(plan)
        if origin == "model" or doubtful:
            # Asked back in the user's words: a list item they never said is asked for, not named.
            # An act on words heard over noise is asked back too: a misheard "seven" must cost
            # one question, never a thirty-minute timer.
            earlier = " ".join(m.content for m in self.history if m.role == "user")
            args = asked_back(plan.tool, plan.args, text, earlier)
            needs = missing_value(plan.tool, args, text)
            pending = PendingAct(replace(plan, args={k: v for k, v in args.items() if k != needs}), needs)
            why = "heard doubtfully" if doubtful else "not supported by"
            log.info("not acting on %s%s: %s %r; asking", plan.tool, plan.args, why, text)
            tl.mark("tool_refused", tool=plan.tool, reason="ask_back", needs=needs, origin=origin, doubtful=doubtful)
            say(reply, ask_for(pending, d.language) if needs else question(plan.tool, args, d.language))
            reply.flush()
            self.result.pending = pending
            self.emit(ToolCalled(plan.tool, dict(plan.args), "refused", {"reason": "asked back", "needs": needs}, origin=origin))
            return
        early = self._early(plan)
        if early is None or not early.task.done():
            self._say_line(line, reply)  # not fetched early, or not back yet: there is a wait
        self._foresee(plan, early, origin)
        # The line before the tool must reach the speaker before the tool starts; and nothing runs
        # before the user has surely finished.
        await self.committed.wait()
        await reply.written()
        self.result.tool_calls[-1] = replace(record, ran=True)
        if early is not None:
            tl.mark("tool_start", tool=plan.tool, early=True)
            tl.mark("heartbeat_reused", tool=plan.tool, waited=not early.task.done())
            result = await early.task
        else:
            tl.mark("tool_start", tool=plan.tool, origin=origin)
            if record.acts and origin in MAY_ACT:
                # On record before the store changes: a crash between the store's commit and the
                # settled call below must not leave a change that no turn made.
                self.emit(ToolStarted(plan.tool, dict(plan.args), origin))
            # A call whose content only a tool's result holds goes to the executor all the same:
            # the refusal is the executor's, the one place the policy per origin lives.
            result = await tools.executor.call(plan.tool, plan.args, origin=origin)
        if result.ok and result.output is not None:
            data = dict(result.output.data or {})
            self.results.append(result.output.text)
            self.result.tool_calls[-1] = replace(self.result.tool_calls[-1], data=data, ok="error" not in data)
            offer = offered_act(tools.registry, data)
            if offer is not None:
                self.result.pending = offer  # a yes makes it, with the origin "offer"
        tl.mark("tool_end", tool=plan.tool, ok=result.ok, error=result.error.kind if result.error else None)
        refused = result.error is not None and result.error.kind.startswith("refused")
        if refused:
            self.result.tool_calls[-1] = replace(self.result.tool_calls[-1], ran=False)  # refused: never made
            tl.mark("tool_refused", tool=plan.tool, reason=result.error.kind if result.error else "", origin=origin)
        settled = self.result.tool_calls[-1]
        status = "ok" if settled.ok else "refused" if refused else "error"
        self.emit(ToolCalled(plan.tool, dict(plan.args), status, dict(settled.data) or ({"error": result.error.message} if result.error else {}),
                             origin=origin))
        if refused and origin == "tool_output" and afresh:
            await self._decide_afresh(text, reply)
            return
        if tools.answer == "model" and result.ok:
            messages = [
                ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text),
                ChatMessage("assistant", plan.say), ChatMessage("user", answer_prompt(plan.tool, result)),
            ]
            count = 0
            with written_by(reply, "talker"):  # the tool's result in the model's words: only for a model that writes well
                async for piece in d.chat.stream(messages, tools.answer_max_tokens):
                    count += 1
                    feed_counted(reply, piece, count, tools.answer_max_tokens)
            if stopped_at_cap(d.chat):
                cut_short(reply)  # its last sentence was cut off at the cap: not said
        else:
            say(reply, spoken_result(result, d.language), "tool")
        reply.flush()

    async def _decide_and_call(self, text: str, reply: Reply) -> None:
        """One decision on ``text`` and its call, or the line for words no tool serves; the reply
        is left open for what follows (a part of a longer request)."""
        plan, line = await self._decide(text, reply)
        if plan.tool is None:
            say(reply, self._no_tool_reply(text))
            return
        await self.call_tool(plan, text, reply, line=line)

    async def _decide_afresh(self, text: str, reply: Reply) -> None:
        """The request decided again without the conversation, after the decision on it was an act
        that only text read from a tool held: the model obeyed what it read, and without the
        conversation nothing read is before it. What the user asked ("what time is it?") is
        answered; if the act comes back, its refusal is said."""
        self.timeline.mark("decided_afresh")
        plan = await self.tools.planner.plan(text, ())
        if plan.tool is None:
            say(reply, self._no_tool_reply(text))
            reply.flush()
        else:
            await self.call_tool(plan, text, reply)
