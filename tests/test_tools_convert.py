"""convert_units: known kitchen values, unit names in English and Korean, clear errors."""

from __future__ import annotations

import re

import pytest

from tools.convert import INGREDIENT_G_PER_CUP, ConversionError, ConvertArgs, convert, convert_tools, normalize_unit
from tools.convert import KOREAN_INGREDIENT, normalize_ingredient
from tools.spec import ToolOutput


async def run(value: float, from_unit: str, to_unit: str, ingredient: str | None = None) -> ToolOutput:
    (spec,) = convert_tools()
    return await spec.run(ConvertArgs(value=value, from_unit=from_unit, to_unit=to_unit, ingredient=ingredient))


def test_spec_shape() -> None:
    (spec,) = convert_tools()
    assert spec.name == "convert_units"
    assert spec.side_effects == "read"
    assert set(spec.schema()["properties"]) == {"value", "from_unit", "to_unit", "ingredient"}


async def test_cup_of_flour() -> None:
    out = await run(1, "cup", "g", "flour")
    assert 120 <= out.data["result"] <= 125
    assert "gram" in out.text and "flour" in out.text


async def test_fahrenheit_to_celsius() -> None:
    out = await run(350, "F", "C")
    assert out.data["result"] == pytest.approx(176.667, abs=0.01)
    assert out.data["rounded"] == 177
    assert "about 177" in out.text


async def test_gas_marks() -> None:
    assert (await run(4, "gas mark", "C")).data["result"] == 180
    assert (await run(1, "gas", "C")).data["result"] == 140
    assert (await run(9, "gas_mark", "C")).data["result"] == 240
    assert (await run(0.25, "gas mark", "C")).data["result"] == 110
    assert (await run(0.5, "gas mark", "C")).data["result"] == 120
    assert (await run(180, "C", "gas mark")).data["result"] == 4
    out = await run(350, "F", "gas mark")
    assert out.data["result"] == 4 and out.data["approximate"]


async def test_spoons() -> None:
    out = await run(2, "tbsp", "tsp")
    assert out.data["result"] == pytest.approx(6)
    assert out.data["approximate"] is False
    assert out.text == "2 tablespoons is 6 teaspoons."


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("그램", "g"), ("grams", "g"), ("Gram", "g"), ("컵", "cup"), ("cups", "cup"), ("큰술", "tbsp"),
        ("tablespoons", "tbsp"), ("작은술", "tsp"), ("teaspoon", "tsp"), ("화씨", "F"), ("°F", "F"),
        ("fahrenheit", "F"), ("섭씨", "C"), ("°C", "C"), ("celsius", "C"), ("ounces", "oz"), ("pounds", "lb"),
        ("밀리리터", "ml"), ("millilitres", "ml"), ("리터", "l"), ("litres", "l"), ("gas mark", "gas_mark"),
        ("gas", "gas_mark"), ("fl oz", "fl_oz"), ("K", "K"), ("kg", "kg"),
    ],
)
def test_unit_names(name: str, unit: str) -> None:
    assert normalize_unit(name) == unit


async def test_korean_request() -> None:
    out = await run(2, "컵", "그램", "설탕")
    assert out.data["result"] == pytest.approx(400)
    assert out.data["ingredient"] == "sugar"
    milk = await run(1, "컵", "그램", "우유")
    assert milk.data["result"] == pytest.approx(245)


def test_ingredient_table() -> None:
    assert len(INGREDIENT_G_PER_CUP) >= 15
    expected = {"sugar": 200, "brown sugar": 220, "butter": 227, "water": 236.6, "milk": 245, "rice": 185, "oats": 90,
                "honey": 340, "salt": 288, "cocoa": 85, "powdered sugar": 120, "oil": 218, "yogurt": 245,
                "grated cheese": 100}
    for name, grams in expected.items():
        assert INGREDIENT_G_PER_CUP[name] == grams
    assert 120 <= INGREDIENT_G_PER_CUP["flour"] <= 125


@pytest.mark.parametrize(
    ("ingredient", "grams"),
    [("unsalted butter", 227), ("light brown sugar", 220), ("흑설탕", 220), ("버터", 227), ("물", 236.6),
     ("쌀", 185), ("밀가루", 120), ("Flour", 120),
     ("semi-skimmed milk", 245), ("sesame oil", 218)],
)
def test_ingredient_names(ingredient: str, grams: float) -> None:
    result, _, _ = convert(1, "cup", "g", ingredient)
    assert result == pytest.approx(grams)


def test_mass_and_volume() -> None:
    assert convert(1, "lb", "g")[0] == pytest.approx(453.59237)
    assert convert(1, "kg", "lb")[0] == pytest.approx(2.20462, rel=1e-5)
    assert convert(1, "cup", "ml")[0] == pytest.approx(236.6, abs=0.05)
    assert convert(1, "cup", "tbsp")[0] == pytest.approx(16)
    assert convert(1, "cup", "fl oz")[0] == pytest.approx(8)
    assert convert(1.5, "l", "ml")[0] == pytest.approx(1500)
    assert convert(100, "C", "F")[0] == pytest.approx(212)
    assert convert(0, "C", "K")[0] == pytest.approx(273.15)


async def test_grams_to_cups() -> None:
    out = await run(240, "g", "cup", "flour")
    assert out.data["result"] == pytest.approx(2)
    assert "2 cups" in out.text


