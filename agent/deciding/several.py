"""One act on several things: "add eggs, milk and butter to the list", "대파랑 양파랑 마늘 사야 돼".

A list of things after one verb is one request, made once per thing, in the order said. It is
read from the words here, without the reasoner: the reasoner is for requests that join different
acts ("set a timer and add milk"), and costs seconds a call on a small board. Only the list's
tools take several things; a timer's length is one value, and "ten minutes for the rice and four
for the eggs" is two acts, the reasoner's.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agent.deciding.corrections import corrected
from agent.deciding.extract import (
    HANGUL, could_be_label, item_phrase, note_text, read_item, strip_korean_particle, timer_durations, timer_label,
    with_amounts_after, without_the_list,
)
from agent.deciding.spoken_numbers import Found, durations, numbers, prepare
from agent.deciding.intents import is_question, speaks_korean, utterance_words
from agent.deciding.lexicon import lexicon
from agent.deciding.tool_calls import ToolPlan
from agent.deciding.undo import Act

LIST_TOOLS = ("shopping_add", "shopping_complete")
MAX_THINGS = 8
"""More things than this in one breath is more likely a misreading than a list."""

# "eggs, milk and butter", "eggs, milk, and butter", "eggs & milk".
_EN_SPLIT = re.compile(r"\s*,\s*(?:(?:and|plus)\s*,?\s+)?|\s+(?:and|plus|&)\s*,?\s+")
# A noun's joining particle at the word's end (양파랑 마늘, 버터하고 치즈), or a comma. 와/과 are
# left alone: too many names end in those syllables (사과, 오과자).
_KO_SPLIT = re.compile(r"(?<=[가-힣])(?:이랑|랑|하고)\s+|\s*,\s*")
# "Stick flour on the list, and sugar too": a thing added after the list was named.
_EN_AFTER_LIST = re.compile(r"\blist\s*,?\s+(?:and|plus)\s+(?P<x>.+?)(?:\s+(?:too|as well|also))?\s*[.!?]*$")


def _one_thing(phrase: str) -> bool:
    """Whether ``phrase`` is one thing although it holds "and" ("mac and cheese")."""
    folded = " ".join(phrase.casefold().split())
    return any(name in folded for name in lexicon("en").phrases("one_thing_with_and"))


def _opens_with_act(part: str) -> bool:
    first = part.casefold().split()
    return bool(first) and any(" ".join(first[: len(verb.split())]) == verb for verb in lexicon("en").phrases("command_open"))


_KO_TALLY = re.compile(r"^(?:이렇게|요렇게|총|전부|모두|다\s*해서)\s*\S+\s*(?:개|가지)?(?:\s*(?:만|다|요))?$")
"""How many things were just named, said after them ("대파랑 두부, 콩나물, 이렇게 세 개"): no thing itself."""


def _parts(phrase: str, korean: bool) -> list[str]:
    if korean:
        return [p for p in (w.strip() for w in _KO_SPLIT.split(phrase)) if p and not _KO_TALLY.match(p)]
    if _one_thing(phrase):
        return [phrase]
    # "cumin, coriander and, uh, smoked paprika": a hesitation is no thing, and leaves no part behind
    hesitations = lexicon("en").alternation("hesitation")
    phrase = re.sub(rf"(?:,\s*)?\b{hesitations}\b\s*(?=,|$|\s)", "", phrase)
    return with_amounts_after([p.strip(" ,.!?") for p in _EN_SPLIT.split(phrase) if p.strip(" ,.!?")])


def things_in(text: str, tool: str) -> list[tuple[str, str | None]]:
    """The things (and their quantities) one list request names, in the order said: one entry
    for one thing, none when the words name no thing for the list."""
    complete = tool == "shopping_complete"
    text = corrected(text)  # "add butter, no, margarine": the margarine alone
    phrase = item_phrase(text, complete=complete)
    if phrase is None:
        joined = _joined_on(text, "ko" if HANGUL.search(text) else "en")
        return [] if joined is None else _read_all(_parts(joined[0], joined[1]), joined[1], complete)
    korean = bool(HANGUL.search(text))
    parts = _parts(phrase, korean)
    if not korean and (later := _EN_AFTER_LIST.search(text.casefold())) is not None:
        parts += _parts(later["x"], korean)
    whole = read_item(phrase, korean, complete)
    if len(parts) == 1 and parts[0] != phrase and (one := read_item(parts[0], korean, complete)) is not None:
        whole = one  # "frozen peas, like one bag": one thing, its amount said after it
        return [whole] if whole is not None else []
    if not korean and any(_opens_with_act(part) for part in parts[1:]):
        return [whole] if whole is not None else []  # "add milk and note that…": a second act, not a thing
    things = _read_all(parts, korean, complete)
    if not things:
        return [whole] if whole is not None else []  # "milk and it": not a list of things
    return things


# Where one timer's words end and the next one's begin: "… for the rice and four minutes for the
# eggs", "찜닭 타이머 삼십오 분이랑 밥 타이머 이십 분".
_EN_NEXT_TIMER = re.compile(r",?\s+(?:and|plus|then)\s+|,\s+")
_KO_NEXT_TIMER = re.compile(r"(?<=[분초간])(?:이랑|랑|하고|과|와)?\s*,?\s+|(?<=[가-힣])(?:이랑|랑|하고)\s+|,\s*")


def timers_in(text: str) -> list[dict[str, object]]:
    """The timers one request starts, each with its length and, when said, its name: two or more
    when the words give each its own length ("ten minutes for the rice and four for the eggs");
    [] otherwise (one timer, or lengths that are one: "an hour and twenty minutes")."""
    text = corrected(text)  # "five minutes, no wait, ten minutes" is one timer
    said = durations(text)
    if not said:
        return []
    korean = bool(HANGUL.search(text))
    clauses = _clauses(text, said, _KO_NEXT_TIMER if korean else _EN_NEXT_TIMER)
    timers: list[dict[str, object]] = []
    pending: list[str] = []
    unit: float | None = None
    for clause in clauses:
        pending.append(clause)
        words = " ".join(pending)
        found = durations(words)
        if len(found) > 1:
            return []
        if found:
            seconds = found[0].value
            unit = _unit_of(words[found[0].start:found[0].end], korean)
            label = _timer_name(words, korean)
        elif unit is not None and len(counts := _counts(words)) == 1 and (label := _timer_name(words, korean)) is not None:
            seconds = counts[0].value * unit  # "rice eighteen minutes, fish twelve": the unit said once
        else:
            continue
        timer: dict[str, object] = {"duration_s": int(round(seconds))}
        if label is not None:
            timer["label"] = label
        timers.append(timer)
        pending = []
    if pending and timers and (label := timer_label(" ".join(pending))) is not None and "label" not in timers[-1]:
        timers[-1]["label"] = label  # "Timers for eight minutes, the pasta": a name said after its length
    return timers if len(timers) >= 2 else []


def _clauses(text: str, said: list[Found], joiner: re.Pattern[str]) -> list[str]:
    """``text`` cut where one timer's words end, but never inside a length ("an hour and a half")."""
    prepared = prepare(text)
    source = text if len(text) == len(prepared) else prepared
    cuts, at = [], 0
    for join in joiner.finditer(prepared):
        if any(length.start < join.end() and join.start() < length.end for length in said):
            continue
        cuts.append(source[at:join.start()])
        at = join.end()
    cuts.append(source[at:])
    return [c for c in cuts if c.strip()]


