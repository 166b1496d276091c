"""Kitchen unit conversion: weights, volumes, cups of an ingredient to grams, oven temperatures.

Answers are rounded for speech ("about 240 grams") while the data carries the exact number, so the
screen and the tests never depend on the rounding.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.spec import ToolOutput, ToolSpec, optional_text_argument, text_argument
from tools.spoken import Language, check_language, has_final_consonant, topic

log = logging.getLogger(__name__)


class ConversionError(ValueError):
    """A conversion that cannot be done; the message is written for the model to act on."""

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.code = code
        """Why, the same in every language: not_finite, unknown_unit, not_temperature, negative,
        needs_ingredient, unknown_ingredient, below_absolute_zero, gas_mark_range."""


def _error(language: Language, code: str, en: str, ko: str) -> ConversionError:
    return ConversionError(ko if language == "ko" else en, code)


MAX_AMOUNT = 10_000.0
"""The largest amount (or temperature, either sign) converted: ten thousand of any unit is ten
tonnes of flour or ten thousand degrees, past anything a kitchen weighs or heats.  Every answer
then stays within eight digits, and nothing overflows to infinity on the way."""
MIN_AMOUNT = 0.001
"""The smallest amount other than zero: a milligram, a microlitre.  Smaller is not measured in
a kitchen, and would be repeated back in exponent notation ("1e-300 grams")."""
UNIT_MAX_CHARS = 30
"""The longest unit name ("degrees Fahrenheit", "액량온스"), with room to spare."""
INGREDIENT_MAX_CHARS = 60
"""An ingredient is a few words ("unsalted butter", "all purpose flour")."""


class ConvertArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float = Field(ge=-MAX_AMOUNT, le=MAX_AMOUNT, allow_inf_nan=False, description="The amount to convert, e.g. 2 or 350.")
    from_unit: Annotated[str, text_argument(UNIT_MAX_CHARS)] = Field(
        description="Unit of the amount: g, kg, oz, lb, ml, l, tsp, tbsp, cup, fl_oz, C, F, K, gas_mark.")
    to_unit: Annotated[str, text_argument(UNIT_MAX_CHARS)] = Field(description="Unit wanted, same vocabulary as from_unit.")
    ingredient: Annotated[str | None, optional_text_argument(INGREDIENT_MAX_CHARS)] = Field(
        default=None, description="What is measured, needed between volume and weight (flour, sugar).")

    @field_validator("value")
    @classmethod
    def _measurable(cls, value: float) -> float:
        if 0 < abs(value) < MIN_AMOUNT:
            raise ValueError(f"is too small to measure (the least is {MIN_AMOUNT:g})")
        return value


MASS_G: dict[str, float] = {"g": 1.0, "kg": 1000.0, "oz": 28.349523125, "lb": 453.59237}
VOLUME_ML: dict[str, float] = {
    "ml": 1.0,
    "l": 1000.0,
    "tsp": 4.92892159375,
    "tbsp": 14.78676478125,
    "cup": 236.5882365,  # US customary cup
    "fl_oz": 29.5735295625,
}
TEMPERATURE = ("C", "F", "K")
GAS_MARK = "gas_mark"

# UK oven gas marks and their usual °C equivalents.
GAS_MARK_C: tuple[tuple[float, float], ...] = (
    (0.25, 110), (0.5, 120), (1, 140), (2, 150), (3, 160), (4, 180), (5, 190), (6, 200), (7, 220), (8, 230), (9, 240),
)

_UNIT_ALIASES: dict[str, tuple[str, ...]] = {
    "g": ("g", "gr", "gram", "grams", "gramme", "grammes", "그램"),
    "kg": ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes", "킬로그램", "킬로"),
    "oz": ("oz", "ounce", "ounces", "온스"),
    "lb": ("lb", "lbs", "pound", "pounds", "파운드"),
    "ml": ("ml", "millilitre", "millilitres", "milliliter", "milliliters", "cc", "밀리리터", "미리리터", "밀리"),
    "l": ("l", "litre", "litres", "liter", "liters", "리터"),
    "tsp": ("tsp", "tsps", "teaspoon", "teaspoons", "작은술", "티스푼", "찻숟가락"),
    "tbsp": ("tbsp", "tbsps", "tbs", "tablespoon", "tablespoons", "큰술", "테이블스푼", "밥숟가락"),
    "cup": ("cup", "cups", "컵"),
    "fl_oz": ("fl oz", "fl_oz", "floz", "fl. oz", "fluid ounce", "fluid ounces", "액량온스"),
    "C": ("c", "°c", "celsius", "centigrade", "degrees celsius", "degree celsius", "deg c", "섭씨", "도"),
    "F": ("f", "°f", "fahrenheit", "degrees fahrenheit", "degree fahrenheit", "deg f", "화씨"),
    "K": ("k", "kelvin", "kelvins", "켈빈"),
    GAS_MARK: ("gas_mark", "gas mark", "gasmark", "gas", "mark", "가스 마크", "가스마크"),
}
UNIT_ALIASES: dict[str, str] = {alias: unit for unit, aliases in _UNIT_ALIASES.items() for alias in aliases}

# Grams per US cup.  Each entry: canonical English name, Korean name, density, aliases (English and Korean).
_INGREDIENTS: tuple[tuple[str, str, float, tuple[str, ...]], ...] = (
    ("flour", "밀가루", 120.0, ("flour", "all-purpose flour", "all purpose flour", "plain flour", "밀가루", "중력분", "박력분")),
    ("bread flour", "강력분", 127.0, ("bread flour", "strong flour", "강력분")),
    ("sugar", "설탕", 200.0, ("sugar", "white sugar", "granulated sugar", "caster sugar", "설탕", "백설탕")),
    ("brown sugar", "흑설탕", 220.0, ("brown sugar", "흑설탕", "황설탕")),
    ("powdered sugar", "슈가파우더", 120.0, ("powdered sugar", "icing sugar", "confectioners sugar", "confectioners' sugar", "슈가파우더", "슈거파우더", "분당")),
    ("butter", "버터", 227.0, ("butter", "버터")),
    ("water", "물", 236.6, ("water", "물")),
    ("milk", "우유", 245.0, ("milk", "우유")),
    ("rice", "쌀", 185.0, ("rice", "uncooked rice", "쌀")),
    ("oats", "오트밀", 90.0, ("oats", "rolled oats", "oatmeal", "귀리", "오트밀")),
    ("honey", "꿀", 340.0, ("honey", "꿀")),
    ("salt", "소금", 288.0, ("salt", "table salt", "소금")),
    ("cocoa", "코코아 가루", 85.0, ("cocoa", "cocoa powder", "코코아", "코코아가루", "코코아 파우더")),
    ("oil", "식용유", 218.0, ("oil", "vegetable oil", "olive oil", "canola oil", "식용유", "기름", "올리브유")),
    ("yogurt", "요거트", 245.0, ("yogurt", "yoghurt", "요거트", "요구르트")),
    ("grated cheese", "간 치즈", 100.0, ("grated cheese", "cheese", "parmesan", "shredded cheese", "치즈")),
    ("heavy cream", "생크림", 238.0, ("heavy cream", "cream", "whipping cream", "생크림")),
    ("cornstarch", "옥수수 전분", 128.0, ("cornstarch", "corn starch", "cornflour", "전분", "옥수수전분")),
    ("soy sauce", "간장", 255.0, ("soy sauce", "간장")),
    ("vinegar", "식초", 239.0, ("vinegar", "식초")),
    ("sesame oil", "참기름", 218.0, ("sesame oil", "참기름")),
    ("maple syrup", "메이플 시럽", 315.0, ("maple syrup", "메이플시럽", "메이플 시럽")),
)
INGREDIENT_G_PER_CUP: dict[str, float] = {name: grams for name, _, grams, _ in _INGREDIENTS}
KOREAN_INGREDIENT: dict[str, str] = {name: korean for name, korean, _, _ in _INGREDIENTS}
_INGREDIENT_ALIASES: dict[str, str] = {alias: name for name, _, _, aliases in _INGREDIENTS for alias in aliases}
# Longest alias first, so "brown sugar" wins over "sugar" and "흑설탕" over "설탕".
_ALIASES_BY_LENGTH = sorted(_INGREDIENT_ALIASES, key=len, reverse=True)

_SPOKEN_UNIT: dict[str, tuple[str, str]] = {
    "g": ("gram", "grams"), "kg": ("kilogram", "kilograms"), "oz": ("ounce", "ounces"), "lb": ("pound", "pounds"),
    "ml": ("millilitre", "millilitres"), "l": ("litre", "litres"), "tsp": ("teaspoon", "teaspoons"),
    "tbsp": ("tablespoon", "tablespoons"), "cup": ("cup", "cups"), "fl_oz": ("fluid ounce", "fluid ounces"),
    "C": ("degree Celsius", "degrees Celsius"), "F": ("degree Fahrenheit", "degrees Fahrenheit"), "K": ("kelvin", "kelvins"),
}
# Units people measure in halves and quarters rather than decimals.
_FRACTIONAL_UNITS = {"cup", "tbsp", "tsp", "oz", "lb", "fl_oz", "l", "kg"}

_KO_UNIT: dict[str, str] = {
    "g": "그램", "kg": "킬로그램", "oz": "온스", "lb": "파운드", "ml": "밀리리터", "l": "리터", "tsp": "작은술",
    "tbsp": "큰술", "cup": "컵", "fl_oz": "액량 온스",
}
# Cups and spoons are counted in native Korean numbers ("한 컵", "두 큰술", "반 컵"); the rest are
# read from digits ("120그램", "1.5리터"), which the Korean voice reads the Sino-Korean way.
_KO_COUNTED = {"cup", "tbsp", "tsp"}
_KO_NATIVE = ("", "한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉", "열")


def normalize_unit(unit: str, language: Language = "en") -> str:
    """The canonical unit for a spoken or written unit name; ConversionError (in ``language``) if unknown."""
    key = " ".join(unit.strip().lower().replace(".", " ").split())
    if key in UNIT_ALIASES:
        return UNIT_ALIASES[key]
    if key.replace(" ", "") in UNIT_ALIASES:
        return UNIT_ALIASES[key.replace(" ", "")]
    # Spoken to the user: what was not understood, never a list of codes.
    raise _error(
        language,
        "unknown_unit",
        f"I don't know the unit {unit.strip()}.",
        f"{topic(unit.strip())} 모르는 단위예요.",
    )


def normalize_ingredient(ingredient: str) -> str | None:
    """The ingredient table entry a name refers to ("unsalted butter" → "butter"), or None."""
    text = " ".join(ingredient.strip().lower().split())
    if text in _INGREDIENT_ALIASES:
        return _INGREDIENT_ALIASES[text]
    for alias in _ALIASES_BY_LENGTH:
        # English aliases match whole words ("unsalted butter" is butter, not salt); Korean ones
        # match inside compounds ("박력분밀가루").
        pattern = rf"\b{re.escape(alias)}s?\b" if alias.isascii() else re.escape(alias)
        if re.search(pattern, text):
            return _INGREDIENT_ALIASES[alias]
    return None


def convert(
    value: float, from_unit: str, to_unit: str, ingredient: str | None = None, language: Language = "en"
) -> tuple[float, str, str]:
    """Convert exactly; returns (result, canonical from unit, canonical to unit).

    ``language`` is that of the ConversionError's message.
    """
    if not math.isfinite(value):
        raise _error(language, "not_finite", "Please say the amount as a number.", "양은 숫자로 말해 주세요.")
    src, dst = normalize_unit(from_unit, language), normalize_unit(to_unit, language)
    thermal = set(TEMPERATURE) | {GAS_MARK}
    if src in thermal or dst in thermal:
        if not (src in thermal and dst in thermal):
            other = dst if src in thermal else src
            raise _error(
                language,
                "not_temperature",
                f"I can't turn a temperature into {_kind(other)}.",
                f"온도와 {'무게' if other in MASS_G else '부피'}는 서로 바꿀 수 없어요.",
            )
        return _convert_temperature(value, src, dst, language), src, dst
    if value < 0:
        raise _error(language, "negative", "An amount can't be less than zero.", "양은 0보다 작을 수 없어요.")
    if src in MASS_G and dst in MASS_G:
        return value * MASS_G[src] / MASS_G[dst], src, dst
    if src in VOLUME_ML and dst in VOLUME_ML:
        return value * VOLUME_ML[src] / VOLUME_ML[dst], src, dst
    # Volume ↔ mass: only through the ingredient's density.
    if not ingredient or not ingredient.strip():
        raise _error(
            language,
            "needs_ingredient",
            f"{_SPOKEN_UNIT[src][1].capitalize()} to {_SPOKEN_UNIT[dst][1]} depends on the ingredient. "
            "Which one is it, flour, sugar, butter?",
            f"{_with(_KO_UNIT[src])} {_KO_UNIT[dst]} 사이는 재료마다 달라요. "
            "밀가루, 설탕, 버터처럼 어떤 재료인지 알려 주세요.",
        )
    name = normalize_ingredient(ingredient)
    if name is None:
        raise _error(
            language,
            "unknown_ingredient",
            f"I don't know how much a cup of {ingredient.strip()} weighs.",
            f"{ingredient.strip()} 한 컵이 몇 그램인지 몰라요.",
        )
    grams_per_ml = INGREDIENT_G_PER_CUP[name] / VOLUME_ML["cup"]
    if src in VOLUME_ML:
        return value * VOLUME_ML[src] * grams_per_ml / MASS_G[dst], src, dst
    return value * MASS_G[src] / grams_per_ml / VOLUME_ML[dst], src, dst


def _kind(unit: str) -> str:
    return "a weight" if unit in MASS_G else "a volume"


def _to_celsius(value: float, unit: str, language: Language = "en") -> float:
    if unit == "C":
        return value
    if unit == "F":
        return (value - 32) * 5 / 9
    if unit == "K":
        return value - 273.15
    return _gas_mark_to_celsius(value, language)


def _convert_temperature(value: float, src: str, dst: str, language: Language = "en") -> float:
    celsius = _to_celsius(value, src, language)
    if celsius < -273.15:
        raise _error(language, "below_absolute_zero", "That's below absolute zero.", "절대 영도보다 낮은 온도예요.")
    if dst == "C":
        return celsius
    if dst == "F":
        return celsius * 9 / 5 + 32
    if dst == "K":
        return celsius + 273.15
    return _celsius_to_gas_mark(celsius, language)


def _gas_mark_to_celsius(mark: float, language: Language = "en") -> float:
    marks = GAS_MARK_C
    if not marks[0][0] <= mark <= marks[-1][0]:
        raise _error(language, "gas_mark_range", "Gas marks go from a quarter to 9.", "가스 마크는 4분의 1부터 9까지 있어요.")
    for (m0, c0), (m1, c1) in zip(marks, marks[1:]):
        if m0 <= mark <= m1:
            return c0 + (c1 - c0) * (mark - m0) / (m1 - m0)
    return marks[-1][1]


def _celsius_to_gas_mark(celsius: float, language: Language = "en") -> float:
    # Ovens with gas marks only have the marks, so the answer is the nearest one.
    if not 100 <= celsius <= 250:
        raise _error(
            language,
            "gas_mark_range",
            f"{round(celsius)} degrees Celsius is past the gas marks, which run from about 110 to 240 degrees.",
            f"{topic(_ko_temperature(round(celsius), 'C'))} 가스 마크 범위 밖이에요. "
            "가스 마크는 섭씨 약 110도에서 240도까지예요.",
        )
    return float(min(GAS_MARK_C, key=lambda mc: abs(mc[1] - celsius))[0])


def speakable(value: float, unit: str) -> tuple[float, str]:
    """A rounded number and its words ("1 and a half", "240") for saying the amount aloud."""
    if unit in TEMPERATURE:
        rounded = float(round(value))
        return rounded, str(int(rounded))
    if unit == GAS_MARK:
        return value, _gas_mark_words(value)
    # Quarters are how cups and spoons are read; past a hundred they are noise ("2028841 and a quarter").
    if unit in _FRACTIONAL_UNITS and 0.25 <= value < 100:
        return round(value * 4) / 4, _fraction_words(round(value * 4) / 4)
    if value < MIN_AMOUNT / 2:
        # "about 0 litres": a few grains of salt in litres would otherwise be read in exponent notation.
        return 0.0, "0"
    if value < 10:
        rounded = float(f"{value:.2g}") if value < 1 else round(value, 1)
    elif value < 100:
        rounded = float(round(value))
    elif value < 1000:
        rounded = float(round(value))
    else:
        rounded = float(f"{value:.3g}")
    text = f"{rounded:g}" if rounded < 1e6 else f"{rounded:,.0f}"
    return rounded, text


def _fraction_words(value: float) -> str:
    whole, part = int(value), value - int(value)
    words = {0.25: "a quarter", 0.5: "a half", 0.75: "three quarters"}.get(round(part, 2))
    if words is None:
        return _plain(value)
    return words if whole == 0 else f"{whole} and {words}"


def _plain(value: float) -> str:
    """A number as it is read out: never in exponent notation (``:g`` writes 2e+06)."""
    return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"


def _unit_word(value: float, unit: str) -> str:
    singular, plural = _SPOKEN_UNIT[unit]
    # "1 cup", "a quarter cup", but "0 degrees" and "1 and a half cups".
    return singular if value == 1 or (0 < value < 1 and unit in _FRACTIONAL_UNITS) else plural


def _gas_mark_words(mark: float) -> str:
    return {0.25: "quarter", 0.5: "half"}.get(mark, f"{mark:g}")


def _amount(value: float, unit: str) -> str:
    """The asked-for amount as given: the user's own number is repeated, not rounded."""
    if unit == GAS_MARK:
        return f"gas mark {_gas_mark_words(value)}"
    words = _fraction_words(value) if unit in _FRACTIONAL_UNITS and (value * 4).is_integer() else f"{value:g}"
    return f"{words} {_unit_word(value, unit)}"


