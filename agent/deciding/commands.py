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

import functools
import re
from typing import Any

from agent.deciding.corrections import tells_a_reason, without_reason
from agent.deciding.extract import note_text
from agent.deciding.extract_lookup import place, when
from agent.deciding.intents import asks_time_left, cued_tools, is_question, speaks_korean, utterance_words
from agent.deciding.lexicon import lexicon
from agent.deciding.spoken_numbers import EN_ONES, KO_NATIVE_ONES, durations, korean_number, prepare
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
_EN_BIT_BY_BIT = r"step by step|bit by bit|(?:one|a) (?:step|bit|little bit|part) at a time"
"""Words that ask for a recipe in parts, one after another ("a bit at a time", "step by step")."""
_EN_READ = re.compile(
    r"\b(?:read|walk me through|take me through|go through|talk me through)\b.*\brecipe\b"
    r"|^(?:\w+\s+){0,3}(?:walk|talk|take) (?:me|us) through (?:the |a |how to make )?\w"
    rf"|\brecipe\b.*\b(?:{_EN_BIT_BY_BIT})\b|\b(?:{_EN_BIT_BY_BIT})\b"
    r"|\bread (?:me )?(?:the )?(?:recipe|instructions|method|steps)\b"
    # "Pull up the shakshuka and read it to me", "open the pancake recipe and talk me through it"
    r"|^(?:\w+\s+){0,2}(?:pull up|bring up|open|find|get|look up|call up)\b.*\b(?:and|then)\s+(?:read|walk|talk|take)\s+(?:it|me|us)\b"
)
_EN_READ_ONE = re.compile(r"^(?:\w+\s+){0,3}?read\s+(?:out\s+|me\s+|us\s+)?(?:the\s+)?(?P<dish>(?!the\b|a\b|this\b|that\b|first\b|second\b|third\b|last\b|next\b|other\b)\w+(?:\s+\w+){0,2}?)\s+one(?:\s+please)?$")
_KO_READ_ONE = re.compile(r"^(?:\S+\s+){0,2}?(?P<dish>[가-힣]{2,})\s+거\s*(?:좀\s*)?읽어")
_EN_TOLD = re.compile(r"\b(?:i|we)(?: have| 've|'ve| just| already)? (?:read|went through|walked through)\b")
"""The user saying what they did ("I read the recipe already"), not asking."""
_EN_READ_WORDS = re.compile(
    r"\b(?:can you|could you|would you|please|read|me|walk|take|talk|go|through|the|recipe|recipes|for|step by step|"
    rf"{_EN_BIT_BY_BIT}|tell|how|to|make|do i|i|out|loud|aloud|instructions|method|steps|of|a|an|let's|lets|cook|"
    r"pull up|bring up|open|find|get|look up|call up|and|then|it|us)\b"
)
_KO_READ = re.compile(r"(?:레시피|(?:만드|끓이|하)는 ?(?:법|방법|거)|요리법|조리법).*(?:읽어|단계별|차근차근|하나씩)|(?:단계별로|차근차근|하나씩).*(?:알려|읽어|말해)")
_KO_READ_WORDS = re.compile(r"레시피|(?:만드|끓이|하)는 ?(?:법|방법|거)|요리법|조리법|처음부터|읽어 ?줘요|읽어 ?줘|읽어 ?주세요|읽어 ?줄래요?|읽어|단계별로|차근차근|하나씩|알려 ?줘|알려 ?줄래요?|말해 ?줘|좀|줄래요?")


# The moves through a recipe, in the order one wins over another when words hold two ("go back
# to the start" is the start); each is a lexicon class, with words that count only while a recipe
# is being read ("again", "go on", "다시": other times they mean other things).
_MOVE_CLASSES: tuple[tuple[str, str, str | None], ...] = (
    ("first", "move_first", None),
    ("back", "move_back", None),
    ("ingredients", "move_ingredients", "move_ingredients_reading"),  # "what were the ingredients again?"
    ("repeat", "", "move_repeat_reading"),
    ("next", "move_next", "move_next_reading"),
)
MAX_MOVE_WORDS = 8


