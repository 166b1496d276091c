"""Answering a transcript over Wyoming with hearth's assistant, unit by unit.

The protocol's streaming order is ``handled-start``, a ``handled-chunk`` per spoken unit,
``handled`` with the whole answer (what Home Assistant's conversation agent reads), then
``handled-stop``.  ``handled-start`` waits for the first unit, so a turn that says nothing
is answered with ``not-handled`` alone.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from wyoming.event import Event
from wyoming.handle import Handled, HandledChunk, HandledStart, HandledStop, NotHandled

from firmware_py.safe_text import clean
from firmware_py.wyoming.protocols import TextAnswers

logger = logging.getLogger(__name__)

Write = Callable[[Event], Awaitable[None]]

NOTHING_HEARD = "Nothing was said."
NO_ANSWER = "hearth had no answer."


async def answer(answers: TextAnswers, text: str, context: dict[str, Any] | None, write: Write) -> None:
    """Run one text turn and write its units as they are cut."""
    if not text.strip():
        await write(NotHandled(NOTHING_HEARD, context=context).event())
        return
    units: list[str] = []
    # aclosing: when a write fails after a unit is yielded (the client is gone), the turn is closed
    # right here, so the assistant's next text turn need not wait for the iterator to be collected.
    async with contextlib.aclosing(answers.answer_text(text)) as replies:
        async for unit in replies:
            # A reply may read back text kept before it was cleaned where it came in (an older
            # list item or note): Home Assistant shows and speaks it, so it goes out clean.
            unit = clean(unit)
            if not unit.strip():
                continue
            if not units:
                await write(HandledStart(context=context).event())
            units.append(unit)
            await write(HandledChunk(unit).event())
    if not units:
        await write(NotHandled(NO_ANSWER, context=context).event())
        return
    await write(Handled(" ".join(u.strip() for u in units), context=context).event())
    await write(HandledStop().event())
