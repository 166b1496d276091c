"""Two requests in one breath, one of them for the home: "Hood off and put the kitchen one on"
(the kitchen light), "Fan on, and a five minute timer for the noodles, please", "거실 불은 끄고 주방 불 켜 줘",
"환풍기 켜고 삼 분 타이머도 맞춰 줘".

The words are split where the second request begins (English "and" before a clause that asks on
its own; a Korean verb's connective 고), and each part is read as a request of its own: a home
command where it is one, any other request where it opens with its own verb. "The kitchen one" is
the thing of the other part's kind. Words that only join things under one verb ("turn off the
lights and the fan") are one request, and are left to the home command as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.deciding.home_commands import home_command
from agent.deciding.intents import asks_for_act, opens_with_a_command, speaks_korean
from agent.deciding.lexicon import lexicon
from agent.deciding.tool_calls import ToolPlan

Part = tuple[str, ToolPlan | None]
"""A part's words, and its home command (None: a request of another kind, decided on its own)."""

_EN_JOIN = re.compile(r",?\s+and\s+(?:then\s+|also\s+)?", re.IGNORECASE)


def _korean_forms() -> dict[str, str]:
    """Each verb of the home said with its connective 고, and the same verb as a request ends
    ("끄고" → "꺼"), from the class ``home_verb_joined`` ("끄고=꺼")."""
    return dict(p.split("=", 1) for p in lexicon("ko").phrases("home_verb_joined"))


def _parts(text: str, korean: bool) -> list[str] | None:
    if korean:
        forms = _korean_forms()
        said = "|".join(re.escape(joined) for joined in sorted(forms, key=len, reverse=True))
        found = list(re.finditer(rf"(?P<v>{said})[,\s]+", text))
        if len(found) != 1:
            return None
        m = found[0]
        return [(text[: m.start()] + forms[m["v"]]).strip(), text[m.end():].strip()]
    pieces = _EN_JOIN.split(text.strip())
    return [p.strip(" ,") for p in pieces] if len(pieces) == 2 else None


def home_and_more(text: str, language: str, refers: Callable[..., bool], last: list[str] | None = None) -> list[Part] | None:
    """The two requests of the words, in order, when one of them is a home command and the other a
    request of its own; None when the words are one request."""
    korean = speaks_korean(text, language)
    parts = _parts(text, korean)
    if parts is None or not all(parts):
        return None
    plans = [home_command(part, language, refers, last) for part in parts]
    if not any(plan is not None and plan.tool is not None for plan in plans):
        return None
    for i, part in enumerate(parts):
        other = plans[1 - i]
        kind = str(other.args.get("target") or "").split()[-1:] if other is not None and other.tool else []
        if plans[i] is None and kind and re.search(r"\bones?\b", part):
            # "…and put the kitchen one on": the thing of the other part's kind
            parts[i] = re.sub(r"\bones?\b", kind[0], part)
            plans[i] = home_command(parts[i], language, refers, last)
    for part, plan in zip(parts, plans, strict=True):
        # the other part must ask on its own: "…and the fan" shares the first part's verb
        if plan is None and not (asks_for_act(part, language) if korean else opens_with_a_command(part, language)):
            return None
    return [(parts[0], plans[0]), (parts[1], plans[1])]
