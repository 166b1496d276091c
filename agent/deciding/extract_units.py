"""The conversion a request asks for, read from its words: amount, unit it is in, unit wanted, ingredient.

"How many grams is two cups of flour" → (2, cup, g, flour); "화씨 350도는 섭씨로 몇 도야" → (350, F, C).
The unit right after the amount (or the scale word right before it, as in "gas mark 4" and
"화씨 350도") is the unit it is in; another unit named without an amount is the one wanted.
Unit names come back in the vocabulary ``convert_units`` takes (g, kg, ml, l, cup, tbsp, tsp,
oz, lb, fl_oz, C, F, K, gas_mark).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from agent.deciding.extract import HANGUL, original, strip_korean_particle
from agent.deciding.spoken_numbers import KO_NUMBER, english_tokens, korean_number, prepare, read_amount
from tools.convert import normalize_ingredient

log = logging.getLogger(__name__)

EN_UNITS: dict[tuple[str, ...], str] = {
    **{tuple(k.split()): "F" for k in ("degrees fahrenheit", "degree fahrenheit", "fahrenheit", "degrees f", "deg f")},
    **{tuple(k.split()): "C" for k in ("degrees celsius", "degree celsius", "celsius", "centigrade", "degrees c", "deg c",
                                         "degrees centigrade")},
    **{tuple(k.split()): "gas_mark" for k in ("gas mark", "gas marks", "gasmark")},
    **{tuple(k.split()): "fl_oz" for k in ("fluid ounces", "fluid ounce", "fl oz")},
    **{(k,): "tbsp" for k in ("tablespoons", "tablespoon", "tbsp", "tbsps", "tbs")},
    **{(k,): "tsp" for k in ("teaspoons", "teaspoon", "tsp", "tsps")},
    **{(k,): "cup" for k in ("cups", "cup")},
    **{(k,): "g" for k in ("grams", "gram", "grammes", "gramme")},
    **{(k,): "kg" for k in ("kilograms", "kilogram", "kilos", "kilo", "kg", "kgs")},
    **{(k,): "oz" for k in ("ounces", "ounce", "oz")},
    **{(k,): "lb" for k in ("pounds", "pound", "lbs", "lb")},
    **{(k,): "ml" for k in ("milliliters", "milliliter", "millilitres", "millilitre", "ml")},
    **{(k,): "l" for k in ("liters", "liter", "litres", "litre")},
    **{(k,): "K" for k in ("kelvin", "kelvins")},
}
# Single letters are units only right after a number ("200g", "2 l", "350 F").
EN_UNIT_LETTERS = {"g": "g", "l": "l", "c": "C", "f": "F"}
_EN_LONGEST = sorted(EN_UNITS, key=len, reverse=True)

KO_UNITS = {
    "킬로그램": "kg", "킬로": "kg", "그램": "g", "그람": "g", "밀리리터": "ml", "미리리터": "ml", "밀리": "ml", "리터": "l",
    "큰술": "tbsp", "큰스푼": "tbsp", "테이블스푼": "tbsp", "밥숟가락": "tbsp", "작은술": "tsp", "작은스푼": "tsp",
    "티스푼": "tsp", "찻숟가락": "tsp", "컵": "cup", "온스": "oz", "파운드": "lb", "가스 마크": "gas_mark", "가스마크": "gas_mark",
    "도": "C",
}
KO_SCALES = {"화씨": "F", "섭씨": "C"}
_KO_UNIT_RE = "|".join(sorted((re.escape(u) for u in KO_UNITS), key=len, reverse=True))
_KO_STOP_INGREDIENT = {"오븐", "물이", "온도", "화씨", "섭씨"}


@dataclass(frozen=True)
class Conversion:
    """What the words state; a field is None when they do not state it unambiguously."""

    value: float | None = None
    from_unit: str | None = None
    to_unit: str | None = None
    ingredient: str | None = None


def _unit_at(words: list[str], i: int) -> tuple[str, int] | None:
    for key in _EN_LONGEST:
        if tuple(words[i : i + len(key)]) == key:
            return EN_UNITS[key], i + len(key)
    return None


def conversion(text: str) -> Conversion:
    return _korean(text) if HANGUL.search(text) else _english(text)


def _english(text: str) -> Conversion:
    tokens = english_tokens(text)
    words = [t.text for t in tokens]
    pairs: list[tuple[float, str, int, int]] = []  # value, unit, first and last+1 word index
    bare: list[tuple[str, int, int]] = []
    i = 0
    while i < len(words):
        scale = _unit_at(words, i)
        if scale is not None and scale[0] == "gas_mark":  # "gas mark four": the scale before the amount
            amount = read_amount(words, scale[1])
            if amount is not None and not amount[2]:
                pairs.append((amount[0], "gas_mark", i, amount[1]))
                i = amount[1]
                continue
        amount = read_amount(words, i)
        if amount is not None:
            value, j, _ = amount
            while j < len(words) and words[j] in ("of", "a", "an") and value < 1:  # "half a cup", "a quarter of a cup"
                j += 1
            unit = _unit_at(words, j)
            if unit is None and j < len(words) and words[j] in EN_UNIT_LETTERS and re.fullmatch(r"[\d.,]+", words[j - 1]):
                unit = (EN_UNIT_LETTERS[words[j]], j + 1)
            if unit is not None:
                pairs.append((value, unit[0], i, unit[1]))
                i = unit[1]
                continue
        if scale is not None:
            bare.append((scale[0], i, scale[1]))
            i = scale[1]
            continue
        i += 1
    result = _decide([(v, u) for v, u, *_ in pairs], [u for u, *_ in bare])
    ingredient = None
    if len(pairs) == 1:
        # "two cups of flour", else "how many tablespoons of butter is fifty grams"
        for after in (pairs[0][3], *(end for _, _, end in bare)):
            ingredient = ingredient or _english_ingredient(text, tokens, after)
    return Conversion(result.value, result.from_unit, result.to_unit, ingredient)


_EN_INGREDIENT_STOP = {"in", "to", "into", "weigh", "weighs", "is", "are", "equal", "equals", "make", "makes", "for", "as",
                       "be", "would", "will", "does", "do", "if", "how", "and", "please", "?", ",", ".", "!"}


def _english_ingredient(text: str, tokens: list, after: int) -> str | None:
    words = [t.text for t in tokens]
    j = after
    if j < len(words) and words[j] == "of":
        j += 1
        while j < len(words) and words[j] in ("the", "some"):
            j += 1
        end = j
        while end < len(words) and words[end] not in _EN_INGREDIENT_STOP and re.fullmatch(r"[a-z'-]+", words[end]):
            end += 1
        if end > j:
            return original(text, prepare(text), tokens[j].start, tokens[end - 1].end)
        return None
    # "2 cups flour": only a word the ingredient table knows, since anything may follow a unit
    if j < len(words) and normalize_ingredient(words[j]) is not None:
        return original(text, prepare(text), tokens[j].start, tokens[j].end)
    return None


def _decide(pairs: list[tuple[float, str]], bare: list[str]) -> Conversion:
    if len(pairs) != 1:
        return Conversion()
    value, from_unit = pairs[0]
    wanted = {unit for unit in bare if unit != from_unit}
    return Conversion(value, from_unit, wanted.pop() if len(wanted) == 1 else None)


def _korean(text: str) -> Conversion:
    prepared = prepare(text)
    pairs: list[tuple[float, str, int, int]] = []
    # The recognizer puts commas where the speaker took a breath: "화씨, 350도".
    amount_unit = re.compile(rf"(?:(?P<scale>화씨|섭씨)[\s,]*)?(?P<num>{KO_NUMBER})\s*(?P<unit>{_KO_UNIT_RE})")
    for match in amount_unit.finditer(prepared):
        value = korean_number(match["num"])
        if value is None:
            continue
        unit = KO_SCALES[match["scale"]] if match["scale"] and match["unit"] == "도" else KO_UNITS[match["unit"]]
        pairs.append((value, unit, match.start(), match.end()))
    for match in re.finditer(rf"(?P<unit>{_KO_UNIT_RE})\s*(?P<num>{KO_NUMBER})\s*(?:개|번)?", prepared):
        # "가스 마크 5", "작은술 여섯 개": the unit named before the amount
        value = korean_number(match["num"])
        covered = any(start <= match.start() < end for *_, start, end in pairs)
        if value is not None and not covered and match["unit"] != "도":
            pairs.append((value, KO_UNITS[match["unit"]], match.start(), match.end()))
    wanted: list[str] = []
    for match in re.finditer(rf"몇\s*(?P<unit>{_KO_UNIT_RE})|(?P<unit2>{_KO_UNIT_RE})(?:으로|로)", prepared):
        unit = match["unit"] or match["unit2"]
        if not any(start <= match.start() < end for *_, start, end in pairs):
            wanted.append(KO_UNITS[unit])
    named = [KO_SCALES[m["scale"]] for m in re.finditer(r"(?P<scale>화씨|섭씨)", prepared)
             if not any(start <= m.start() < end for *_, start, end in pairs)]
    if named:
        # A named scale ("화씨로") says more than the bare "몇 도", which is Celsius only by default.
        wanted = [unit for unit in wanted if unit not in ("C", "F")] + named
    result = _decide([(v, u) for v, u, *_ in pairs], wanted)
    ingredient = _korean_ingredient(prepared, text, pairs[0][2]) if len(pairs) == 1 else None
    return Conversion(result.value, result.from_unit, result.to_unit, ingredient)


def _korean_ingredient(prepared: str, text: str, amount_start: int) -> str | None:
    before = prepared[:amount_start].split()
    if not before:
        return None
    word = strip_korean_particle(before[-1])
    if word in _KO_STOP_INGREDIENT or normalize_ingredient(word) is None:
        return None
    return word
