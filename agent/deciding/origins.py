"""Where a tool call came from: the user's words, a yes to a question, or text a tool returned.

Every call hearth makes carries an origin (:data:`tools.executor.Origin`), and the executor runs
an acting tool only for the origins in :data:`tools.executor.MAY_ACT`. The Responder gives each
call its origin by how the call arose:

* a command word, "undo that", or a decision the user's words this turn support: ``"user"``;
* a yes to an act hearth asked back: ``"confirmed"``; a yes to a tool's offer: ``"offer"``;
* a decision on an act the words do not support:

  - the words ask for this kind of act but do not hold what it would do ("add those to the list"
    after a recipe was read, "set a timer" after "about ten minutes"): ``"model"``, the model's
    reading of what the user pointed at, asked back ("Add flour to the shopping list?"), never
    made as is;
  - the words do not ask for it, and what it would do (or, for a call without values, words
    asking for it) is found in text the models read that the user never said (a tool's result, hearth's replies, which carry what tools returned):
    ``"tool_output"``. It never acts, and is not asked back either: a question would give an
    instruction found in a recipe hearth's own voice, and make one "yes" enough to obey it;
  - else (a guess in nobody's words, or in the user's earlier ones): ``"model"``, asked back.

The models see the conversation so far, in which tools' results are hearth's replies; an
instruction inside a recipe, a list item or a forecast's place name can make a model propose an
act. This is what keeps that proposal from acting.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from agent.deciding.arguments import act_asked_for, content_in
from agent.deciding.confirm import PendingAct
from agent.deciding.tool_calls import ToolPlan
from agent.model.llm import ChatMessage
from tools.executor import Origin
from tools.registry import ToolRegistry

log = logging.getLogger(__name__)


def said_and_read(text: str, history: Sequence[ChatMessage], results: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """What the user said (this turn's words, then the earlier turns'), and what the models read
    that the user did not say: hearth's replies in the history, and the results of tools run in
    this turn (``results``)."""
    said = [text, *(m.content for m in history if m.role == "user")]
    read = [*(m.content for m in history if m.role == "assistant"), *results]
    return said, read


def unsupported_origin(tool: str, args: dict[str, Any], text: str, history: Sequence[ChatMessage], results: Sequence[str] = ()) -> Origin:
    """The origin of a decided acting call that the user's words this turn (``text``) do not
    support: ``"tool_output"`` or ``"model"``, as the module says."""
    if act_asked_for(tool, text):
        return "model"
    said, read = said_and_read(text, history, results)
    if any(holds(tool, args, words) for words in said if words.strip()):
        return "model"
    return "tool_output" if any(holds(tool, args, words) for words in read if words.strip()) else "model"


_DESCRIBING = ("label", "quantity")
"""Values that describe what a call makes (a timer's name, an item's amount) rather than are it: a
model adds them of its own ("oven", "a dozen"), so where a call came from is told without them."""


def holds(tool: str, args: dict[str, Any], text: str) -> bool:
    """Whether ``text`` holds the call: what it would create or change (its duration, item, note,
    "all"), or, for a call that carries no such value ("cancel the timer"), words asking for that act."""
    core = {k: v for k, v in args.items() if k not in _DESCRIBING}
    valued = core.get("all") is True or any(v is not None and not isinstance(v, bool) for v in core.values())
    return content_in(tool, core, text) if valued else act_asked_for(tool, text)


def offered_act(registry: ToolRegistry, data: dict[str, Any]) -> PendingAct | None:
    """A tool's offer in its result's data ("Shall I set a 25-minute timer?") as the act a yes makes
    (origin ``"offer"``), when it names an acting tool and arguments that tool accepts. An offer out
    of bounds (a recipe step's "9999 minutes") or of a look-up is not kept: a yes then asks nothing."""
    offer = data.get("offer")
    if not isinstance(offer, dict) or not isinstance(offer.get("args"), dict):
        return None
    spec = registry.get(str(offer.get("tool")))
    if spec is None or spec.side_effects != "act":
        return None
    args = dict(offer["args"])
    try:
        spec.args.model_validate(args)
    except ValidationError as exc:
        log.warning("not keeping the offer of %s%s: %s", spec.name, args, " ".join(str(exc).split())[:200])
        return None
    return PendingAct(ToolPlan("", spec.name, args), origin="offer")