def _runs(forms: list[list[str]], phrase: str, korean: bool) -> list[range]:
    """Where the words of ``phrase`` stand in a row; a Korean word of two syllables or more also
    stands at the start of one with an ending (넘어가 in 넘어가자)."""
    wanted = phrase.split()

    def stands(at: int, word: str) -> bool:
        return any(f == word or (korean and len(word) >= 2 and f.startswith(word)) for f in forms[at])

    return [range(i, i + len(wanted)) for i in range(len(forms) - len(wanted) + 1)
            if all(stands(i + j, w) for j, w in enumerate(wanted))]


def _forms(token: str, korean: bool) -> list[str]:
    """The forms a token may be matched by: a Korean one's too (:func:`_korean_forms`)."""
    return _korean_forms(token) if korean else [token]


def _korean_forms(token: str) -> list[str]:
    """The token, and the token without each ending it may carry (the class ``move_ending``)."""
    return [token, *(token[: -len(e)] for e in lexicon("ko").phrases("move_ending") if token.endswith(e) and len(token) > len(e))]


def volume_command(text: str, language: str) -> dict[str, Any] | None:
    """The volume_set arguments the utterance asks for, or None. A long utterance is read by its
    first clause, the reason said after it aside ("Turn yourself up a bit, the tap's running and I
    can barely make you out")."""
    words = utterance_words(text)
    if words and len(words.split()) > MAX_COMMAND_WORDS:
        first = re.split(r"[,.;!?]", text, maxsplit=1)[0]
        return volume_command(first, language) if first.strip() and first.strip() != text.strip() else None
    if not words:
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
    """The move through the recipe ("next", "back", "repeat", "first", "ingredients") the
    utterance asks for, or None.  ``reading``: the turn before read a recipe.

    The words must be a move and nothing else: a move's words, and words any move may hold
    ("wait, what was the step before?", "방금 거 다시 말해 줘"); one other word ("next week is my
    birthday", "cancel the next timer") makes them something else.  While a recipe is being read,
    the move may also be one clause among remarks that ask for nothing else ("sorry, the mixer was
    on, say that again"), and a word for the ingredients asks for them however it is put ("which
    ingredients does it call for?"), when the words ask for no other tool."""
    words = utterance_words(text)
    if not words:
        return None
    korean = speaks_korean(words, language)
    if len(words.split()) <= MAX_MOVE_WORDS and (move := _move_alone(words, korean, reading)) is not None:
        return move
    if not reading or len(words.split()) > MAX_READING_MOVE_WORDS:
        return None
    found, covered = _moves_in(words, korean, reading)
    # The other words are read for another tool, but not the words any move may hold: "wait" and
    # "잠깐" also pause a timer, and said before a move they do not.
    fillers = _move_fillers(korean)
    rest = " ".join(w for i, w in enumerate(words.split()) if i not in covered and not any(f in fillers for f in _forms(w, korean)))
    if not korean and not durations(text):
        # "Remind me what goes into it": told again, no reminder; "remind me in five minutes" is one
        rest = re.sub(rf"\b(?:{lexicon('en').alternation('move_tell_again')}|remind)\b", " ", rest)
    clauses = [utterance_words(c) for c in re.split(r"[,.;!?]+", text)]
    moves = [m for c in clauses if c and (m := _move_alone(c, korean, reading)) is not None]
    lead = re.compile(rf"(?:(?:{lexicon('ko' if korean else 'en').alternation('lead')})(?:\s+|$))+")
    if moves and not korean and all(_move_alone(c, korean, reading) is not None or lead.fullmatch(c) or _EN_CHECKING.match(c)
                                    or (tells_a_reason(c) and not is_question(c, language)) for c in clauses if c):
        # "Wait, back one, I missed how long to beat it for": what was missed tells why, it asks no timer
        return next(move for move, *_ in _MOVE_CLASSES if move in moves)
    if not found or _asks_another_tool(rest, language):
        return None
    if "ingredients" in found:
        return "ingredients"
    return next((move for move, *_ in _MOVE_CLASSES if move in moves), None)