_UNIT_SECONDS = {"시간": 3600, "분": 60, "초": 1, "hour": 3600, "minute": 60, "min": 60, "second": 1, "sec": 1}


def _unit_of(length: str, korean: bool) -> float | None:
    """Seconds in the last unit a length was said in ("eighteen minutes" → 60), for the lengths
    after it said without one."""
    units = re.findall(r"(시간|분|초)" if korean else r"\b(hour|minute|min|second|sec)s?\b", length)
    return _UNIT_SECONDS[units[-1]] if units else None


def _counts(words: str) -> list[Found]:
    """The numbers said, but "one" ("another one for the carrots") and "a": they name no length."""
    prepared = prepare(words)
    counts = {*lexicon("en").phrases("no_length_count"), *lexicon("ko").phrases("no_length_count")}
    return [n for n in numbers(words) if prepared[n.start:n.end].strip() not in counts]


def _timer_name(words: str, korean: bool) -> str | None:
    if korean:
        return timer_label(words) or _korean_word_before(words)
    lengths = durations(words)
    return timer_label(words) or _english_word_before(words, lengths[0].start if lengths else None)


def _english_word_before(words: str, at: int | None) -> str | None:
    """"rice eighteen minutes", "and the sauce five": a name said right before its length (at
    ``at``, else its one count), in a list of timers (one or two words, no command)."""
    if at is None:
        counts = _counts(words)
        if not counts:
            return None
        at = counts[0].start
    before = re.findall(r"[a-z']+", prepare(words)[:at])
    if before and lexicon("en").has("label_to_length", before[-1]):
        before = before[:-1]  # "and the beets for forty": the name before the word joining it to its length
    named: list[str] = []
    for word in reversed(before[-2:]):
        if not could_be_label(word) or lexicon("en").has("timer_list_joiner", word):
            break
        named.insert(0, word)
    return " ".join(named) or None