def _with(word: str) -> str:
    return f"{word}{'과' if has_final_consonant(word) else '와'}"


def _copula(word: str) -> str:
    return f"{word}{'이에요' if has_final_consonant(word) else '예요'}"


def _ko_number(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"


def _ko_temperature(value: float, unit: str) -> str:
    """"섭씨 180도", "화씨 영하 40도", "273.15켈빈"."""
    if unit == "K":
        return f"{_ko_number(value)}켈빈"
    scale = "섭씨" if unit == "C" else "화씨"
    return f"{scale} 영하 {_ko_number(-value)}도" if value < 0 else f"{scale} {_ko_number(value)}도"


def _ko_amount(value: float, unit: str) -> str:
    """An amount said in Korean: "한 컵", "한 컵 반", "4분의 1컵", "1과 4분의 1컵", "241그램", "가스 마크 4"."""
    if unit in TEMPERATURE:
        return _ko_temperature(value, unit)
    if unit == GAS_MARK:
        return f"가스 마크 {({0.25: '4분의 1', 0.5: '2분의 1'}).get(value, f'{value:g}')}"
    word = _KO_UNIT[unit]
    if unit in _KO_COUNTED and (value * 4).is_integer() and 0 < value < len(_KO_NATIVE):
        whole, quarters = int(value), round((value - int(value)) * 4)
        if quarters == 0:
            return f"{_KO_NATIVE[whole]} {word}"
        if quarters == 2:
            return f"{_KO_NATIVE[whole]} {word} 반" if whole else f"반 {word}"
        fraction = f"4분의 {quarters}{word}"
        return f"{_with(str(whole))} {fraction}" if whole else fraction
    return f"{_ko_number(value)}{word}"


MAX_RESULT = 1e9
"""No answer is larger: the bounded inputs stay well under it (10,000 litres is 2 million teaspoons)."""


async def _convert_units(args: ConvertArgs, language: Language = "en") -> ToolOutput:
    result, src, dst = convert(args.value, args.from_unit, args.to_unit, args.ingredient, language)
    if not math.isfinite(result) or abs(result) > MAX_RESULT:
        # Unreachable from validated arguments; a guard so that no change above can make hearth say "inf".
        raise _error(language, "out_of_range", "That amount is too large to convert.", "바꾸기에는 너무 큰 양이에요.")
    rounded, words = speakable(result, dst)
    approximate = not math.isclose(rounded, result, rel_tol=1e-9, abs_tol=1e-9)
    if dst == GAS_MARK:
        # The mark is always a table entry; it is approximate when the oven temperature is not.
        celsius = _to_celsius(args.value, src)
        approximate = not math.isclose(_gas_mark_to_celsius(result), celsius, abs_tol=0.5)
    ingredient = normalize_ingredient(args.ingredient) if args.ingredient else None
    uses_density = (src in MASS_G) != (dst in MASS_G) and src not in TEMPERATURE + (GAS_MARK,)
    if dst == GAS_MARK:
        answer = f"gas mark {words}"
    else:
        answer = f"{words} {_unit_word(rounded, dst)}"
    if language == "ko":
        what = f"{KOREAN_INGREDIENT[ingredient]} " if uses_density and ingredient else ""
        about = "약 " if approximate else ""
        text = f"{what}{topic(_ko_amount(args.value, src))} {about}{_copula(_ko_amount(rounded, dst))}."
    else:
        what = f" of {ingredient}" if uses_density and ingredient else ""
        text = f"{_amount(args.value, src)}{what} is {'about ' if approximate else ''}{answer}."
    data = {
        "value": args.value,
        "from_unit": src,
        "to_unit": dst,
        "ingredient": ingredient if uses_density else None,
        "result": result,
        "rounded": rounded,
        "approximate": approximate,
    }
    if uses_density and ingredient:
        data["grams_per_cup"] = INGREDIENT_G_PER_CUP[ingredient]
    return ToolOutput(text=text[0].upper() + text[1:], data=data)


def convert_tools(language: str = "en") -> list[ToolSpec[ConvertArgs]]:
    """The conversion tool (it needs no store), answering in ``language``."""
    lang = check_language(language)

    async def convert_units(args: ConvertArgs) -> ToolOutput:
        try:
            return await _convert_units(args, lang)
        except ConversionError as exc:
            # The user asked for something that cannot be converted: say why, in their language.
            return ToolOutput(str(exc), {"error": exc.code})

    return [
        ToolSpec(
            name="convert_units",
            description=(
                "Convert a kitchen amount or oven temperature between units (grams, cups, spoons, ounces, "
                "°C/°F, gas marks); give the ingredient when converting between volume and weight."
            ),
            args=ConvertArgs,
            run=convert_units,
            side_effects="read",
            expected_s=0.01,
            timeout_s=1.0,
            speculable=True,
        )
    ]
