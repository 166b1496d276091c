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
  - the words do not ask for it, and what it would do is found in text the models read that the
    user never said (a tool's result, hearth's replies, which carry what tools returned):
    ``"tool_output"``. It never acts, and is not asked back either: a question would give an
    instruction found in a recipe hearth's own voice, and make one "yes" enough to obey it;
  - else (a guess in nobody's words, or in the user's earlier ones): ``"model"``, asked back.

The models see the conversation so far, in which tools' results are hearth's replies; an
instruction inside a recipe, a list item or a forecast's place name can make a model propose an
act. This is what keeps that proposal from acting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.deciding.arguments import act_asked_for, content_in
from agent.model.llm import ChatMessage
from tools.executor import Origin


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
    if any(content_in(tool, args, words) for words in said if words.strip()):
        return "model"
    return "tool_output" if any(content_in(tool, args, words) for words in read if words.strip()) else "model"
