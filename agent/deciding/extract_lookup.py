"""What a look-up is about, read from the request: the dish to find, the place and the day for the weather."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable

from agent.deciding.extract import HANGUL, original, strip_korean_particle
from agent.deciding.lexicon import lexicon
from agent.deciding.spoken_numbers import EN_ONES, prepare
from tools.forecast import place_key

log = logging.getLogger(__name__)

# -- recipes ---------------------------------------------------------------------------------------

_EN_DISH_END = (r"(?=\s*(?:[,.!?]|$|\s(?:please|tonight|today|tomorrow|for\s+(?:dinner|lunch|breakfast|tonight|me|us)|that|which|"
                r"would you|will you|could you)\b))")
_EN_NOT_A_DISH = r"(?!(?:me|us|you|him|her|them|tonight|today|dinner|lunch|breakfast)\b)"
"""Words after "a recipe for" that name who or when, not the dish ("a guacamole recipe for me")."""
_EN_RECIPE = (
    rf"\brecipes?\s+(?:for|with|using|of|to make)\s+(?:a\s+|an\s+|some\s+|the\s+)?{_EN_NOT_A_DISH}(?P<x>[a-z][a-z' &]*?){_EN_DISH_END}",
    rf"\b(?:how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)|how\s+to)\s+(?:make|cook|bake|prepare|do)\s+"
    rf"(?:a\s+|an\s+|some\s+|the\s+)?(?P<x>[a-z][a-z' &]*?){_EN_DISH_END}",
    rf"\b(?:want|like|going)\s+to\s+(?:cook|make|bake)\s+(?:a\s+|an\s+|some\s+)?(?P<x>[a-z][a-z' &]*?){_EN_DISH_END}",
    # What is at hand: "what can I make with chicken and rice", "dinner ideas with some leftover salmon",
    # "I've got zucchini and feta, what could I cook?"
    rf"\b(?:make|cook|bake|do|dinner|lunch|breakfast|ideas?|something)\s+(?:\w+\s+)?(?:with|using|from)\s+(?:some\s+|the\s+|my\s+|a\s+)?"
    rf"(?!instead\b)(?P<x>[a-z][a-z' &]*?){_EN_DISH_END}",
    r"^(?:\w+\s+)?(?:i've got|i have|we have|we've got|i got|there's|there is)\s+(?:some\s+)?(?P<x>[a-z][a-z' &]*?)\s*,?\s*"
    r"(?:what|any|so what)\b",
    # "search for a vegetarian chili", "look up a quick curry"
    rf"\b(?:search|look)\s+(?:for|up)\s+(?:a\s+|an\s+|some\s+|the\s+)?(?P<x>[a-z][a-z' &]*?)(?:\s+recipes?)?{_EN_DISH_END}",
)
# What is at hand, then what to make of it: "두부랑 김치로 뭐 해 먹지?", "계란으로 만들 수 있는 요리",
# "집에 감자랑 양파 남았는데 뭐 만들까?"
_KO_AT_HAND = (
    r"(?P<x>[가-힣]+?(?:(?:이랑|랑|하고)\s+[가-힣]+?)*?)(?:으로|로)\s+(?:만들\s*수\s*있는\s+(?P<y>[가-힣]+)|뭐)",
    r"(?P<x>[가-힣]+(?:(?:이랑|랑|하고)\s+[가-힣]+)*)\s+(?:있는데|남았는데|있어서)\s+뭐",
    # "냉장고에 애호박이랑 감자밖에 없는데, 이걸로 뭐 해 먹지": only what is at hand, then what to make of it
    r"(?P<x>[가-힣]+(?:(?:이랑|랑|하고)\s+[가-힣]+)*?)(?:밖에|만)\s+(?:없는데|없어서|없으니까|남았는데|있는데)[,\s]",
)
_KO_RECIPE = (r"(?P<x>\S+)\s*(?:레시피|요리법|조리법|(?:만드|끓이|하|굽|볶|무치|부치|삶|찌)는\s*(?:법|방법)|만들기|"
              r"어떻게\s*(?:만들|끓여|끓이|만드|해|요리)|만들고\s*싶|끓이고\s*싶)")


def recipe_query(text: str) -> str | None:
    """The dish or ingredient a recipe request names: "a recipe for banana bread" → "banana bread"."""
    prepared = prepare(text)
    if HANGUL.search(text):
        for pattern in _KO_AT_HAND:
            if (match := re.search(pattern, prepared)) is not None:
                words = [re.sub(r"(?<=[가-힣])(?:밖에|만)$", "", strip_korean_particle(w))
                         for w in re.split(r"(?<=[가-힣])(?:이랑|랑|하고)\s+|\s+", match["x"]) if w]
                not_dishes = lexicon("ko").phrases("lookup_not_dish")
                kept = [w for w in words if w not in not_dishes] + ([match["y"]] if "y" in match.groupdict() and match["y"] else [])
                if kept:
                    return " ".join(kept)
        match = re.search(_KO_RECIPE, prepared)
        if match is None:
            return None
        dish = strip_korean_particle(match["x"].strip(",.!?"))
        before = prepared[: match.start("x")].split()
        # "바나나 빵 레시피": a dish of two words, the first a bare noun (no particle, no filler)
        if before and re.fullmatch(r"[가-힣]+", before[-1]) and strip_korean_particle(before[-1]) == before[-1] \
                and before[-1] not in lexicon("ko").phrases("lookup_filler") and before[-1] not in lexicon("ko").phrases("lookup_not_dish") \
                and not re.search(r"[은는을를이가도에요고서준던한운된인온간있]$", before[-1]):  # no particle, no modifier
            return f"{before[-1]} {dish}"
        return dish
    for pattern in _EN_RECIPE:
        match = re.search(pattern, prepared)
        if match:
            return _without_amounts(_without_praise(original(text, prepared, match.start("x"), match.end("x"))))
    match = re.search(r"(?P<x>[a-z][a-z' ]*?)\s+recipes?\b", prepared)
    if match:
        words = match["x"].split()
        before = lexicon("en").phrases("lookup_before_dish")
        while words and words[0] in before:
            words = words[1:]
        # the dish is what follows the last filler word ("look up a chicken curry")
        for i in range(len(words) - 1, -1, -1):
            if words[i] in before:
                words = words[i + 1 :]
                break
        if words:
            return _without_praise(" ".join(words))
    return None


def _without_amounts(dish: str) -> str:
    """What is at hand without how much of it ("leftover rice and a couple of eggs" → "leftover
    rice and eggs", "two chicken breasts and some spinach" → "chicken breasts and spinach"): the
    book is searched for the things, and a count is no word of a recipe's. "One" is kept: it names
    dishes ("one pot pasta", "one pan chicken")."""
    amounts = lexicon("en").alternation("recipe_amount")
    kept = re.sub(rf"(?i)(?<![\w'])(?:{amounts}|\d+(?:\.\d+)?|{'|'.join(w for w in EN_ONES if w != 'one')})\s+(?:(?:{amounts})\s+)?", "", dish)
    kept = " ".join(kept.split())
    return kept if re.search(r"[a-z]", kept, re.I) else dish


def _without_praise(dish: str) -> str:
    words = dish.split()
    praise = lexicon("en").phrases("lookup_praise")
    while len(words) > 1 and words[0].lower() in praise:
        words = words[1:]
    return " ".join(words)


# -- weather: place and day ------------------------------------------------------------------------

_EN_PLACE_END = (r"(?=\s*(?:[,.!?]|$|\s(?:today|tomorrow|tonight|now|right|this|on|next|at|in|for|please|like|going|"
                 r"later|currently|and|or|the day)\b))")
@functools.cache
def _en_not_place() -> frozenset[str]:
    """Words said where a place could be that name none: "here", "the kitchen", a day or part of one, a weekday."""
    en = lexicon("en")
    return frozenset((*en.phrases("lookup_not_place"), *en.phrases("lookup_when_tomorrow"), *en.phrases("lookup_when_today"),
                      *en.phrases("lookup_weekday")))


@functools.cache
def _en_when() -> tuple[re.Pattern[str], ...]:
    """A later day before a time of today ("tonight or tomorrow" asks about tomorrow), each the longest first."""
    en = lexicon("en")
    return tuple(re.compile(rf"\b{re.escape(p)}\b") for p in (*en.phrases("lookup_when_tomorrow"), *en.phrases("lookup_when_today")))


@functools.cache
def _en_weekday() -> re.Pattern[str]:
    return re.compile(rf"\b(?:(?:this|next)\s+)?{lexicon('en').alternation('lookup_weekday')}\b")


def could_be_place(value: str) -> bool:
    """Whether ``value`` can name a place at all: "미세먼지", "weather", "tomorrow" or "here" cannot,
    though a small model sometimes writes them as the location."""
    word = strip_korean_particle(value.strip().casefold().strip(",.!?"))
    if not word:
        return False
    if HANGUL.search(word):
        ko = lexicon("ko")
        return not (word in ko.phrases("lookup_weather_word") or word in ko.phrases("lookup_not_place") or _is_time_word(word))
    return word not in lexicon("en").phrases("lookup_weather_word") and word not in _en_not_place()


@functools.cache
def _place_articles() -> tuple[str, ...]:
    """The articles after which words name no place unless a known place begins so, each with its space."""
    return tuple(f"{article} " for article in lexicon("en").phrases("place_article"))


def place(text: str, known: Iterable[str] = ()) -> str | None:
    """A place named for the weather or air: "in Los Angeles" → "Los Angeles", "서울에 비 와" → "서울".

    Words after "the" ("in the oven", "for the week") name no place, unless they are one of
    ``known``: the places the household's forecast covers (:func:`tools.forecast.place_names`),
    some of which begin so ("the Hague", "the Bronx")."""
    prepared = prepare(text)
    if HANGUL.search(text):
        return _korean_place(prepared)
    keys = {place_key(name) for name in known}
    for match in re.finditer(rf"\b(?:in|for|at|around|near)\s+(?P<x>[a-z][a-z.' ]*?){_EN_PLACE_END}", prepared):
        candidate = match["x"].strip()
        if candidate in _en_not_place() or len(candidate.split()) > 3:
            continue
        if candidate.startswith(_place_articles()) and place_key(candidate) not in keys:
            continue
        return original(text, prepared, match.start("x"), match.end("x"))
    return _place_as_subject(text) or _place_before_its_day(text)


_EN_PLACE_SUBJECT = re.compile(
    r"\b(?i:how's|how\s+is|how\s+does|what's|what\s+is)\s+(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+(?i:looking|look|like|doing|shaping\s+up)\b")


def _place_as_subject(text: str) -> str | None:
    """A place asked about as the subject ("How's Seoul looking weather-wise tomorrow?", "What's
    Busan like this weekend?"): a name, written capitalised, and no word that names no place."""
    match = _EN_PLACE_SUBJECT.search(text)
    if match is None:
        return None
    en = lexicon("en")
    said_of_weather = {*en.phrases("cue_weather"), *en.phrases("cue_air_quality"), *en.phrases("lookup_weather_word")}
    if any(w.casefold() in _en_not_place() or w.casefold() in said_of_weather or en.has("lead", w.casefold())
           or w.casefold() in ("it", "that", "this", "everything", "things", "everyone") for w in match["x"].split()):
        return None
    return match["x"]


def _place_before_its_day(text: str) -> str | None:
    """A place said as the topic, right before the day it is asked about: "Busan tomorrow, will I
    need an umbrella?", "Jeju this weekend, any rain?", "Daegu, tonight?" (a name, written capitalised, and no word
    that names no place)."""
    days = "|".join(re.escape(p) for p in (*lexicon("en").phrases("lookup_when_tomorrow"),
                                           *lexicon("en").phrases("lookup_when_today"), *lexicon("en").phrases("lookup_weekday")))
    lead = lexicon("en").alternation("lead")
    match = re.match(rf"^\s*(?:(?i:{lead})\W+)*(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?),?\s+(?:{days})\b", text.strip())
    if match is None:
        return None
    candidate = match["x"]
    en = lexicon("en")
    said_of_weather = {*en.phrases("cue_weather"), *en.phrases("cue_air_quality"), *en.phrases("lookup_weather_word")}
    if any(w.casefold() in _en_not_place() or w.casefold() in en.phrases("lead") or w.casefold().rstrip("sy") in said_of_weather
           or w.casefold() in said_of_weather for w in candidate.split()):
        return None
    return candidate


def _is_time_word(word: str) -> bool:
    bare = strip_korean_particle(word)
    ko = lexicon("ko")
    times = ko.phrases("lookup_time_word")
    return bare in times or word in times or bare.rstrip("에") in times or bare in ko.phrases("lookup_weekday")


def _korean_place(prepared: str) -> str | None:
    not_places, weather = lexicon("ko").phrases("lookup_not_place"), lexicon("ko").phrases("lookup_weather_word")
    skipped = lexicon("ko").phrases("lookup_filler")
    words = [w.strip(",.!?") for w in prepared.split()]
    words = [w for w in words if w not in skipped]  # "저기, 대구 공기 어때요?"
    for i, word in enumerate(words):
        if not word or _is_time_word(word):
            continue
        if word in not_places or strip_korean_particle(word) in not_places or word.rstrip("에") in not_places:
            return None
        # the first word that is not a time word: a place if it takes 에/에서 or comes before the weather noun
        rest = [w for w in words[i + 1 :] if not _is_time_word(w)]
        locative = re.search(r"(?:에서|에|의)$", word) and len(word) > 2
        if rest and rest[0].startswith(weather) and not word.startswith(weather):
            return strip_korean_particle(word)
        if rest and not word.startswith(weather) and re.fullmatch(r"[가-힣]{2,}", word) \
                and (rest[0] in lexicon("ko").phrases("place_follow") or " ".join(rest[:2]) in lexicon("ko").phrases("place_follow")):
            return word  # "대구 쪽 공기는?", "부산 가는데 거기 날씨 괜찮대?": a place, by the word after it
        if locative:
            return re.sub(r"(?:에서|에|의)$", "", word)
        return None
    return None


_KO_WHEN = (
    re.compile(r"(?:오늘|내일)\s*(?:밤|저녁|아침|오전|오후)"), re.compile(r"내일\s*모레|내일모레|모레|글피"),
    re.compile(r"(?:이번\s*주?|다음\s*주?)?\s*[월화수목금토일]요일"), re.compile(r"(?:이번|다음)\s*주말|주말"), re.compile(r"오늘|내일|낼"),
    # "오후에 비 와요?": a part of today said alone
    re.compile(r"(?<![가-힣])(?:오후|오전|아침|저녁|낮)(?=에|\s|$|[,.?!])"),
)
"""The days and parts of a day said in Korean, in the order tried (오늘 밤 before 오늘)."""


def when(text: str) -> str | None:
    """The day or part of day asked about, as said: "tomorrow", "Friday", "오늘 밤", "내일"."""
    prepared = prepare(text)
    if HANGUL.search(text):
        for pattern in _KO_WHEN:
            match = pattern.search(prepared)
            if match:
                return match.group().strip()
        return None
    for pattern in _en_when():
        match = pattern.search(prepared)
        if match:
            # "over the weekend", "at the weekend": the day, without the word before it
            return re.sub(r"^(?:over|at|during|for)\s+", "", original(text, prepared, match.start(), match.end()))
    match = _en_weekday().search(prepared)
    return original(text, prepared, match.start(), match.end()) if match else None
