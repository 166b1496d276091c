"""The conversion a request asks for, read from its words: amount, unit it is in, unit wanted, ingredient.

"How many grams is two cups of flour" → (2, cup, g, flour); "화씨 350도는 섭씨로 몇 도야" → (350, F, C).
The unit right after the amount (or the scale word right before it, as in "gas mark 4" and
"화씨 350도") is the unit it is in; another unit named without an amount is the one wanted.
Unit names come back in the vocabulary ``convert_units`` takes (g, kg, ml, l, cup, tbsp, tsp,
oz, lb, fl_oz, C, F, K, gas_mark); the names said for each are the lexicons' ``unit_`` classes.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

from agent.deciding.extract import HANGUL, original, strip_korean_particle
from agent.deciding.lexicon import lexicon
from agent.deciding.spoken_numbers import EN_ONES, KO_NUMBER, english_tokens, korean_number, prepare, read_amount
from tools.convert import normalize_ingredient

log = logging.getLogger(__name__)

_EN_UNITS = {"unit_fahrenheit": "F", "unit_celsius": "C", "unit_kelvin": "K", "unit_gas_mark": "gas_mark", "unit_fl_oz": "fl_oz",
             "unit_tbsp": "tbsp", "unit_tsp": "tsp", "unit_cup": "cup", "unit_g": "g", "unit_kg": "kg", "unit_oz": "oz",
             "unit_lb": "lb", "unit_ml": "ml", "unit_l": "l"}
"""Each lexicon class of unit names, and the unit it names."""
# Single letters are units only right after a number ("200g", "2 l", "350 F").
EN_UNIT_LETTERS = {"g": "g", "l": "l", "c": "C", "f": "F"}
_KO_UNITS = {"unit_kg": "kg", "unit_g": "g", "unit_ml": "ml", "unit_l": "l", "unit_tbsp": "tbsp", "unit_tsp": "tsp",
             "unit_cup": "cup", "unit_oz": "oz", "unit_lb": "lb", "unit_gas_mark": "gas_mark", "unit_degree": "C"}
_KO_SCALES = {"unit_scale_fahrenheit": "F", "unit_scale_celsius": "C"}
"""The scale said before the amount or alone (화씨 350도, 섭씨로), which makes 도 its degree."""


def _named(language: str, classes: dict[str, str]) -> dict[str, str]:
    """Each unit name of ``classes`` in the language's lexicon, and the unit it names."""
    lex = lexicon(language)
    return {phrase: unit for name, unit in classes.items() for phrase in lex.phrases(name)}


@functools.cache
def _en_units() -> tuple[dict[tuple[str, ...], str], list[tuple[str, ...]]]:
    """The English unit names as words, and the names longest (in words) first."""
    units = {tuple(phrase.split()): unit for phrase, unit in _named("en", _EN_UNITS).items()}
    return units, sorted(units, key=len, reverse=True)


@functools.cache
def _fraction_link() -> frozenset[str]:
    """Words passed over between a fraction and its unit ("half a cup", "a quarter of a cup")."""
    return frozenset(lexicon("en").phrases("unit_fraction_link"))


@functools.cache
def _ingredient_end() -> frozenset[str]:
    """Words that end the ingredient named after "of" ("two cups of flour in grams")."""
    return frozenset(lexicon("en").phrases("unit_ingredient_end"))


@functools.cache
def _ko_units() -> tuple[dict[str, str], str, dict[str, str], str]:
    """The Korean unit names and an alternation of them (longest first), and the same of the scales."""
    units, scales = _named("ko", _KO_UNITS), _named("ko", _KO_SCALES)
    return (units, "|".join(sorted((re.escape(u) for u in units), key=len, reverse=True)),
            scales, "|".join(sorted((re.escape(s) for s in scales), key=len, reverse=True)))


@dataclass(frozen=True)
class Conversion:
    """What the words state; a field is None when they do not state it unambiguously."""

    value: float | None = None
    from_unit: str | None = None
    to_unit: str | None = None
    ingredient: str | None = None


def _unit_at(words: list[str], i: int) -> tuple[str, int] | None:
    units, longest = _en_units()
    for key in longest:
        if tuple(words[i : i + len(key)]) == key:
            return units[key], i + len(key)
    return None


def conversion(text: str) -> Conversion:
    return _korean(text) if HANGUL.search(text) else _english(text)