async def test_rounding_for_speech() -> None:
    out = await run(8.5, "oz", "g")
    assert out.data["result"] == pytest.approx(240.97, abs=0.01)
    assert out.text == "8 and a half ounces is about 241 grams."
    half = await run(118.3, "ml", "cup")
    assert "a half" in half.text


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1, "cup", "g", None), "^Cups to grams depends on the ingredient. Which one is it"),
        ((1, "cup", "g", "unobtainium"), "^I don't know how much a cup of unobtainium weighs.$"),
        ((1, "smidge", "g", None), "^I don't know the unit smidge.$"),
        ((1, "g", "pinch", None), "^I don't know the unit pinch.$"),
        ((1, "C", "g", None), "^I can't turn a temperature into a weight.$"),
        ((12, "gas mark", "C", None), "^Gas marks go from a quarter to 9.$"),
        ((500, "C", "gas mark", None), "^500 degrees Celsius is past the gas marks"),
        ((-1, "cup", "ml", None), "^An amount can't be less than zero.$"),
        ((-500, "C", "F", None), "^That's below absolute zero.$"),
    ],
)
async def test_errors(args: tuple, match: str) -> None:
    with pytest.raises(ConversionError, match=match):
        convert(*args)
    out = await run(*args)  # the tool says it rather than failing
    assert re.search(match, out.text) and out.data["error"]
    # Spoken to a person: no codes, quotes, semicolons or lists of units.
    assert not re.search(r"[;'_]|use one of|°", out.text.replace("don't", "").replace("can't", "").replace("That's", ""))


# -- Korean ------------------------------------------------------------------------


async def run_ko(value: float, from_unit: str, to_unit: str, ingredient: str | None = None) -> ToolOutput:
    (spec,) = convert_tools(language="ko")
    return await spec.run(ConvertArgs(value=value, from_unit=from_unit, to_unit=to_unit, ingredient=ingredient))


def test_unsupported_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        convert_tools(language="kr")


@pytest.mark.parametrize(
    ("args", "spoken"),
    [
        ((1, "컵", "그램", "밀가루"), "밀가루 한 컵은 120그램이에요."),
        ((240, "g", "cup", "flour"), "밀가루 240그램은 두 컵이에요."),
        ((500, "g", "cup", "설탕"), "설탕 500그램은 두 컵 반이에요."),
        ((2, "큰술", "작은술", None), "두 큰술은 여섯 작은술이에요."),
        ((8.5, "oz", "g", None), "8.5온스는 약 241그램이에요."),
        ((118.3, "ml", "cup", None), "118.3밀리리터는 약 반 컵이에요."),
        ((0.75, "cup", "tbsp", None), "4분의 3컵은 12큰술이에요."),
        ((1.25, "cup", "ml", None), "1과 4분의 1컵은 약 296밀리리터예요."),
        ((1.5, "리터", "ml", None), "1.5리터는 1500밀리리터예요."),
        ((350, "화씨", "섭씨", None), "화씨 350도는 약 섭씨 177도예요."),
        ((-40, "C", "F", None), "섭씨 영하 40도는 화씨 영하 40도예요."),
        ((180, "C", "gas mark", None), "섭씨 180도는 가스 마크 4예요."),
        ((0.25, "gas mark", "C", None), "가스 마크 4분의 1은 섭씨 110도예요."),
    ],
)
async def test_korean_answers(args: tuple, spoken: str) -> None:
    out = await run_ko(*args)
    assert out.text == spoken


async def test_korean_data_matches_english() -> None:
    for args in ((1, "cup", "g", "밀가루"), (8.5, "oz", "g", None), (350, "F", "gas mark", None)):
        assert (await run_ko(*args)).data == (await run(*args)).data
    assert (await run_ko(1, "컵", "그램", "우유")).data["ingredient"] == "milk"


def test_every_ingredient_has_a_korean_name_that_finds_it() -> None:
    assert set(KOREAN_INGREDIENT) == set(INGREDIENT_G_PER_CUP)
    for name, korean in KOREAN_INGREDIENT.items():
        assert normalize_ingredient(korean) == name


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ((1, "smidge", "g", None), "unknown_unit", "smidge는 모르는 단위예요."),
        ((1, "컵", "그램", None), "needs_ingredient", "컵과 그램 사이는 재료마다 달라요. 밀가루, 설탕, 버터처럼 어떤 재료인지 알려 주세요."),
        ((1, "oz", "cup", None), "needs_ingredient", "온스와 컵 사이는 재료마다 달라요."),
        ((1, "cup", "g", "unobtainium"), "unknown_ingredient", "unobtainium 한 컵이 몇 그램인지 몰라요."),
        ((1, "C", "g", None), "not_temperature", "온도와 무게는 서로 바꿀 수 없어요."),
        ((1, "F", "ml", None), "not_temperature", "온도와 부피는 서로 바꿀 수 없어요."),
        ((12, "gas mark", "C", None), "gas_mark_range", "가스 마크는 4분의 1부터 9까지 있어요."),
        ((500, "C", "gas mark", None), "gas_mark_range", "섭씨 500도는 가스 마크 범위 밖이에요."),
        ((-1, "cup", "ml", None), "negative", "양은 0보다 작을 수 없어요."),
        ((-500, "C", "F", None), "below_absolute_zero", "절대 영도보다 낮은 온도예요."),
    ],
)
async def test_korean_errors(args: tuple, code: str, message: str) -> None:
    korean, english = await run_ko(*args), await run(*args)
    assert korean.data == english.data == {"error": code}
    assert korean.text.startswith(message)
    assert english.text != korean.text


def test_unit_error_in_korean_from_convert() -> None:
    with pytest.raises(ConversionError, match="^한 줌은 모르는 단위예요"):
        convert(1, "한 줌", "g", language="ko")
