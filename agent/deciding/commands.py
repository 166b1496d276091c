"""Commands hearth hears itself, without the model: the volume, and moving through a recipe.

"Louder", "volume 5", "소리 줄여", "next", "go back", "다음": these are short, fixed and
frequent, like a remote control's buttons.  Matched here they are never mistaken for a timer
cancel (which "turn the volume up" once was), and they cost no model time.  A command
matches only the whole utterance, or a volume phrase in a short one, so "turn up the heat on
the sauce" is not a volume command.

Words that only make sense while a recipe is being read ("go on", "again", "what do I need")
count as recipe moves only when the turn before read a recipe.
"""

from __future__ import annotations

import re
from typing import Any

from agent.deciding.intents import speaks_korean, utterance_words
from agent.deciding.spoken_numbers import EN_ONES, KO_NATIVE_ONES, korean_number
from agent.deciding.tool_calls import ToolPlan

READING_TOOLS = ("recipe_read", "recipe_step")
MAX_COMMAND_WORDS = 12

_LEVEL_WORDS = {**{w: n for w, n in EN_ONES.items() if 0 <= n <= 10}, "max": 10, "maximum": 10, "full": 10,
                "min": 1, "minimum": 1, "lowest": 1, "highest": 10}
_NUM_EN = r"(\d{1,3}|" + "|".join(sorted(_LEVEL_WORDS, key=len, reverse=True)) + r")"

_EN_LEVEL = (
    re.compile(rf"\bvolume(?: level)?(?: (?:to|at|on|of))? {_NUM_EN}\b"),
    re.compile(rf"\b(?:set|turn|put|change|make) (?:the )?volume (?:up |down )?(?:to|at) {_NUM_EN}\b"),
    re.compile(r"\b(max|maximum|full|min|minimum|lowest|highest) volume\b"),
)
_EN_ALL_THE_WAY = re.compile(r"\b(?:volume|sound|turn (?:it|yourself)) all the way (up|down)\b|\ball the way (up|down)$")
_EN_UP = re.compile(
    r"\b(louder|speak up|turn (?:it|yourself|the volume|the sound) up|turn up (?:the )?(?:volume|sound)|volume up|"
    r"(?:increase|raise|boost) (?:the )?volume|more volume|(?:i )?can(?:'t| ?not) hear you)\b"
)
_EN_DOWN = re.compile(
    r"\b(quieter|softer|less loud|not so loud|turn (?:it|yourself|the volume|the sound) down|"
    r"turn down (?:the )?(?:volume|sound)|volume down|(?:decrease|lower|reduce) (?:the )?volume|less volume)\b"
)
# "Too loud" is a volume command only said of hearth itself: "the music next door is too loud" is not.
_EN_TOO_LOUD = re.compile(r"^(?:(?:that's|that is|you're|you are|it's|it is|this is) )?(?:way |much |a bit |a little )?too loud(?: please)?$")
_EN_MUCH = re.compile(r"\b(much|a lot|way|lot)\b")
_EN_ASK_LEVEL = re.compile(r"^(?:what(?:'s| is) (?:the|your) volume|how loud are you|what volume are you(?: at| on)?)$")

_KO_SOUND = r"(?:소리|볼륨|음량)"
_KO_NUMBER_WORDS = "|".join(["최대", "최소", "열", *sorted(KO_NATIVE_ONES, key=len, reverse=True), "[일이삼사오육칠팔구십]+"])
# A number word must end the utterance or take 으로/로/단계: "소리 이상해" is not "volume 2".
_KO_LEVEL = re.compile(
    rf"{_KO_SOUND}\s*(?:를|을|은)?\s*(?:(\d{{1,3}})|({_KO_NUMBER_WORDS})(?=\s*(?:으로|로|단계|$)))"
)
_KO_UP = re.compile(rf"{_KO_SOUND}.*(?:키워|크게|올려|높여|키워줘)|더 크게 말|크게 말해|안 들려")
_KO_DOWN = re.compile(rf"{_KO_SOUND}.*(?:줄여|작게|낮춰|내려)|더 작게 말|작게 말해|너무 시끄러|시끄러워")