def _korean_word_before(words: str) -> str | None:
    """"국수 삼 분", "…맞춰 줘, 밥 십팔 분": a name said right before its length, in a list of timers."""
    lengths = durations(words)
    before = prepare(words)[: lengths[0].start].replace(",", " ").split() if lengths else words.split()[:1]
    word = strip_korean_particle(before[-1]) if before else ""
    if not word or not could_be_label(word) or durations(word):
        return None
    return word


def each_thing(plan: ToolPlan, text: str) -> list[ToolPlan]:
    """The decision made once per thing the words list ("eggs, milk and butter", "ten minutes for
    the rice and four for the eggs"); the decision alone when they name one thing."""
    if plan.tool == "timer_start" and len(timers := timers_in(text)) >= 2:
        return [replace(plan, args=dict(timer)) for timer in timers]
    if plan.tool not in LIST_TOOLS:
        return [plan]
    things = things_in(text, plan.tool)
    if len(things) < 2:
        return [plan]
    return [replace(plan, args=_list_args(plan.tool, item, quantity)) for item, quantity in things]


def _list_args(tool: str, item: str, quantity: str | None) -> dict[str, str]:
    """A list call's arguments for one thing: its quantity goes with an addition only."""
    return {"item": item, **({"quantity": quantity} if quantity is not None and tool == "shopping_add" else {})}


def one_act_on_things(text: str, cued: set[str] | frozenset[str]) -> bool:
    """Whether the words ask for one list act on several things, and no other act: "add eggs
    and milk" cues adding time too ("add five minutes"), but holds no time, so it is one act."""
    if len(timers_in(text)) >= 2:
        # "ten minutes for the rice and four for the eggs" (a name may cue the list: "for the potatoes")
        return "timer_start" in cued and item_phrase(text) is None and note_text(text) is None
    tools = [tool for tool in LIST_TOOLS if tool in cued]
    if len(tools) != 1 or len(things_in(text, tools[0])) < 2:
        return False
    others = set(cued) - set(LIST_TOOLS)
    if any(tool.startswith("timer_") for tool in others) and timer_durations(text, naming=True):
        return False
    return not ("note_add" in others and note_text(text) is not None)


# "And parmesan.", "Oh, and a jar of pesto.", "Bread too.": a thing, joined on to the request before.
_AT_IT = r"while\s+you(?:'re|\s+are)\s+at\s+it"
_EN_FOR_WHAT = r"(?:to go with|to have with|for|with)\s+(?:it|that|them|those|this|(?:the|my|our)\s+[\w']+)"
"""What a thing joined on is for, said after it ("and some crackers to go with it", "and buns for the burgers")."""
_EN_MORE = re.compile(
    rf"^(?:(?:oh|ok|okay|um|uh|and|also|plus|then)\s+)*(?:and|also|plus)\s+(?P<x>.+?)(?:\s+{_EN_FOR_WHAT})?(?:\s+(?:too|as well|also))?"
    rf"(?:\s+(?:{_AT_IT}|please))?$"
    rf"|^(?:(?:oh|ok|okay|um|uh)\s+)*(?P<y>.+?)\s+(?:too|as well)(?:\s+(?:{_AT_IT}|please))?$"
)
# "아 그리고 식용유도.", "참기름도.", "식용유도 추가해 줘"
_KO_MORE = re.compile(
    r"^(?:(?:아|어|음|그럼)\s+)*(?:그리고\s+)?(?P<x>[가-힣]+(?:\s+[가-힣]+)?)도(?:\s+(?:추가|넣어|사야|빼|지워|체크)\S*(?:\s+\S+)?)?$"
    r"|^(?:(?:아|어|음)\s+)*그리고\s+(?P<y>[가-힣]+(?:\s+[가-힣]+)?)$"
)
MAX_MORE_WORDS = 7
"""A thing joined on is a few words; a longer sentence is a request of its own (a closing "please",
or the same said at more length, is not counted)."""


