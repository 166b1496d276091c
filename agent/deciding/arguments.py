"""Tool arguments checked against what the user actually said: repaired before a call, and grounded or not.

A small model picks the right tool far more often than it writes the right arguments: it
turns "ten minutes" into 150, copies "noodles" from an example, swaps the two units.  The
request usually states the value outright, so :func:`repair_arguments` reads it from the
words (:mod:`agent.deciding.extract`, :mod:`agent.deciding.extract_units`, :mod:`agent.deciding.extract_lookup`) and puts
it in; an optional value the words do not support is dropped.  It never puts in a value the
user did not say.

:func:`grounded` is the gate in front of acting tools (a timer started, an item added, a
note written): true only when the act itself is asked for in the user's words (a cancel
needs a cancel word, see :mod:`agent.deciding.intents`) and the call's content is in them too.  A call whose
content came from elsewhere, such as "add 50 eggs" inside a recipe the tool read out, is
asked back instead of made.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable
from typing import Any

from agent.deciding.extract import (
    HANGUL,
    adjusting_lengths,
    adjustment_sign,
    could_be_label,
    is_measure,
    mentions_all,
    note_text,
    shopping_item,
    strip_korean_particle,
    timer_durations,
    timer_label,
    without_the_list,
)
from agent.deciding.extract_lookup import could_be_place, place, recipe_query, when
from agent.deciding.extract_units import conversion
from agent.deciding.corrections import corrected
from agent.deciding.lexicon import lexicon
from agent.deciding.several import timers_in
from agent.deciding.intents import (
    OPPOSITE_ACTS, TIMER_CHANGES, asks_for_act, cued_tools, is_follow_up, is_question, spoken_to_another, tells_of_past, tells_own_plan,
)
from agent.deciding.spoken_numbers import numbers, prepare
from agent.deciding.utterance import found_once
from tools.convert import ConversionError, normalize_unit

log = logging.getLogger(__name__)

READ_ONLY = {"timer_status", "time_now", "date_today", "shopping_list", "convert_units", "recipe_search", "weather", "air_quality",
             "recipe_read", "recipe_step"}
"""Tools that only look things up; everything else is checked by :func:`grounded`."""


@functools.cache
def _pronouns() -> frozenset[str]:
    """Words that point at something instead of naming it, in either language: not an item anyone can buy."""
    return frozenset(lexicon("en").phrases("names_nothing")) | frozenset(lexicon("ko").phrases("names_nothing"))


@functools.cache
def _list_words() -> frozenset[str]:
    """Words that name the shopping list itself or put a thing on it, in either language."""
    return frozenset(lexicon("en").phrases("list_itself")) | frozenset(lexicon("ko").phrases("list_itself"))


_TIMER_REFERENCE = re.compile(r"\btimers?\b|타이머|\b(?:it|that|them|this one|that one|all|every)\b|그거|다\s|멈춘\s*거|멈춰\s*(?:둔|놓은)\s*거")


_CHANGES_TIME = re.compile(
    r"\b(?:more|another|extra|less|shorter|longer|extend|add|take|knock|cut|reduce)\b|더\s|더$|늘려|늘리|연장|줄여|줄이|빼|당겨"
)
"""Words that change the time of a running timer."""
_STARTS_TIMER = re.compile(
    r"\b(?:set|start|begin|new|timer for|countdown|count down|remind|alarm|wake|another (?:one|timer))\b|맞춰|시작|설정|재\s?줘|재\s?주|알람|새\s?타이머"
)
"""Words that ask for a new timer."""


def changes_time_only(text: str) -> bool:
    """Whether the words change a running timer's time and ask for no new timer ("throw another
    three minutes onto the cookie timer", "give it five more minutes"): never a timer started."""
    folded = corrected(text).casefold()
    return _CHANGES_TIME.search(folded) is not None and _STARTS_TIMER.search(folded) is None


def _names_nothing(item: str) -> bool:
    """An item that only points ("it", "that one", "그거") or is the list itself ("it on the list")."""
    words = _words(item)
    return bool(words) and words[0] in _pronouns() and set(words[1:]) <= _list_words()


def _begins_with_a_lost_count(item: str) -> bool:
    """An item that begins with a word the recognizer writes for a misheard count (the class
    ``count_homophone``: "Add two lemons" heard as "Add to the lemons", "four apples" as "for
    apples"): no item begins so, so its words are no item the user said."""
    words = _words(item)
    return len(words) > 1 and lexicon("en").has("count_homophone", words[0])


_PAUSE_AFTER_FIRST = re.compile(r"^\W*[\w']+\s*[,.;:!?—-]")