_EN_POLITE = r"(?:(?:ok|okay|alright|all right|right|great|thanks|thank you|and|so|hearth)\s+)*"
_EN_TAIL = r"(?:\s+(?:please|thanks|thank you))*"
_EN_MOVES: dict[str, str] = {
    "next": r"next|next step|next one|next please|what's next|whats next|what is next|what's the next step|what is the next step|"
            r"what comes next|and next|go to the next step|read the next step|on to the next step|move on",
    "back": r"go back|back|previous|previous step|the step before|step back|go back a step|go back one step|"
            r"what was the previous step|read the previous step|last step again",
    "first": r"start over|start again from the beginning|from the beginning|from the start|back to the start|first step|"
             r"go to the first step|read it from the start",
    "ingredients": r"what are the ingredients|read the ingredients|read me the ingredients|the ingredients|ingredients|"
                   r"read the ingredients again",
}
_EN_MOVES_WHILE_READING: dict[str, str] = {
    "next": r"go on|continue|carry on|keep going|done|ok done|i'm done|im done|finished|then what|and then|what now|now what",
    "repeat": r"repeat|repeat that|repeat the step|repeat that step|repeat it|again|say that again|read it again|read that again|"
              r"one more time|what was that step|what was the step|say the step again",
    "ingredients": r"what do i need|what do we need",
}
_KO_MOVES: dict[str, str] = {
    "next": r"다음|다음 단계|다음은|다음 거|그 ?다음|그 ?다음은|다음 단계 알려 ?줘|다음 단계 읽어 ?줘|다음 거 읽어 ?줘|다음으로",
    "back": r"이전|이전 단계|뒤로|앞 단계|전 단계|이전 단계 다시|전 단계 다시 읽어 ?줘|이전 단계 읽어 ?줘",
    "first": r"처음부터|처음부터 다시|첫 단계",
    "ingredients": r"재료|재료는|재료 뭐야|재료 알려 ?줘|재료 다시 읽어 ?줘|재료 읽어 ?줘",
}
_KO_MOVES_WHILE_READING: dict[str, str] = {
    "next": r"계속|계속해|계속 읽어 ?줘|다 했어|했어|됐어|그 ?다음엔",
    "repeat": r"다시|다시 읽어 ?줘|다시 말해 ?줘|한 번 더|한번 더|뭐라고|다시 한 번",
}

_EN_READ = re.compile(
    r"\b(?:read|walk me through|take me through|go through|talk me through)\b.*\brecipe\b"
    r"|\brecipe\b.*\b(?:step by step|one step at a time)\b|\bstep by step\b|\bone step at a time\b"
    r"|\bread (?:me )?(?:the )?(?:recipe|instructions|method|steps)\b"
)
_EN_TOLD = re.compile(r"\b(?:i|we)(?: have| 've|'ve| just| already)? (?:read|went through|walked through)\b")
"""The user saying what they did ("I read the recipe already"), not asking."""
_EN_READ_WORDS = re.compile(
    r"\b(?:can you|could you|would you|please|read|me|walk|take|talk|go|through|the|recipe|recipes|for|step by step|"
    r"one step at a time|tell|how|to|make|do i|i|out|loud|aloud|instructions|method|steps|of|a|an|let's|lets|cook)\b"
)
_KO_READ = re.compile(r"(?:레시피|만드는 ?법|만드는 ?방법|요리법|조리법).*(?:읽어|단계별|차근차근|하나씩)|(?:단계별로|차근차근|하나씩).*(?:알려|읽어|말해)")
_KO_READ_WORDS = re.compile(r"레시피|만드는 ?법|만드는 ?방법|요리법|조리법|읽어 ?줘|읽어 ?주세요|읽어|단계별로|차근차근|하나씩|알려 ?줘|말해 ?줘|좀")