def _english(text: str) -> Conversion:
    tokens = english_tokens(text)
    words = [t.text for t in tokens]
    pairs: list[tuple[float, str, int, int]] = []  # value, unit, first and last+1 word index
    bare: list[tuple[str, int, int]] = []
    plain_degrees: list[float] = []
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
            while j < len(words) and words[j] in _fraction_link() and value < 1:  # "half a cup", "a quarter of a cup"
                j += 1
            unit = _unit_at(words, j)
            if unit is None and j < len(words) and words[j] in EN_UNIT_LETTERS and re.fullmatch(r"[\d.,]+", words[j - 1]):
                unit = (EN_UNIT_LETTERS[words[j]], j + 1)
            if unit is None and j < len(words) and lexicon("en").has("plain_degree", words[j]):
                plain_degrees.append(value)  # "375 degrees": its scale is the one not asked for
            if unit is not None:
                start = i
                if unit[0] in ("F", "C") and value < 100 and i > 0 and EN_ONES.get(words[i - 1], 0) in range(1, 10) \
                        and (i < 2 or read_amount(words, i - 2) is None):
                    start, value = i - 1, EN_ONES[words[i - 1]] * 100 + value  # "three fifty Fahrenheit" is 350
                pairs.append((value, unit[0], start, unit[1]))
                i = unit[1]
                continue
        if scale is not None:
            bare.append((scale[0], i, scale[1]))
            i = scale[1]
            continue
        i += 1
    scales = {u for u, *_ in bare if u in ("C", "F")}
    if not pairs and len(plain_degrees) == 1 and len(scales) == 1:
        # "The cookbook says 375 degrees, how much is it in Celsius?": from the other scale
        wanted = scales.pop()
        return Conversion(plain_degrees[0], "F" if wanted == "C" else "C", wanted)
    result = _decide([(v, u) for v, u, *_ in pairs], [u for u, *_ in bare])
    ingredient = None
    if len(pairs) == 1:
        # "two cups of flour", else "how many tablespoons of butter is fifty grams"
        for after in (pairs[0][3], *(end for _, _, end in bare)):
            ingredient = ingredient or _english_ingredient(text, tokens, after)
    return Conversion(result.value, result.from_unit, result.to_unit, ingredient)


def _english_ingredient(text: str, tokens: list, after: int) -> str | None:
    words = [t.text for t in tokens]
    j = after
    if j < len(words) and words[j] == "of":
        j += 1
        while j < len(words) and words[j] in ("the", "some"):
            j += 1
        end = j
        while end < len(words) and words[end] not in _ingredient_end() and re.fullmatch(r"[a-z'-]+", words[end]):
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
    units, unit_re, scales, scale_re = _ko_units()
    degrees = lexicon("ko").phrases("unit_degree")
    pairs: list[tuple[float, str, int, int]] = []
    # The recognizer puts commas where the speaker took a breath: "화씨, 350도".
    # "두 컵 반": a half said after the unit is half of one more
    # "설탕 반 컵": a half said alone before the unit
    amount_unit = re.compile(rf"(?:(?P<scale>{scale_re})[\s,]*)?(?P<num>{KO_NUMBER}|(?<![가-힣])반)\s*(?P<unit>{unit_re})"
                             rf"(?P<half>\s*반(?=$|[\s,.?!]|이면|이|은|을|에|으로|만|짜리|정도))?")
    for match in amount_unit.finditer(prepared):
        value = 0.5 if match["num"] == "반" else korean_number(match["num"])
        if value is None:
            continue
        if match["half"]:
            value += 0.5
        # 도: a degree of the scale said before it, else Celsius
        unit = scales[match["scale"]] if match["scale"] and match["unit"] in degrees else units[match["unit"]]
        pairs.append((value, unit, match.start(), match.end()))
    for match in re.finditer(rf"(?P<unit>{unit_re})\s*(?P<num>{KO_NUMBER})\s*(?:개|번)?", prepared):
        # "가스 마크 5", "작은술 여섯 개": the unit named before the amount
        value = korean_number(match["num"])
        covered = any(start <= match.start() < end for *_, start, end in pairs)
        if value is not None and not covered and match["unit"] not in degrees:
            pairs.append((value, units[match["unit"]], match.start(), match.end()))
    wanted: list[str] = []
    for match in re.finditer(rf"몇\s*(?P<unit>{unit_re})|(?P<unit2>{unit_re})(?:으로|로)", prepared):
        unit = match["unit"] or match["unit2"]
        if not any(start <= match.start() < end for *_, start, end in pairs):
            wanted.append(units[unit])
    named = [scales[m["scale"]] for m in re.finditer(rf"(?P<scale>{scale_re})", prepared)
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
    if word in lexicon("ko").phrases("unit_not_ingredient") or normalize_ingredient(word) is None:
        return None
    return word