def _joined_on(text: str, language: str) -> tuple[str, bool] | None:
    """(the words naming what is joined on, whether Korean) when the words only join a thing on
    ("And parmesan.", "참기름도."), else None."""
    words = utterance_words(text)
    if not words:
        return None
    korean = speaks_korean(words, language)
    match = (_KO_MORE if korean else _EN_MORE).match(words)
    if match is None:
        return None
    phrase = match["x"] if match["x"] is not None else match["y"]
    if len(words[: match.end("x" if match["x"] is not None else "y")].split()) > MAX_MORE_WORDS:
        return None
    if not korean and (_opens_with_act(phrase) or is_question(text, language)
                       or set(phrase.split()) & set(lexicon("en").phrases("not_a_thing"))):
        return None  # "and set a timer", "and what's on it?", "and we should go": no thing joined on
    return phrase, korean


def continued(act: Act | None, text: str, language: str) -> ToolPlan | None:
    """The list act just made, made again on the thing these words join on ("And parmesan."
    after adding pasta; "And the bread." after ticking the eggs off); the timer just paused let
    go on ("Okay, carry on.", "됐어, 계속해 줘."); the list read back right after it changed
    ("Read the whole thing back to me"); or None."""
    if act is not None and act.tool == "timer_pause":
        return _resumed(act, text, language)
    if act is None or act.tool not in LIST_TOOLS:
        return None
    korean = speaks_korean(text, language)
    if (_KO_READ_IT_BACK if korean else _READ_IT_BACK).search(utterance_words(text)):
        return ToolPlan("", "shopping_list", {})  # "Okay, read the whole thing back to me", "지금까지 뭐뭐 적혔어?"
    joined = _joined_on(text, language)
    if joined is None:
        return None
    phrase, korean = joined
    if not korean:
        phrase = without_the_list(phrase)  # "And milk to the shopping list.": the milk
    # "And soy sauce and sesame oil.": the first thing here, each of them when the plan is made per thing
    things = _read_all(_parts(phrase, korean), korean, act.tool == "shopping_complete")
    return None if not things else ToolPlan("", act.tool, _list_args(act.tool, *things[0]))


_READ_IT_BACK = re.compile(
    r"\b(?:read|say|run through|go through|give)\s+(?:me\s+|us\s+)?(?:it|that|them|everything|all of it|the lot|the whole thing|the whole lot|what we have|what's on it)"
    r"(?:\s+(?:back|out|over|again))+\b")
_KO_READ_IT_BACK = re.compile(r"(?:뭐뭐|뭐|뭘|어떤\s*거|무슨\s*거)\s*(?:적혀|적혔|있어|있지|있는지|있나|들어갔|들어가\s*있|넣었|담겼)")
"""Right after something went on the list or came off it, what is asked to be read back is the list."""


def _read_all(parts: list[str], korean: bool, complete: bool) -> list[tuple[str, str | None]]:
    """Each part read as a thing; none when any part names no thing, or there are too many."""
    if len(parts) > MAX_THINGS:
        return []
    things = [read_item(part, korean, complete) for part in parts]
    return [] if any(thing is None for thing in things) else [thing for thing in things if thing is not None]


def _resumed(paused: Act, text: str, language: str) -> ToolPlan | None:
    """The paused timer let go on, when the words are only a word to go on ("carry on", "keep going",
    "계속해"): right after a pause, what goes on is that timer."""
    korean = speaks_korean(text, language)
    lex = lexicon("ko" if korean else "en")
    label = paused.args.get("label") or paused.data.get("label")  # "pause that" paused the chili timer
    # "Okay, only the postman. Carry on with the chili timer.": what went before is told, the last
    # sentence asks; the paused timer's own name may be said in it
    named = set(utterance_words(label).split()) if isinstance(label, str) else set()
    fillers = set(lex.phrases("go_on_filler")) | named
    for sentence in reversed([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if utterance_words(s)]):
        words = utterance_words(sentence)
        rest = words
        for phrase in lex.phrases("go_on_after_pause"):
            rest = re.sub(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", " ", rest) if not korean else rest.replace(phrase, " ")
        if rest == words:
            continue
        if any(word not in fillers for word in rest.split()):
            return None  # "carry on with the recipe": something else goes on
        return ToolPlan("", "timer_resume", {"label": label} if label else {})
    return None
