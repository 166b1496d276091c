"""Home commands hearth hears itself: "turn on the kitchen lights", "거실 불 꺼 줘", "set the heating
to 21", "is the oven on?", "거실 몇 도야?".

Like the volume, these are fixed in form and frequent, so they are matched here, in a blink and
without the model, the way Home Assistant's own Assist matches its sentences.  Which thing is
meant is the home tool's to work out from the words (names, aliases, areas); here the words
only have to name something in the home at all (``refers``), so "turn off the timer" and "불고기
레시피" stay with the other tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.deciding.intents import speaks_korean, utterance_words
from agent.deciding.spoken_numbers import KO_NUMBER, english_numbers, korean_number
from agent.deciding.tool_calls import ToolPlan

MAX_HOME_WORDS = 14

_NOT_HOME = re.compile(r"\b(?:timer|timers|alarm|reminder|volume|recipe|step)\b|타이머|알람|볼륨|음량|소리|레시피|단계")

# -- English ---------------------------------------------------------------------------------
_EN_LEAD = r"^(?:(?:ok|okay|hey|please|can you|could you|would you|will you|hearth|and|now|then|also)\s+)*"
_EN_TAIL = r"(?:\s+(?:please|now|for me|thanks|thank you))*$"
_EN_ACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("on", re.compile(_EN_LEAD + r"(?:turn|switch|put|flip)\s+on\s+(?P<x>.+?)" + _EN_TAIL)),
    ("on", re.compile(_EN_LEAD + r"(?:turn|switch|put|flip)\s+(?P<x>.+?)\s+on" + _EN_TAIL)),
    ("off", re.compile(_EN_LEAD + r"(?:turn|switch|shut|flip)\s+off\s+(?P<x>.+?)" + _EN_TAIL)),
    ("off", re.compile(_EN_LEAD + r"(?:turn|switch|shut|flip)\s+(?P<x>.+?)\s+off" + _EN_TAIL)),
    ("toggle", re.compile(_EN_LEAD + r"toggle\s+(?P<x>.+?)" + _EN_TAIL)),
    ("open", re.compile(_EN_LEAD + r"open\s+(?:up\s+)?(?P<x>.+?)" + _EN_TAIL)),
    ("close", re.compile(_EN_LEAD + r"(?:close|shut)\s+(?P<x>.+?)" + _EN_TAIL)),
    ("unlock", re.compile(_EN_LEAD + r"unlock\s+(?P<x>.+?)" + _EN_TAIL)),
    ("lock", re.compile(_EN_LEAD + r"lock\s+(?:up\s+)?(?P<x>.+?)" + _EN_TAIL)),
)
_EN_SET = re.compile(
    _EN_LEAD + r"(?:set|turn|put|change|make|dim|bring)\s+(?:up\s+|down\s+)?(?P<x>.+?)\s+(?:up\s+|down\s+)?(?:to|at)\s+"
    r"(?P<n>[\w.]+(?:[ -][\w.]+)?)(?:\s*(?:degrees?|percent|%|celsius|c))?" + _EN_TAIL
)
_EN_ASK_STATE = re.compile(
    r"^(?:(?:hey|ok|okay|hearth|and|so)\s+)*(?:is|are)\s+(?P<x>.+?)\s+(?:still\s+)?"
    r"(?:on|off|open|closed|shut|locked|unlocked|running|left on)(?:\s+(?:right now|now|still))?$"
)
_EN_ASK_TEMPERATURE = re.compile(
    r"^(?:(?:hey|ok|okay|hearth|and|so)\s+)*(?:what's|what is|whats|how)\s+(?:the\s+)?(?:temperature|temp|warm|cold|hot)"
    r"(?:\s+is\s+it)?\s+(?:in|of)\s+(?P<x>.+?)(?:\s+(?:right now|now))?$"
)

# -- Korean ----------------------------------------------------------------------------------
_KO_POLITE = r"(?:\s*(?:줘|줘요|주세요|줄래|줄래요|줄래\s*\?|봐|라|요))*\s*$"
_KO_ACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("on", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:켜|켜라|틀어|켜\s*줘|켜줘|켜\s*주세요|켜\s*놔|켜놔)" + _KO_POLITE)),
    ("off", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:꺼|꺼라|끄고|꺼\s*줘|꺼줘|꺼\s*주세요|꺼\s*놔|꺼놔|끄자)" + _KO_POLITE)),
    ("unlock", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:잠금\s*(?:을\s*)?(?:해제|풀어))(?:\s*해)?" + _KO_POLITE)),
    ("lock", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:잠가|잠궈|잠가\s*줘|잠궈\s*줘)" + _KO_POLITE)),
    ("open", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:열어)" + _KO_POLITE)),
    ("close", re.compile(r"^(?P<x>.+?)\s*(?:좀\s*)?(?:닫아)" + _KO_POLITE)),
)
_KO_SET = re.compile(
    rf"^(?P<x>.+?)\s*(?P<n>{KO_NUMBER})\s*(?:도|퍼센트|%)\s*(?:로|으로|에)\s*(?:좀\s*)?"
    r"(?:맞춰|맞춰\s*줘|올려|내려|설정해|해|틀어|켜)" + _KO_POLITE
)
_KO_ASK_STATE = re.compile(
    r"^(?P<x>.+?)\s*(?:아직\s*)?(?:켜져|꺼져|켜|열려|닫혀|잠겨)\s*(?:있어|있나|있니|있어요|있나요|있는지|있냐)\s*\??\s*(?:알려\s*줘)?$"
    r"|^(?P<y>.+?)\s*(?:켜졌어|꺼졌어|켜졌나|꺼졌나|켜졌니|꺼졌니)\s*\??$"
)
_KO_ASK_TEMPERATURE = re.compile(r"^(?P<x>.+?)\s*(?:온도\s*(?:가|는)?\s*)?(?:몇\s*도|온도\s*(?:어때|알려)|따뜻|추워|더워)")


_PRONOUN = re.compile(r"^(?:it|them|that|those|그거|그것|그걸|걔)?(?:\s*(?:back|again|다시|도로))?$")


def home_command(text: str, language: str, refers: Callable[..., bool], last: list[str] | None = None) -> ToolPlan | None:
    """The home call the utterance asks for, or None.  ``refers(words, temperature=False)``: the
    words name something in the home (a name, an alias, an area, a kind of thing: "lights", "불");
    with ``temperature``, a room or a thing that reports its temperature ("오븐 몇 도로 해야 돼?"
    asks how to bake, not what the oven says).  ``last``: the entities the last home act changed,
    which "turn it off" / "그거 다시 켜 줘" mean."""
    words = utterance_words(text, keep="%.")
    if not words or len(words.split()) > MAX_HOME_WORDS or _NOT_HOME.search(words):
        return None
    plan = _korean(words) if speaks_korean(words, language) else _english(words)
    if plan is None:
        return None
    target = str(plan.args.get("target") or "").strip()
    if last and plan.tool == "home_control" and target and _PRONOUN.match(target.removeprefix("the ")):
        return ToolPlan("", "home_control", {k: v for k, v in plan.args.items() if k != "target"} | {"entity_ids": list(last)})
    temperature = plan.args.get("what") == "temperature"
    if not refers(str(plan.args.get("target") or ""), temperature=temperature):
        return None
    return plan


_EN_SHORT = re.compile(r"^(?P<x>(?:the\s+)?[\w' ]{2,40}?)\s+(?P<a>on|off)(?:\s+please)?$")
_EN_WHERE = re.compile(r"^(?P<rest>.+?)\s+(?P<where>(?:in|of)\s+the\s+[\w' ]{2,30}?|in\s+here)(?:\s+(?:please|now))?$")


def _english(words: str) -> ToolPlan | None:
    words = words.rstrip(".")
    # "turn the lights on in the living room": the room said last belongs to the thing.
    where = ""
    if (m := _EN_WHERE.match(words)) is not None and not _EN_ASK_TEMPERATURE.match(words):
        words, where = m["rest"], m["where"]
    plan = _english_plan(words)
    if plan is not None and where and plan.args.get("target"):
        plan.args["target"] = f"{plan.args['target']} {where}"
    return plan


def _english_plan(words: str) -> ToolPlan | None:
    if (m := _EN_ASK_TEMPERATURE.match(words)) is not None:
        return ToolPlan("", "home_state", {"target": m["x"], "what": "temperature"})
    if (m := _EN_ASK_STATE.match(words)) is not None:
        return ToolPlan("", "home_state", {"target": m["x"]})
    if (m := _EN_SET.match(words)) is not None:
        numbers = english_numbers(m["n"])
        if numbers:
            return ToolPlan("", "home_control", {"action": "set", "target": m["x"], "value": numbers[0].value})
    for action, pattern in _EN_ACTS:
        if (m := pattern.match(words)) is not None:
            return ToolPlan("", "home_control", {"action": action, "target": m["x"]})
    # "the oven is on" says how things are; only a bare "kitchen lights on" asks.
    if (m := _EN_SHORT.match(words)) is not None and not re.search(r"\b(?:is|are|was|were|be|been|still|turn|switch|it|that|this)\b|'s\b", m["x"]):
        return ToolPlan("", "home_control", {"action": m["a"], "target": m["x"]})  # "kitchen lights on"
    return None


def _korean(words: str) -> ToolPlan | None:
    words = words.rstrip(". ")
    if (m := _KO_SET.match(words)) is not None and (value := korean_number(m["n"])) is not None:
        return ToolPlan("", "home_control", {"action": "set", "target": m["x"], "value": value})
    if (m := _KO_ASK_STATE.match(words)) is not None:
        return ToolPlan("", "home_state", {"target": m["x"] or m["y"]})
    if (m := _KO_ASK_TEMPERATURE.match(words)) is not None:
        return ToolPlan("", "home_state", {"target": m["x"], "what": "temperature"})
    for action, pattern in _KO_ACTS:
        if (m := pattern.match(words)) is not None:
            return ToolPlan("", "home_control", {"action": action, "target": m["x"]})
    return None