def _moves(table: dict[str, str], polite: bool) -> dict[str, re.Pattern[str]]:
    if polite:
        return {move: re.compile(rf"^{_EN_POLITE}(?:{words}){_EN_TAIL}$") for move, words in table.items()}
    return {move: re.compile(rf"^(?:{words})(?:\s*(?:요|주세요|해 ?줘|해 ?주세요))?$") for move, words in table.items()}


_MOVES = {("en", False): _moves(_EN_MOVES, True), ("en", True): _moves(_EN_MOVES_WHILE_READING, True),
          ("ko", False): _moves(_KO_MOVES, False), ("ko", True): _moves(_KO_MOVES_WHILE_READING, False)}


def volume_command(text: str, language: str) -> dict[str, Any] | None:
    """The volume_set arguments the utterance asks for, or None."""
    words = utterance_words(text)
    if not words or len(words.split()) > MAX_COMMAND_WORDS:
        return None
    if speaks_korean(words, language):
        if (found := _KO_LEVEL.search(words)) is not None:
            value = found.group(1) or found.group(2)
            level = {"최대": 10, "최소": 1, "열": 10}.get(value)
            level = level if level is not None else (KO_NATIVE_ONES.get(value) or korean_number(value))
            if level is not None:
                return {"level": int(level)}
        if _KO_UP.search(words):
            return {"step": 1}
        if _KO_DOWN.search(words):
            return {"step": -1}
        return None
    for pattern in _EN_LEVEL:
        if (found := pattern.search(words)) is not None:
            value = found.group(1)
            return {"level": int(value) if value.isdigit() else _LEVEL_WORDS[value]}
    if (found := _EN_ALL_THE_WAY.search(words)) is not None:
        return {"level": 10 if "up" in (found.group(1), found.group(2)) else 1}
    step = 2 if _EN_MUCH.search(words) else 1
    if _EN_UP.search(words):
        return {"step": step}
    if _EN_DOWN.search(words) or _EN_TOO_LOUD.match(words):
        return {"step": -step}
    if _EN_ASK_LEVEL.match(words):
        return {"step": 0}
    return None


def recipe_move(text: str, language: str, reading: bool) -> str | None:
    """The move through the recipe ("next", "back", "repeat", "first", "ingredients") the whole
    utterance asks for, or None.  ``reading``: the turn before read a recipe."""
    words = utterance_words(text)
    if not words:
        return None
    lang = "ko" if speaks_korean(words, language) else "en"
    tables = [_MOVES[(lang, False)], *([_MOVES[(lang, True)]] if reading else [])]
    for table in tables:
        for move, pattern in table.items():
            if pattern.match(words):
                return move
    return None


def recipe_to_read(text: str, language: str) -> str | None:
    """The dish, when the utterance asks for a recipe read aloud ("read me the banana bread recipe",
    "how do I make pancakes step by step", "김치찌개 레시피 읽어 줘"); "" when it names none."""
    words = utterance_words(text)
    if not words or len(words.split()) > MAX_COMMAND_WORDS:
        return None
    if speaks_korean(words, language):
        return " ".join(_KO_READ_WORDS.sub(" ", words).split()) if _KO_READ.search(words) else None
    if not _EN_READ.search(words) or _EN_TOLD.search(words):
        return None
    return " ".join(_EN_READ_WORDS.sub(" ", words).split())


def local_command(text: str, language: str, tools: Any, reading: bool = False) -> ToolPlan | None:
    """The call a command asks for, if the utterance is one and ``tools`` (names) has its tool."""
    if "volume_set" in tools and (args := volume_command(text, language)) is not None:
        return ToolPlan("", "volume_set", args)
    if "recipe_step" in tools and (move := recipe_move(text, language, reading)) is not None:
        return ToolPlan("", "recipe_step", {"move": move})
    if "recipe_read" in tools and (dish := recipe_to_read(text, language)) is not None:
        return ToolPlan("", "recipe_read", {"query": dish})
    return None
