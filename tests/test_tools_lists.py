"""Shopping list and notes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tools.lists import ListStore, list_tools
from tools.timers import TimerStore


@pytest.fixture
def store(tmp_path: Path):
    s = ListStore(tmp_path / "hearth.db")
    s.open()
    yield s
    s.close()


@pytest.fixture
def tools(store: ListStore):
    return {t.name: t for t in list_tools(store)}


async def call(tools, name: str, **kwargs):
    spec = tools[name]
    return await spec.run(spec.args.model_validate(kwargs))


def test_tool_names(tools) -> None:
    assert set(tools) == {"shopping_add", "shopping_complete", "shopping_list", "note_add", "note_remove"}
    assert tools["shopping_list"].side_effects == "read"
    assert set(tools["shopping_add"].schema()["properties"]) == {"item", "quantity"}
    with pytest.raises(ValidationError):
        tools["shopping_add"].args.model_validate({"item": "milk", "count": 2})
    with pytest.raises(ValidationError):
        tools["shopping_list"].args.model_validate({"x": 1})


async def test_empty_list(tools) -> None:
    out = await call(tools, "shopping_list")
    assert out.text == "The shopping list is empty."
    assert out.data == {"items": []}


async def test_add_and_read(tools) -> None:
    out = await call(tools, "shopping_add", item="milk", quantity="2 litres")
    assert out.text == "Added 2 litres milk to the shopping list."
    await call(tools, "shopping_add", item="eggs")
    out = await call(tools, "shopping_list")
    assert out.text == "2 items on the list: 2 litres milk and eggs."
    assert out.data["items"] == [{"item": "milk", "quantity": "2 litres"}, {"item": "eggs", "quantity": None}]


async def test_add_again_updates_quantity(tools, store: ListStore) -> None:
    await call(tools, "shopping_add", item="Oat  Milk", quantity="1")
    out = await call(tools, "shopping_add", item=" oat milk ", quantity="3")
    assert out.data["added"] is False and out.data["quantity"] == "3"
    out = await call(tools, "shopping_add", item="OAT MILK")
    assert out.data["quantity"] == "3"  # no amount said: keep the one said before
    assert len(store.items()) == 1


async def test_complete(tools, store: ListStore) -> None:
    await call(tools, "shopping_add", item="milk")
    await call(tools, "shopping_add", item="eggs")
    out = await call(tools, "shopping_complete", item="MILK")
    assert out.text == "Ticked milk off the list."
    assert [e.item for e in store.items()] == ["eggs"]
    # Ticked off, it can be added again as a fresh entry.
    out = await call(tools, "shopping_add", item="milk")
    assert out.data["added"] is True


async def test_an_item_kept_with_control_characters_is_ticked_off_by_its_plain_name(tools, store: ListStore) -> None:
    # Kept before words from outside were cleaned: the page and the voice now send the plain name.
    store.add("eggs\u001b[31mRED")
    store.add("milk\u202eevil")
    await call(tools, "shopping_complete", item="eggs[31mRED")
    await call(tools, "shopping_complete", item="milkevil")
    assert store.items() == []


async def test_complete_unknown_names_nearest(tools) -> None:
    await call(tools, "shopping_add", item="oat milk")
    await call(tools, "shopping_add", item="tomatoes")
    out = await call(tools, "shopping_complete", item="tomato")
    assert out.data["error"] == "not_found"
    assert out.data["nearest"][0] == "tomatoes"
    assert "Did you mean" in out.text
    out = await call(tools, "shopping_complete", item="milk")
    assert "oat milk" in out.data["nearest"]


async def test_complete_on_empty_list(tools) -> None:
    out = await call(tools, "shopping_complete", item="milk")
    assert out.data["error"] == "not_found"
    assert "empty" in out.text


async def test_note_add(tools, store: ListStore) -> None:
    out = await call(tools, "note_add", text="Call the plumber on Tuesday")
    assert out.text == "Noted."
    assert [n.text for n in store.notes()] == ["Call the plumber on Tuesday"]


def test_persists_and_shares_file_with_timers(tmp_path: Path) -> None:
    path = tmp_path / "hearth.db"
    timers = TimerStore(path)
    timers.open()
    timers.start(60, "tea")
    first = ListStore(path)
    first.open()
    first.add("bread")
    first.close()
    second = ListStore(path)
    second.open()
    assert [e.item for e in second.items()] == ["bread"]
    assert [t.label for t in timers.active()] == ["tea"]
    second.close()
    timers.close()


# -- Korean ------------------------------------------------------------------------


@pytest.fixture
def ko_tools(store: ListStore):
    return {t.name: t for t in list_tools(store, language="ko")}


def test_unsupported_language_is_refused(store: ListStore) -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        list_tools(store, language="english")


async def test_korean_add_and_read(ko_tools) -> None:
    out = await call(ko_tools, "shopping_list")
    assert out.text == "장보기 목록이 비어 있어요."
    # 을/를 follows the last sound of what was said: 우유를, 당근을, and the amount when there is one.
    out = await call(ko_tools, "shopping_add", item="우유")
    assert out.text == "장보기 목록에 우유를 추가했어요."
    out = await call(ko_tools, "shopping_list")
    assert out.text == "장보기 목록에는 우유가 있어요."  # a sentence that ends with its verb, not "…있어요: 우유."
    out = await call(ko_tools, "shopping_add", item="당근")
    assert out.text == "장보기 목록에 당근을 추가했어요."
    out = await call(ko_tools, "shopping_add", item="계란", quantity="10개")
    assert out.text == "장보기 목록에 계란 10개를 추가했어요."
    out = await call(ko_tools, "shopping_add", item="두부", quantity="1모")
    assert out.text == "장보기 목록에 두부 1모를 추가했어요."
    assert out.data == {"item": "두부", "quantity": "1모", "added": True}
    out = await call(ko_tools, "shopping_list")
    assert out.text == "장보기 목록에 우유, 당근, 계란 10개, 두부 1모, 이렇게 4개가 있어요."
    assert out.data["items"][2] == {"item": "계란", "quantity": "10개"}


async def test_korean_add_again(ko_tools) -> None:
    await call(ko_tools, "shopping_add", item="우유")
    await call(ko_tools, "shopping_add", item="당근")
    out = await call(ko_tools, "shopping_add", item="우유")
    assert out.text == "우유는 이미 장보기 목록에 있어요."
    out = await call(ko_tools, "shopping_add", item="당근")
    assert out.text == "당근은 이미 장보기 목록에 있어요."
    # 으로 after a final consonant, 로 after a vowel or ㄹ (1 is read 일).
    out = await call(ko_tools, "shopping_add", item="우유", quantity="3병")
    assert out.text == "우유는 이미 목록에 있어요. 수량을 3병으로 바꿨어요."
    out = await call(ko_tools, "shopping_add", item="우유", quantity="2리터")
    assert out.text == "우유는 이미 목록에 있어요. 수량을 2리터로 바꿨어요."
    out = await call(ko_tools, "shopping_add", item="우유", quantity="1")
    assert out.text == "우유는 이미 목록에 있어요. 수량을 1로 바꿨어요."
    out = await call(ko_tools, "shopping_add", item="당근", quantity="3")
    assert out.text == "당근은 이미 목록에 있어요. 수량을 3으로 바꿨어요."
    assert out.data == {"item": "당근", "quantity": "3", "added": False}


async def test_korean_complete(ko_tools, store: ListStore) -> None:
    out = await call(ko_tools, "shopping_complete", item="우유")
    assert out.text == "우유는 목록에 없어요. 장보기 목록이 비어 있어요."
    assert out.data == {"error": "not_found", "item": "우유", "nearest": []}
    await call(ko_tools, "shopping_add", item="방울토마토")
    await call(ko_tools, "shopping_add", item="당근")
    out = await call(ko_tools, "shopping_complete", item="당근")
    assert out.text == "장보기 목록에서 당근을 지웠어요."
    assert out.data == {"item": "당근", "quantity": None, "remaining": 1}
    out = await call(ko_tools, "shopping_complete", item="토마토")
    assert out.text == "토마토는 목록에 없어요. 혹시 방울토마토 말씀이세요?"
    assert out.data["nearest"] == ["방울토마토"]
    out = await call(ko_tools, "shopping_complete", item="사과")
    assert out.text == "사과는 장보기 목록에 없어요."
    assert [e.item for e in store.items()] == ["방울토마토"]


async def test_korean_note(ko_tools, store: ListStore) -> None:
    out = await call(ko_tools, "note_add", text="화요일에 배관공 부르기")
    assert out.text == "메모했어요."
    assert out.data["text"] == "화요일에 배관공 부르기"
    assert [n.text for n in store.notes()] == ["화요일에 배관공 부르기"]
