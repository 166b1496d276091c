"""convert_units: known kitchen values, unit names in English and Korean, clear errors."""

from __future__ import annotations

import pytest

from tools.convert import INGREDIENT_G_PER_CUP, ConversionError, ConvertArgs, convert, convert_tools, normalize_unit
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
        ((1, "cup", "g", None), "ingredient"),
        ((1, "cup", "g", "unobtainium"), "no density"),
        ((1, "smidge", "g", None), "unknown unit"),
        ((1, "g", "pinch", None), "unknown unit"),
        ((1, "C", "g", None), "temperature"),
        ((12, "gas mark", "C", None), "gas mark"),
        ((500, "C", "gas mark", None), "gas mark"),
        ((-1, "cup", "ml", None), "negative"),
        ((-500, "C", "F", None), "absolute zero"),
    ],
)
async def test_errors(args: tuple, match: str) -> None:
    with pytest.raises(ConversionError, match=match):
        await run(*args)