def _verb_in_item(item: str, user_text: str) -> bool:
    """An item that begins with the word the request begins with, where that word is one the
    recognizer writes for a misheard "add" (the class ``add_homophone``: "Egg flour and butter to my
    list", "Head two litres of milk to the list"): the verb went into the item."""
    words, said = _words(item), _words(user_text)
    if not words or not said or not lexicon("en").has("add_homophone", said[0]) or _stem(words[0]) != _stem(said[0]):
        return False
    # "Eggs on the list", "eggs to the shopping list": the word is the thing, and nothing else was
    # said; "Eggs, we need a dozen": named, then a pause.
    return not set(said[1:]) <= _list_words() and not _PAUSE_AFTER_FIRST.match(user_text)


def _lost_measure(item: str, quantity: Any) -> bool:
    """An item counted without a unit that begins with "<word> of", where the word measures
    nothing one buys (the class ``measure_word``, the units and the containers aside): "two liters
    of milk" heard as "two layers of milk", "three kilos of rice" as "three killers of rice". The word
    is the misheard unit, not part of the thing."""
    words = _words(_ARTICLES.sub("", item.strip().casefold()))
    if quantity is None or len(words) < 3 or words[1] != "of" or len(str(quantity).split()) != 1:
        return False
    return not is_measure(words[0])


def _asks_new_timer(text: str) -> bool:
    """Words that ask for one more timer (the class ``asks_new_timer``), not more time on one."""
    folded = " " + " ".join(_words(text)) + " "
    return any(f" {phrase} " in folded for phrase in lexicon("en").phrases("asks_new_timer"))


def _ends_with_the_list(item: str) -> bool:
    """An item that holds where it goes ("milk to the shopping list") or is only the list ("shopping
    list"): its words are no thing to buy as they stand."""
    folded = " ".join(_words(item))
    if folded and set(folded.split()) <= _list_words():
        return True
    return any(folded.endswith(" " + p) for p in lexicon("en").phrases("list_destination"))


_ARTICLES = re.compile(r"^(?:the|a|an|my|some|our)\s+")


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    # "oat milk's gone": the milk, not a word "milk's"
    return [re.sub(r"'(?:s|re|ll|d|ve)$", "", w) for w in re.findall(r"[\w']+", text)]


@functools.cache
def _plural_endings() -> tuple[str, ...]:
    """The endings :func:`_stem` takes off, longest first (the class ``plural_ending``)."""
    return lexicon("en").phrases("plural_ending")


