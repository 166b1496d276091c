"""Kitchen unit conversion: weights, volumes, cups of an ingredient to grams, oven temperatures.

Answers are rounded for speech ("about 240 grams") while the data carries the exact number, so the
screen and the tests never depend on the rounding.
"""

from __future__ import annotations

import logging
import math
import re

from pydantic import BaseModel, ConfigDict, Field

from tools.spec import ToolOutput, ToolSpec

log = logging.getLogger(__name__)


class ConversionError(ValueError):
    """A conversion that cannot be done; the message is written for the model to act on."""


class ConvertArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float = Field(description="The amount to convert, e.g. 2 or 350.")
    from_unit: str = Field(description="Unit of the amount: g, kg, oz, lb, ml, l, tsp, tbsp, cup, fl_oz, C, F, K, gas_mark.")
    to_unit: str = Field(description="Unit wanted, same vocabulary as from_unit.")
    ingredient: str | None = Field(default=None, description="What is measured, needed between volume and weight (flour, sugar).")


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

# Grams per US cup.  Each entry: canonical English name, density, aliases (English and Korean).
_INGREDIENTS: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("flour", 120.0, ("flour", "all-purpose flour", "all purpose flour", "plain flour", "밀가루", "중력분", "박력분")),
    ("bread flour", 127.0, ("bread flour", "strong flour", "강력분")),
    ("sugar", 200.0, ("sugar", "white sugar", "granulated sugar", "caster sugar", "설탕", "백설탕")),
    ("brown sugar", 220.0, ("brown sugar", "흑설탕", "황설탕")),
    ("powdered sugar", 120.0, ("powdered sugar", "icing sugar", "confectioners sugar", "confectioners' sugar", "슈가파우더", "슈거파우더", "분당")),
    ("butter", 227.0, ("butter", "버터")),
    ("water", 236.6, ("water", "물")),
    ("milk", 245.0, ("milk", "우유")),
    ("rice", 185.0, ("rice", "uncooked rice", "쌀")),
    ("oats", 90.0, ("oats", "rolled oats", "oatmeal", "귀리", "오트밀")),
    ("honey", 340.0, ("honey", "꿀")),
    ("salt", 288.0, ("salt", "table salt", "소금")),
    ("cocoa", 85.0, ("cocoa", "cocoa powder", "코코아", "코코아가루", "코코아 파우더")),
    ("oil", 218.0, ("oil", "vegetable oil", "olive oil", "canola oil", "식용유", "기름", "올리브유")),
    ("yogurt", 245.0, ("yogurt", "yoghurt", "요거트", "요구르트")),
    ("grated cheese", 100.0, ("grated cheese", "cheese", "parmesan", "shredded cheese", "치즈")),
    ("heavy cream", 238.0, ("heavy cream", "cream", "whipping cream", "생크림")),
    ("cornstarch", 128.0, ("cornstarch", "corn starch", "cornflour", "전분", "옥수수전분")),
    ("soy sauce", 255.0, ("soy sauce", "간장")),
    ("vinegar", 239.0, ("vinegar", "식초")),
    ("sesame oil", 218.0, ("sesame oil", "참기름")),
    ("maple syrup", 315.0, ("maple syrup", "메이플시럽")),
)
INGREDIENT_G_PER_CUP: dict[str, float] = {name: grams for name, grams, _ in _INGREDIENTS}
_INGREDIENT_ALIASES: dict[str, str] = {alias: name for name, _, aliases in _INGREDIENTS for alias in aliases}
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


def normalize_unit(unit: str) -> str:
    """The canonical unit for a spoken or written unit name; ConversionError if unknown."""
    key = " ".join(unit.strip().lower().replace(".", " ").split())
    if key in UNIT_ALIASES:
        return UNIT_ALIASES[key]
    if key.replace(" ", "") in UNIT_ALIASES:
        return UNIT_ALIASES[key.replace(" ", "")]
    known = "g, kg, oz, lb, ml, l, tsp, tbsp, cup, fl_oz, C, F, K, gas_mark"
    raise ConversionError(f"unknown unit {unit!r}; use one of: {known}")


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


