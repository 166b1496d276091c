"""What a look-up is about, read from the request: the dish to find, the place and the day for the weather."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from agent.deciding.extract import HANGUL, original, strip_korean_particle
from agent.deciding.spoken_numbers import prepare
from tools.forecast import place_key

log = logging.getLogger(__name__)

# -- recipes ---------------------------------------------------------------------------------------

_EN_DISH_END = r"(?=\s*(?:[,.!?]|$|\s(?:please|tonight|today|tomorrow|for\s+(?:dinner|lunch|breakfast|tonight)|that|which)\b))"
_EN_RECIPE = (
    rf"\brecipes?\s+(?:for|with|using|of|to make)\s+(?:a\s+|an\s+|some\s+|the\s+)?(?P<x>[a-z][a-z' &]*?){_EN_DISH_END}",
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
_EN_BEFORE_RECIPE = {"a", "an", "the", "some", "me", "us", "up", "find", "get", "look", "give", "show", "got", "have",
                     "want", "need", "any", "search", "for", "you", "i", "we", "do", "know", "of", "one", "another",
                     "your", "my", "is", "there", "what's", "whats", "what", "s", "with", "please", "can", "could"}
_EN_PRAISE = {"good", "nice", "great", "tasty", "delicious", "yummy", "decent", "proper", "lovely"}
# What is at hand, then what to make of it: "두부랑 김치로 뭐 해 먹지?", "계란으로 만들 수 있는 요리",
# "집에 감자랑 양파 남았는데 뭐 만들까?"
_KO_AT_HAND = (
    r"(?P<x>[가-힣]+?(?:(?:이랑|랑|하고)\s+[가-힣]+?)*?)(?:으로|로)\s+(?:만들\s*수\s*있는\s+(?P<y>[가-힣]+)|뭐)",
    r"(?P<x>[가-힣]+(?:(?:이랑|랑|하고)\s+[가-힣]+)*)\s+(?:있는데|남았는데|있어서)\s+뭐",
)
_KO_NOT_DISHES = {"냉장고", "냉장고에", "집에", "집", "지금", "좀", "그럼"}
_KO_RECIPE = (r"(?P<x>\S+)\s*(?:레시피|요리법|조리법|만드는\s*(?:법|방법)|만들기|끓이는\s*(?:법|방법)|"
              r"어떻게\s*(?:만들|끓여|끓이|만드|해|요리)|만들고\s*싶|끓이고\s*싶)")


def recipe_query(text: str) -> str | None:
    """The dish or ingredient a recipe request names: "a recipe for banana bread" → "banana bread"."""
    prepared = prepare(text)
    if HANGUL.search(text):
        for pattern in _KO_AT_HAND:
            if (match := re.search(pattern, prepared)) is not None:
                words = [strip_korean_particle(w) for w in re.split(r"(?<=[가-힣])(?:이랑|랑|하고)\s+|\s+", match["x"]) if w]
                kept = [w for w in words if w not in _KO_NOT_DISHES] + ([match["y"]] if "y" in match.groupdict() and match["y"] else [])
                if kept:
                    return " ".join(kept)
        match = re.search(_KO_RECIPE, prepared)
        return strip_korean_particle(match["x"].strip(",.!?")) if match else None
    for pattern in _EN_RECIPE:
        match = re.search(pattern, prepared)
        if match:
            return _without_praise(original(text, prepared, match.start("x"), match.end("x")))
    match = re.search(r"(?P<x>[a-z][a-z' ]*?)\s+recipes?\b", prepared)
    if match:
        words = match["x"].split()
        while words and words[0] in _EN_BEFORE_RECIPE:
            words = words[1:]
        # the dish is what follows the last filler word ("look up a chicken curry")
        for i in range(len(words) - 1, -1, -1):
            if words[i] in _EN_BEFORE_RECIPE:
                words = words[i + 1 :]
                break
        if words:
            return _without_praise(" ".join(words))
    return None


def _without_praise(dish: str) -> str:
    words = dish.split()
    while len(words) > 1 and words[0].lower() in _EN_PRAISE:
        words = words[1:]
    return " ".join(words)


# -- weather: place and day ------------------------------------------------------------------------

_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_WHEN = (
    "the day after tomorrow", "day after tomorrow", "tomorrow morning", "tomorrow afternoon", "tomorrow evening",
    "tomorrow night", "tomorrow", "tonight", "this evening", "this morning", "this afternoon", "later today", "today",
)
_EN_NOT_PLACES = {
    "here", "there", "the morning", "the afternoon", "the evening", "the kitchen", "the house", "my area", "town",
    "the area", "general", "the air", "the city", "the moment", "a bit", "a while", "this area", "the neighbourhood",
    "the neighborhood", "my town", "the garden", "the yard", "home",
}
_EN_PLACE_END = (r"(?=\s*(?:[,.!?]|$|\s(?:today|tomorrow|tonight|now|right|this|on|next|at|in|for|please|like|going|"
                 r"later|currently|and|or|the day)\b))")
_KO_WEATHER_NOUNS = ("날씨", "미세먼지", "초미세먼지", "공기", "기온", "비", "눈", "온도", "습도", "황사", "바람", "대기")
_KO_TIME_WORDS = {"오늘", "내일", "모레", "내일모레", "글피", "지금", "현재", "요즘", "이번", "다음", "주", "주말", "아침", "저녁",
                  "밤", "오전", "오후", "낮", "새벽", "이따", "당장", "오늘밤", "낼"}
_KO_NOT_PLACES = {"여기", "우리", "동네", "밖", "바깥", "집", "이", "그", "좀", "혹시", "진짜", "너무", "많이", "창문"}
_KO_WEEKDAYS = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")


_EN_WEATHER_WORDS = {"weather", "air", "air quality", "forecast", "rain", "snow", "wind", "temperature", "outside",
                     "dust", "fine dust", "pollution", "pollen", "sun", "sunny", "cloudy", "humidity"}


def could_be_place(value: str) -> bool:
    """Whether ``value`` can name a place at all: "미세먼지", "weather", "tomorrow" or "here" cannot,
    though a small model sometimes writes them as the location."""
    word = strip_korean_particle(value.strip().casefold().strip(",.!?"))
    if not word:
        return False
    if HANGUL.search(word):
        return not (word in _KO_WEATHER_NOUNS or word in _KO_NOT_PLACES or _is_time_word(word))
    return word not in _EN_WEATHER_WORDS and word not in _EN_NOT_PLACES and word not in _EN_WHEN and word not in _WEEKDAYS_EN


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
        if candidate in _EN_NOT_PLACES or candidate in _EN_WHEN or candidate in _WEEKDAYS_EN or len(candidate.split()) > 3:
            continue
        if candidate.startswith(("the ", "a ", "an ")) and place_key(candidate) not in keys:
            continue
        return original(text, prepared, match.start("x"), match.end("x"))
    return None


def _is_time_word(word: str) -> bool:
    bare = strip_korean_particle(word)
    return bare in _KO_TIME_WORDS or word in _KO_TIME_WORDS or bare.rstrip("에") in _KO_TIME_WORDS or bare in _KO_WEEKDAYS


def _korean_place(prepared: str) -> str | None:
    words = [w.strip(",.!?") for w in prepared.split()]
    for i, word in enumerate(words):
        if not word or _is_time_word(word):
            continue
        if word in _KO_NOT_PLACES or strip_korean_particle(word) in _KO_NOT_PLACES or word.rstrip("에") in _KO_NOT_PLACES:
            return None
        # the first word that is not a time word: a place if it takes 에/에서 or comes before the weather noun
        rest = [w for w in words[i + 1 :] if not _is_time_word(w)]
        locative = re.search(r"(?:에서|에|의)$", word) and len(word) > 2
        if rest and rest[0].startswith(_KO_WEATHER_NOUNS) and not word.startswith(_KO_WEATHER_NOUNS):
            return strip_korean_particle(word)
        if locative:
            return re.sub(r"(?:에서|에|의)$", "", word)
        return None
    return None


def when(text: str) -> str | None:
    """The day or part of day asked about, as said: "tomorrow", "Friday", "오늘 밤", "내일"."""
    prepared = prepare(text)
    if HANGUL.search(text):
        for pattern in (r"(?:오늘|내일)\s*(?:밤|저녁|아침|오전|오후)", r"내일\s*모레|내일모레|모레|글피",
                        r"(?:이번\s*주?|다음\s*주?)?\s*[월화수목금토일]요일", r"오늘|내일|낼"):
            match = re.search(pattern, prepared)
            if match:
                return match.group().strip()
        return None
    for phrase in _EN_WHEN:
        match = re.search(rf"\b{phrase}\b", prepared)
        if match:
            return original(text, prepared, match.start(), match.end())
    match = re.search(rf"\b(?:(?:this|next)\s+)?(?:{'|'.join(_WEEKDAYS_EN)})\b", prepared)
    return original(text, prepared, match.start(), match.end()) if match else None