def _stem(word: str) -> str:
    for suffix in _plural_endings():
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def supported(value: Any, user_text: str) -> bool:
    """Whether the user's words contain ``value`` (plurals and, in Korean, spacing and particles aside)."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return any(abs(found.value - value) < 1e-6 for found in numbers(user_text))
    text = str(value).strip()
    if not text:
        return False
    if HANGUL.search(text) or HANGUL.search(user_text):
        return _korean_supported(text, user_text)
    said = {_stem(w) for w in _words(user_text)}
    wanted = [_stem(w) for w in _words(_ARTICLES.sub("", text.casefold()))]
    return bool(wanted) and all(w in said for w in wanted)


def said_part(value: str, user_text: str) -> str | None:
    """The words of ``value`` that the user said, in its order ("cheddar cheese" of "we need more of
    that cheese" is "cheese"); None when none is, or only a word that points ("it", "그거")."""
    if HANGUL.search(value) or HANGUL.search(user_text):
        kept = [w for w in value.split() if _korean_supported(w, user_text)]
    else:
        said = {_stem(w) for w in _words(user_text)}
        kept = [w for w in _ARTICLES.sub("", value.strip()).split() if _words(w) and all(_stem(x) in said for x in _words(w))]
    part = " ".join(kept).strip(" ,.!?")
    return part if part and not _names_nothing(part) and not set(_words(part)) <= _list_words() else None


def asked_back(tool: str, args: dict[str, Any], user_text: str, earlier: str = "") -> dict[str, Any]:
    """An act's arguments as hearth asks them back (:mod:`agent.deciding.confirm`): a list item
    only in words the user said, in this request or (``earlier``) the turns before; none at all
    when they said none of it, so that it is asked for rather than named. "We're running low on
    butter" was asked "Add milk to the shopping list?" with the model's item."""
    item = args.get("item")
    if tool not in ("shopping_add", "shopping_complete") or not isinstance(item, str):
        return dict(args)
    if _begins_with_a_lost_count(item) or _verb_in_item(item, user_text):
        # Asked without the word the count or the verb became: "Add lemons to the shopping list?"
        item = _ARTICLES.sub("", " ".join(item.split()[1:]))
    item = without_the_list(item)
    part = said_part(item, f"{corrected(user_text)} {earlier}".strip())
    kept = {k: v for k, v in args.items() if k != "item"}
    return kept if part is None else {**kept, "item": part}


def _korean_supported(value: str, user_text: str) -> bool:
    # Whole words, each possibly followed by a particle: 라면 is in "라면을", 타이 is not in "타이머".
    said = [w for w in re.split(r"[\s,.!?]+", prepare(user_text)) if w]
    wanted = [w for w in re.split(r"[\s,.!?]+", prepare(value)) if w]
    if not wanted:
        return False
    for start in range(len(said) - len(wanted) + 1):
        window = said[start : start + len(wanted)]
        if all(s == w or strip_korean_particle(s) == w or (s.startswith(w) and s[len(w):] in _ko_tails())
               for s, w in zip(window, wanted)):
            return True
    return False


@functools.cache
def _ko_tails() -> frozenset[str]:
    """What may follow a Korean word the user said (the class ``word_ending``)."""
    return frozenset(lexicon("ko").phrases("word_ending"))


def _set_or_drop(args: dict[str, Any], key: str, found: Any, user_text: str, keep_unsupported: bool = False) -> None:
    """Put in what the words state; otherwise keep the model's value only if the words support it."""
    if found is not None:
        args[key] = found
    elif key in args and args[key] is not None and not keep_unsupported and not supported(args[key], user_text):
        del args[key]


def _timer_start(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    said = set(timer_durations(text, naming=True))
    if len(said) == 1:
        args["duration_s"] = said.pop()
    _label(args, text)
    return args


def _label(args: dict[str, Any], text: str) -> None:
    label = args.get("label")
    if isinstance(label, str) and not supported(label, text) and (part := said_part(label, text)) is not None:
        args["label"] = part  # the model ran on past what was said ("pasta water boiling"): the pasta is the label
    _set_or_drop(args, "label", timer_label(text), text)
    if isinstance(args.get("label"), str) and not could_be_label(args["label"]):
        del args["label"]


def _timer_named(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    _label(args, text)
    return args


def _timer_cancel(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    args["all"] = mentions_all(text)
    if args["all"]:
        args.pop("label", None)
        return args
    return _timer_named(args, text, copied)


def _timer_adjust(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    said = set(adjusting_lengths(text))
    magnitude = said.pop() if len(said) == 1 else None
    sign = adjustment_sign(text)
    current = args.get("delta_s")
    if magnitude is None and isinstance(current, (int, float)) and not isinstance(current, bool):
        magnitude = abs(int(current))
    if magnitude is not None:
        if sign is None:
            sign = -1 if isinstance(current, (int, float)) and current < 0 else 1
        args["delta_s"] = sign * magnitude
    return _timer_named(args, text, copied)


def _shopping(complete: bool) -> Callable[[dict[str, Any], str, Collection[str]], dict[str, Any]]:
    def fix(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
        found = shopping_item(text, complete=complete)
        if found is not None and _names_nothing(found[0]):
            # "we need more coffee, add it to the list": "it" is the coffee the model named, if it was said.
            found = None if supported(args.get("item"), text) and not _names_nothing(str(args.get("item"))) else found
        if found is not None:
            args["item"] = found[0]
            if not complete:
                _set_or_drop(args, "quantity", found[1], text)
        elif not complete and args.get("quantity") is not None and not _quantity_said(args["quantity"], text):
            del args["quantity"]
        return args

    return fix


def _quantity_said(quantity: Any, text: str) -> bool:
    stated = [found.value for found in numbers(text)]
    amounts = [f.value for f in numbers(str(quantity))]
    if amounts == [1.0] and (unit := str(quantity).split()[1:2]) and re.search(
            rf"\b(?:a|an|one)\s+{re.escape(unit[0])}", text.casefold()):
        return True  # "a bag of rice": one bag, said with its article
    return bool(amounts) and all(any(abs(a - s) < 1e-6 for s in stated) for a in amounts)


def _note(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    found = note_text(text)
    if found is not None:
        args["text"] = found
    return args


def _unit(value: Any) -> Any:
    try:
        return normalize_unit(str(value))
    except ConversionError:
        return value


def _convert(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    for key in ("from_unit", "to_unit"):
        if isinstance(args.get(key), str):
            args[key] = _unit(args[key])
    said = conversion(text)
    if said.value is not None:
        args["value"] = int(said.value) if said.value == int(said.value) else said.value
    for key, value in (("from_unit", said.from_unit), ("to_unit", said.to_unit)):
        if value is not None:
            args[key] = value
    _set_or_drop(args, "ingredient", said.ingredient, text)
    return args


def _recipe(args: dict[str, Any], text: str, copied: Collection[str]) -> dict[str, Any]:
    query = recipe_query(text)
    if query:
        args["query"] = query
    elif args.get("query") and not supported(args["query"], text) and not is_follow_up(text, "en"):
        # Earlier turns inform, never override: a dish from a turn before is not this request's.
        args["query"] = text.strip()
    return args


def _place_and_day(args: dict[str, Any], text: str, copied: Collection[str], *, has_when: bool,
                   known: Collection[str] = ()) -> dict[str, Any]:
    # A follow-up ("and tomorrow?") leaves the place to the conversation, so a place the words do
    # not name is kept, unless it is one of the examples' places, which the model copies.
    for key, found in (("location", place(text, known)), ("when", when(text) if has_when else None)):
        if found is not None:
            args[key] = found
        elif args.get(key) is not None and not supported(args[key], text) and str(args[key]).casefold() in copied:
            del args[key]
    if isinstance(args.get("location"), str) and not could_be_place(args["location"]):
        del args["location"]  # "미세먼지 어때?": the dust is what is asked about, not where
    return args


_FIXERS: dict[str, Callable[[dict[str, Any], str, Collection[str]], dict[str, Any]]] = {
    "timer_start": _timer_start,
    "timer_cancel": _timer_cancel,
    "timer_status": _timer_named,
    "timer_pause": _timer_named,
    "timer_resume": _timer_named,
    "timer_adjust": _timer_adjust,
    "shopping_add": _shopping(complete=False),
    "shopping_complete": _shopping(complete=True),
    "note_add": _note,
    "convert_units": _convert,
    "recipe_search": _recipe,
    "weather": lambda a, t, c: _place_and_day(a, t, c, has_when=True),
    "air_quality": lambda a, t, c: _place_and_day(a, t, c, has_when=False),
}
_PLACE_TOOLS = ("weather", "air_quality")


def repair_arguments(
    tool: str, args: dict[str, Any], user_text: str, *, copied: Collection[str] = (), earlier: str | None = None,
    places: Callable[[], Iterable[str]] | None = None,
) -> dict[str, Any]:
    """The model's arguments with every value the user's words state put in, and unsupported extras dropped.

    ``copied``: values (case-folded) that appear in the examples the model was shown, so a
    place the words do not name is dropped as a copy rather than kept as conversation context.
    ``earlier``: what the user said in the turns before, when known. A place that neither this
    request nor an earlier one named was made up ("Sudan" for a question about the weather
    here): it is dropped, and the weather is the home's.
    ``places``: the names of the places the household's forecast covers (asked only for the
    weather and the air), so that one that begins with "the" is read as a place ("the Hague").
    """
    fix = _FIXERS.get(tool)
    if fix is None:
        return dict(args)
    try:
        # "twenty minutes, no wait, half an hour": the values are read from what the user settled on.
        text = corrected(user_text)
        folded = {str(c).casefold() for c in copied}
        if tool not in _PLACE_TOOLS:
            return fix(dict(args), text, folded)
        known = tuple(places()) if places is not None else ()
        fixed = _place_and_day(dict(args), text, folded, has_when=tool == "weather", known=known)
        location = fixed.get("location")
        if (earlier is not None and location is not None and location != place(text, known)
                and not supported(location, user_text) and not supported(location, earlier)):
            del fixed["location"]
        language = "ko" if HANGUL.search(user_text) else "en"
        if (earlier and fixed.get("location") is None and place(text, known) is None
                and is_follow_up(text, language) and (before := place(earlier, known)) is not None):
            fixed["location"] = before  # "And tomorrow?" after the weather in London: still London
        return fixed
    except Exception:  # a repair bug must not cost the turn: the model's own arguments still stand
        log.exception("argument repair failed for %s %r on %r", tool, args, user_text)
        return dict(args)


def _note_supported(note: str, text: str) -> bool:
    if HANGUL.search(note) or HANGUL.search(text):
        pairs = lambda s: {s[i : i + 2] for i in range(len(s) - 1)}  # noqa: E731
        squeeze = lambda s: re.sub(r"[\s\W_]", "", prepare(s))  # noqa: E731
        wanted = pairs(squeeze(note))
        return bool(wanted) and len(wanted & pairs(squeeze(text))) / len(wanted) >= 0.6
    wanted = [_stem(w) for w in _words(note)]
    said = {_stem(w) for w in _words(text)}
    return bool(wanted) and sum(w in said for w in wanted) / len(wanted) >= 0.75


def act_asked_for(tool: str, user_text: str) -> bool:
    """Whether the user's words ask for this kind of act at all, whatever its values: a request
    (not a question, unless it asks for an act), not the user's own plan, and words of this tool
    or a follow-up that does not ask for the opposite act in words."""
    language = "ko" if HANGUL.search(user_text) else "en"
    if tells_own_plan(user_text, language):
        return False  # "I'll add the salt myself later": asked back, never done
    if spoken_to_another(user_text, language):
        return False  # "Kids, dinner in five minutes!": said to someone else in the room
    if tool != "shopping_complete" and tells_of_past(user_text, language):
        return False  # "Last time I set a timer for the roast it came out dry": a story
    if is_question(user_text, language) and not asks_for_act(user_text, language):
        return False  # "Is the five second rule real?": a question, not a request; "Can you set…?" is one
    cued = cued_tools(user_text, language)
    if tool in cued:
        return True
    return is_follow_up(user_text, language) and OPPOSITE_ACTS.get(tool) not in cued


@found_once(text_at=2)
def grounded(tool: str, args: dict[str, Any], user_text: str) -> bool:
    """Whether an acting call's content is in the user's words (read-only tools always are).

    Timer selectors (which timer to pause or cancel) may come from the conversation; what a
    call creates or changes (a duration, an item and its quantity, a note, "all") must be said.
    """
    if tool in READ_ONLY:
        return True
    if not act_asked_for(tool, user_text):
        return False
    language = "ko" if HANGUL.search(user_text) else "en"
    user_text = corrected(user_text)  # a value the user took back supports nothing
    if tool == "timer_start":
        if changes_time_only(user_text):
            return False  # "타이머 1분만 줄여줘", "give it five more minutes": a change, asked back, never a new timer
        return content_in(tool, args, user_text)
    if tool == "timer_adjust":
        return content_in(tool, args, user_text)
    if tool in TIMER_CHANGES and not (
        _TIMER_REFERENCE.search(user_text.casefold()) or supported(args.get("label"), user_text) or is_follow_up(user_text, language)
    ):
        return False  # "stop talking", "cancel our dinner plans": no timer was spoken of
    if tool == "timer_cancel":
        return not args.get("all") or mentions_all(user_text)
    if tool in ("timer_pause", "timer_resume"):
        return True
    return content_in(tool, args, user_text)


def content_in(tool: str, args: dict[str, Any], text: str) -> bool:
    """Whether what an acting call would create or change is in ``text``: its duration, item and
    quantity, note, "all"; the act itself need not be asked for there. True for a call that
    carries no value at all (nothing of it can be looked for).

    :func:`grounded` asks it of the user's words; :mod:`agent.deciding.origins` of what tools said.
    """
    if tool == "timer_start":
        label = args.get("label")
        # "pasta gets twelve minutes and the garlic bread six": the unit said once holds for each timer
        lengths = [*timer_durations(text, naming=True), *(t["duration_s"] for t in timers_in(text))]
        if label is not None and _words(str(label))[:1] and lexicon("en").has("start_word", _words(str(label))[0]):
            return False  # "You started pasta timer": the request went into the name
        return args.get("duration_s") in lengths and (label is None or supported(label, text))
    if tool == "timer_adjust":
        delta = args.get("delta_s")
        if _asks_new_timer(text):
            return False  # "and another one of the broccoli, eight minutes": a timer more, not more time
        return isinstance(delta, int) and abs(delta) in adjusting_lengths(text)
    if tool == "timer_cancel" and args.get("all"):
        return mentions_all(text)
    if tool in ("shopping_add", "shopping_complete"):
        quantity = args.get("quantity")
        item = args.get("item")
        if _names_nothing(str(item or "")):
            return False  # "put it on the list": what "it" is was never said
        if _begins_with_a_lost_count(str(item or "")):
            return False  # asked back: "two" or "four" may have been said
        if _verb_in_item(str(item or ""), text) or _ends_with_the_list(str(item or "")):
            return False  # asked back: the item holds the misheard verb, or where it goes
        if _lost_measure(str(item or ""), quantity):
            return False  # asked back: "two layers of milk" holds a misheard unit
        return supported(item, text) and (quantity is None or _quantity_said(quantity, text))
    if tool == "note_add":
        return _note_supported(str(args.get("text") or ""), text)
    return all(supported(value, text) for value in args.values() if value is not None and not isinstance(value, bool))