def convert(value: float, from_unit: str, to_unit: str, ingredient: str | None = None) -> tuple[float, str, str]:
    """Convert exactly; returns (result, canonical from unit, canonical to unit)."""
    if not math.isfinite(value):
        raise ConversionError("the amount must be a finite number")
    src, dst = normalize_unit(from_unit), normalize_unit(to_unit)
    thermal = set(TEMPERATURE) | {GAS_MARK}
    if src in thermal or dst in thermal:
        if not (src in thermal and dst in thermal):
            raise ConversionError(f"cannot convert between a temperature and {_kind(dst if src in thermal else src)}")
        return _convert_temperature(value, src, dst), src, dst
    if value < 0:
        raise ConversionError("an amount cannot be negative")
    if src in MASS_G and dst in MASS_G:
        return value * MASS_G[src] / MASS_G[dst], src, dst
    if src in VOLUME_ML and dst in VOLUME_ML:
        return value * VOLUME_ML[src] / VOLUME_ML[dst], src, dst
    # Volume ↔ mass: only through the ingredient's density.
    if not ingredient or not ingredient.strip():
        raise ConversionError(
            f"converting {_SPOKEN_UNIT[src][1]} to {_SPOKEN_UNIT[dst][1]} depends on the ingredient; "
            "ask which ingredient (for example flour, sugar or butter)"
        )
    name = normalize_ingredient(ingredient)
    if name is None:
        raise ConversionError(
            f"no density known for {ingredient!r}; known ingredients: {', '.join(INGREDIENT_G_PER_CUP)}"
        )
    grams_per_ml = INGREDIENT_G_PER_CUP[name] / VOLUME_ML["cup"]
    if src in VOLUME_ML:
        return value * VOLUME_ML[src] * grams_per_ml / MASS_G[dst], src, dst
    return value * MASS_G[src] / grams_per_ml / VOLUME_ML[dst], src, dst


def _kind(unit: str) -> str:
    return "a weight" if unit in MASS_G else "a volume"


def _to_celsius(value: float, unit: str) -> float:
    if unit == "C":
        return value
    if unit == "F":
        return (value - 32) * 5 / 9
    if unit == "K":
        return value - 273.15
    return _gas_mark_to_celsius(value)


def _convert_temperature(value: float, src: str, dst: str) -> float:
    celsius = _to_celsius(value, src)
    if celsius < -273.15:
        raise ConversionError("that is below absolute zero")
    if dst == "C":
        return celsius
    if dst == "F":
        return celsius * 9 / 5 + 32
    if dst == "K":
        return celsius + 273.15
    return _celsius_to_gas_mark(celsius)


def _gas_mark_to_celsius(mark: float) -> float:
    marks = GAS_MARK_C
    if not marks[0][0] <= mark <= marks[-1][0]:
        raise ConversionError("gas marks go from 1/4 to 9")
    for (m0, c0), (m1, c1) in zip(marks, marks[1:]):
        if m0 <= mark <= m1:
            return c0 + (c1 - c0) * (mark - m0) / (m1 - m0)
    return marks[-1][1]


def _celsius_to_gas_mark(celsius: float) -> float:
    # Ovens with gas marks only have the marks, so the answer is the nearest one.
    if not 100 <= celsius <= 250:
        raise ConversionError(f"{round(celsius)} °C is outside the gas mark range (about 110 to 240 °C)")
    return float(min(GAS_MARK_C, key=lambda mc: abs(mc[1] - celsius))[0])


def speakable(value: float, unit: str) -> tuple[float, str]:
    """A rounded number and its words ("1 and a half", "240") for saying the amount aloud."""
    if unit in TEMPERATURE:
        rounded = float(round(value))
        return rounded, str(int(rounded))
    if unit == GAS_MARK:
        return value, _gas_mark_words(value)
    if unit in _FRACTIONAL_UNITS and value >= 0.25:
        return round(value * 4) / 4, _fraction_words(round(value * 4) / 4)
    if value == 0:
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
        return f"{value:g}"
    return words if whole == 0 else f"{whole} and {words}"


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


async def _convert_units(args: ConvertArgs) -> ToolOutput:
    result, src, dst = convert(args.value, args.from_unit, args.to_unit, args.ingredient)
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


def convert_tools() -> list[ToolSpec[ConvertArgs]]:
    """The conversion tool (it needs no store)."""
    return [
        ToolSpec(
            name="convert_units",
            description=(
                "Convert a kitchen amount or oven temperature between units (grams, cups, spoons, ounces, "
                "°C/°F, gas marks); give the ingredient when converting between volume and weight."
            ),
            args=ConvertArgs,
            run=_convert_units,
            side_effects="read",
            expected_s=0.01,
            timeout_s=1.0,
        )
    ]