_EN_CHECKING = re.compile(r"^(?:\w+\s+)?(?:did|does|didn't|doesn't|was|wasn't|is|isn't) (?:it|that|the recipe|the step) (?:say|said|call for|want|mean)\b")
"""A clause that checks what was read ("did it say melted butter?"), said with a move back: the
step heard again answers it."""

MAX_READING_MOVE_WORDS = 14
"""The most words a move among remarks may come in, while a recipe is being read."""


def _asks_another_tool(text: str, language: str) -> bool:
    """Whether the words ask for a tool besides moving through a recipe ("set a timer for the next
    step"), or how long a timer has left ("is it ready yet?")."""
    return bool(cued_tools(text, language) - {"recipe_step", "recipe_read", "recipe_search"}) or asks_time_left(text, language)


def _moves_in(words: str, korean: bool, reading: bool) -> tuple[list[str], set[int]]:
    """The moves whose words ``words`` (normalized) hold, and where those words stand."""
    words_of = lexicon("ko" if korean else "en")
    forms = [_forms(t, korean) for t in words.split()]
    covered: set[int] = set()
    found: list[str] = []
    for move, always, while_reading in _MOVE_CLASSES:
        for name in (c for c in (always, while_reading if reading else None) if c):
            for phrase in words_of.phrases(name):
                for run in _runs(forms, phrase, korean):
                    covered.update(run)
                    if move not in found:
                        found.append(move)
    return found, covered


def _move_fillers(korean: bool) -> set[str]:
    """Words any move may hold besides its own: the class ``move_filler``, and in English the words
    said before and after a request (the classes ``lead`` and ``tail``)."""
    words_of = lexicon("ko" if korean else "en")
    return set(words_of.phrases("move_filler")) | (set() if korean else set(words_of.phrases("lead")) | set(words_of.phrases("tail")))


def _move_alone(words: str, korean: bool, reading: bool) -> str | None:
    """The move ``words`` (normalized) are, when they are a move's words and words any move may hold
    and nothing else."""
    found, covered = _moves_in(words, korean, reading)
    if not found:
        return None
    others = _move_fillers(korean)
    tokens = words.split()
    if any(i not in covered and not any(f in others for f in _forms(t, korean)) for i, t in enumerate(tokens)):
        return None
    return next(move for move, *_ in _MOVE_CLASSES if move in found)


def recipe_to_read(text: str, language: str) -> str | None:
    """The dish, when the utterance asks for a recipe read aloud ("read me the banana bread recipe",
    "how do I make pancakes step by step", "김치찌개 레시피 읽어 줘"); "" when it names none."""
    words = utterance_words(text)
    if not words:
        return None
    if speaks_korean(words, language):
        if len(words.split()) > MAX_COMMAND_WORDS:
            return None
        if (one := _KO_READ_ONE.search(words)) is not None and one["dish"] not in lexicon("ko").phrases("not_a_dish"):
            return one["dish"]  # "된장국 거 읽어 줄래?": the one of that name, among those found
        return " ".join(_KO_READ_WORDS.sub(" ", words).split()) if _KO_READ.search(words) else None
    if _EN_TOLD.search(words):
        return None
    # The dish is named in the clause that asks ("Read out the omelette recipe, I've never made
    # one"), else anywhere in the words ("Read me how to make the minestrone, step by step").
    asking = [c for c in (utterance_words(c) for c in re.split(r"[,.;!?]+", text)) if _EN_READ.search(c)]
    found = None
    for said in (*asking[:1], words):
        dish = _english_dish(said)
        if dish:
            return dish
        found = dish if dish is not None else found
    return found


def _english_dish(words: str) -> str | None:
    """The dish English words ask to be read ("" when they name none), or None when they ask no reading."""
    if len(words.split()) > MAX_COMMAND_WORDS:
        return None
    if (one := _EN_READ_ONE.search(words)) is not None and one["dish"] not in lexicon("en").phrases("not_a_dish"):
        return one["dish"]  # "read out the lentil soup one"
    if not _EN_READ.search(words):
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
    if "shopping_list" in tools and asks_to_read_the_list(text, language):
        return ToolPlan("", "shopping_list", {})
    if "note_add" in tools and (note := note_opened(text, language)) is not None:
        return ToolPlan("", "note_add", {"text": note})
    return None


