"""Turns asked in words rather than spoken: Home Assistant's ``handle``, a typed question.

A text turn goes through everything a spoken turn does after the transcript (the Responder, the
tools with the user's own origin, the question pending from the turn before, "undo that", the
history and the conversation record), so a list item added by voice is read back over the
network, and the other way round.  Only the ends differ: nothing is heard, and nothing is played
in the kitchen; each unit of the answer goes to whoever asked the moment Cadence cuts it.

Text turns take their place in the same line as spoken ones: one turn at a time, a text turn
waits for the turn under way and for the text turns asked before it, and a press on the button
interrupts a text turn like any other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace

from agent.assistant import Assistant
from agent.deps import TurnDeps
from agent.events import Event, UnitSpoken
from agent.speaking.text_out import SilentSynthesizer, TextSpeaker

log = logging.getLogger(__name__)


class TextTurns:
    """The assistant's text turns, one at a time, each streamed unit by unit to its asker.

    Built by whoever serves text turns (the Wyoming server's wiring), around the one assistant
    that also answers the button, so both kinds of turn share its line, history and record.
    """

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self._line = asyncio.Lock()
        """Held by the text turn being answered; the next ones wait on it, in the order they came."""

    def deps(self) -> TurnDeps:
        """The assistant's components as they are now, with a text-only output."""
        deps = self.assistant.deps
        # Nothing is said aloud, so nothing is made ahead for the voice either.
        return replace(deps, synthesizer=SilentSynthesizer(deps.language), speaker=TextSpeaker(), voice_ahead=None)

    async def answer_text(self, text: str) -> AsyncIterator[str]:
        """Yield each unit of the answer to ``text`` as it is cut, in order; nothing for empty text.

        The iteration ends with the turn, however it ends (answered, interrupted by a press).
        Closing the iterator early (the asker went away) cancels the turn; it is recorded as
        interrupted, with what was not yet told as unspoken.  Close it (``aclose()``, or
        ``contextlib.aclosing``) rather than dropping it: the next text turns wait until then.
        """
        if not text.strip():
            return
        assistant = self.assistant
        async with self._line:
            await assistant.until_idle()
            told: asyncio.Queue[str] = asyncio.Queue()

            def hear(event: Event) -> None:
                if isinstance(event, UnitSpoken):
                    told.put_nowait(event.text)

            turn = assistant.start_text_turn(text, hear, self.deps())
            task = turn.task
            assert task is not None
            try:
                while not (task.done() and told.empty()):
                    next_unit = asyncio.ensure_future(told.get())
                    try:
                        await asyncio.wait([next_unit, task], return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        if not next_unit.done():
                            next_unit.cancel()
                    if next_unit.done() and not next_unit.cancelled():
                        yield next_unit.result()
            finally:
                if not task.done():
                    log.info("text turn closed by its asker before its end: %r", text)
                    if assistant.current is turn:
                        assistant.interrupt()  # what was told stays told; the rest is recorded unspoken
                    else:
                        turn.cancel()
                await asyncio.wait([task])
                await asyncio.sleep(0)  # the finished turn's callback records it and frees ``current``
