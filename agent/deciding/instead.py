"""An act the words do not bear, set aside for the one whole act they do hold.

The talker chose to take three minutes off a timer for "Take the butter back off actually, Mum's
bringing some over": no length is in the words, so the act would only be asked back. The words do
hold every value of another act they cue (the butter, taken off the list). When exactly one such act
is there, it is the request; with none, or with several, the talker's choice stands and is asked back
as before. A rule that guards: it never acts on words that hold no whole act.
"""

from __future__ import annotations

from typing import Any

from agent.deciding.arguments import grounded, repair_arguments
from agent.deciding.intents import cued_tools
from agent.deciding.tool_calls import ToolPlan
from agent.deciding.tool_examples import whole_call_in


def whole_act_instead(plan: ToolPlan, text: str, language: str, registry: Any) -> ToolPlan | None:
    """The one other act whose whole call ``text`` holds and bears out, when ``plan`` is an act the
    words do not bear; None when there is not exactly one."""
    found = []
    for tool in sorted(cued_tools(text, language) - {plan.tool}):
        spec = registry.get(tool)
        if spec is None or spec.side_effects != "act" or not whole_call_in(registry, tool, text):
            continue
        args = repair_arguments(tool, {}, text)
        if grounded(tool, args, text):
            found.append(ToolPlan("", tool, args))
    return found[0] if len(found) == 1 else None