_EN_NOTE_OPENING = re.compile(
    r"^(?:(?:ok|okay|right|so|oh|hey|and)[,\s]+)*(?:(?:a\s+)?(?:note|memo|reminder)\s+(?:to|for)\s+(?:self|myself)"
    r"|(?:make|take|leave)\s+a\s+note|note\s+(?:that|down)|(?:write|jot)\s+(?:this\s+|that\s+)?down)\b", re.IGNORECASE)
"""How a note is asked for when the words open with it: "Note to self…", "Make a note…", "Jot down…"."""


def note_opened(text: str, language: str) -> str | None:
    """What to write down, when English words open by asking for a note ("Note to self. Our oven
    runs hot.", "Make a note: the blender lid cracked"): what follows is the note, whatever it
    speaks of (a temperature, a timer, a thing to buy), so it is no other request."""
    if speaks_korean(text, language) or _EN_NOTE_OPENING.match(text.strip()) is None:
        return None
    return note_text(text)


MAX_LIST_READING_WORDS = 10


def asks_to_read_the_list(text: str, language: str) -> bool:
    """Whether the words ask only for the shopping list read out ("목록에 뭐 적혀 있는지 쭉 불러 줘",
    "Read me the shopping list", "Read out the list for me"): the list named, a word of reading or
    asking what, and no thing to put on it or take off (those are the list's acts)."""
    korean = speaks_korean(text, language)
    words = utterance_words(without_reason(text, korean))  # "What's there on the list, I forget"
    if not words or len(words.split()) > MAX_LIST_READING_WORDS:
        return False
    lex = lexicon("ko" if korean else "en")
    said = (lambda name: any(p in words for p in lex.phrases(name))) if korean else (
        lambda name: re.search(rf"\b(?:{lex.alternation(name)})\b", words) is not None)
    if not said("list_reading_noun") or not said("list_reading_verb"):
        return False
    rest = _list_reading_words("ko" if korean else "en").sub(" ", words)
    return not rest.split()  # "우유 목록에 넣어 줘", "is milk on the list?": a thing named, no reading


@functools.cache
def _list_reading_words(language: str) -> re.Pattern[str]:
    """The words a request to read the list is made of (the classes ``list_reading_*`` and
    ``lead``), the longest first, made once per language rather than on every turn."""
    lex = lexicon(language)
    around = {p for name in lex.classes if name.startswith("list_reading_") or name == "lead" for p in lex.phrases(name)}
    said = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(around, key=len, reverse=True))
    return re.compile(rf"(?:{said})" if language == "ko" else rf"\b(?:{said})\b")


MAX_LOOKUP_AGAIN_WORDS = 7


def lookup_again(text: str, language: str, last_tool: str | None) -> ToolPlan | None:
    """The weather or the air looked up again for another day or place, when the words are only
    that, right after that look-up ("모레는?", "And Friday?", "What about over the weekend there?",
    "부산은?"); None otherwise. The place of the turn before is the caller's to carry over."""
    if last_tool not in ("weather", "air_quality"):
        return None
    words = utterance_words(text)
    if not words or len(words.split()) > MAX_LOOKUP_AGAIN_WORDS:
        return None
    korean = speaks_korean(words, language)
    day = when(text) if last_tool == "weather" else None
    where = place(text)
    if day is None and where is None:
        return None
    rest = f" {prepare(words).casefold()} "
    for said in (day, where):
        if said:
            rest = rest.replace(said.casefold(), " ")
    lex = lexicon("ko" if korean else "en")
    fillers = sorted(lex.phrases("lookup_again_filler"), key=len, reverse=True)
    for filler in fillers:
        rest = re.sub(rf"(?<![\w가-힣]){re.escape(filler)}(?![\w가-힣])" if not korean else re.escape(filler), " ", rest)
    if rest.split():
        return None
    return ToolPlan("", last_tool, {**({"when": day} if day else {}), **({"location": where} if where else {})})

