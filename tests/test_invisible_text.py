"""Invisible characters: taken out where words come in, and kept out of what goes back to Home Assistant."""

from __future__ import annotations

import re
from pathlib import Path

from wyoming.asr import Transcript
from wyoming.handle import Handled, HandledChunk

from firmware_py.wyoming import offer_from
from tests.test_web_page import open_rig
from tests.wyoming_kit import ScriptedAnswers, client, read_until, serving

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\U000e0000-\U000e007f]")


async def test_an_item_added_on_the_page_with_a_bom_is_the_item_everyone_sees(tmp_path: Path) -> None:
    rig, _app = await open_rig(tmp_path)
    try:
        added = await rig.post("/api/list/add", {"item": "\ufeffcumin", "quantity": "2\u200b"})
        assert added.status_code == 200 and added.json()["text"] == "Added 2 cumin to the shopping list."
        assert [(e.item, e.quantity) for e in rig.home.lists.items()] == [("cumin", "2")]
        # Ticked off as typed plainly, it is found: there is one "cumin", not two that look alike.
        ticked = await rig.post("/api/list/complete", {"item": "cumin"})
        assert ticked.json()["ok"] is True and rig.home.lists.items() == []
    finally:
        await rig.close()


async def test_text_stored_raw_goes_to_home_assistant_cleaned() -> None:
    # An older record or list item kept before the cleaning, read back in a reply.
    units = ["On the list: \ufeffcumin, ", "\x1b[2Jmilk\u202eevil."]
    answers = ScriptedAnswers(units)
    async with serving(offer_from(answers=answers, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("what's on my list?").event())
            got = await read_until(c, "handled-stop")
    chunks = [HandledChunk.from_event(e).text for e in got if e.type == "handled-chunk"]
    whole = Handled.from_event(next(e for e in got if e.type == "handled")).text
    assert chunks == ["On the list: cumin, ", "[2Jmilkevil."]
    assert whole == "On the list: cumin, [2Jmilkevil."
    assert not _HIDDEN.search(whole + "".join(chunks))


def test_the_page_escapes_the_invisible_characters_older_records_may_hold() -> None:
    from firmware_py.safe_text import printable
    from firmware_py.web.app import STATIC_DIR

    script = (STATIC_DIR / "page.js").read_text(encoding="utf-8")
    found = re.search(r"const UNSAFE = /(\[[^\]]+\])/g;", script)
    assert found, "page.js no longer has its UNSAFE class"
    unsafe = re.compile(found.group(1))  # the JS class's \uXXXX escapes read the same in Python
    for ch in "\ufeff\u200b\u200c\u2060\u00ad\u180e\u3164\x1b\u202e":
        assert unsafe.fullmatch(ch) and printable(ch) != ch, repr(ch)
    assert not unsafe.search("👩\u200d🍳 우유 café")
