"""The companion page's HTTP side: reads from the real stores, changes through the tool executor,
and the guards (CSRF, token, loopback Host, static files only from the package)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from agent.live_view import LiveView
from agent.record import ConversationRecord, RecordEntry
from agent.results import Outcome, TurnResult
from agent.timeline import Timeline
from firmware_py.config import parse_config
from firmware_py.home_tools import HomeTools, open_home_tools
from firmware_py.web import PageSources, WebSettings, create_app
from firmware_py.web.security import SVG_POLICY

BASE = "http://127.0.0.1:8750"


@dataclass
class Results:
    """The assistant as the page sees it: its latest turns' results."""

    results: list[TurnResult] = field(default_factory=list)


@dataclass
class Rig:
    home: HomeTools
    record: ConversationRecord
    live: LiveView
    assistant: Results
    client: httpx.AsyncClient
    csrf: str
    app: Any = None

    async def close(self) -> None:
        await self.client.aclose()
        self.record.close()
        await self.home.close()

    async def post(self, path: str, body: object, **headers: str) -> httpx.Response:
        sent = {"X-CSRF-Token": self.csrf, "Origin": BASE, "Sec-Fetch-Site": "same-origin", **headers}
        return await self.client.post(path, json=body, headers={k: v for k, v in sent.items() if v})


async def open_rig(tmp_path: Path, language: str = "en", token: str | None = None, host: str = "127.0.0.1") -> tuple[Rig, object]:
    home = await open_home_tools(parse_config({"language": language, "tools": {"data_dir": str(tmp_path)}}))
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    live, assistant = LiveView(), Results()
    app = create_app(PageSources(live, home, record, assistant), WebSettings(host=host, token=token, language=language))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    return Rig(home, record, live, assistant, client, app.state.page.csrf, app), app


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    made, _app = await open_rig(tmp_path)
    try:
        yield made
    finally:
        await made.close()


async def test_the_state_is_read_from_the_stores_and_the_record(rig: Rig) -> None:
    rig.home.timers.start(300, "pasta")
    rig.home.lists.add("oat milk", "2 litres")
    rig.home.lists.add_note("the oven runs hot")
    turn = rig.record.begin_turn()
    rig.record.append([RecordEntry(turn, "user", "set a pasta timer", "heard"),
                       RecordEntry(turn, "assistant", "Pasta timer set for 5 minutes.", "spoken", "answer")])

    state = (await rig.client.get("/api/state")).json()

    assert [(t["label"], t["state"], t["duration_s"]) for t in state["kept"]["timers"]] == [("pasta", "running", 300)]
    assert 299 <= state["kept"]["timers"][0]["ends_at"] - state["t"] <= 300
    assert [(i["item"], i["quantity"]) for i in state["kept"]["list"]] == [("oat milk", "2 litres")]
    assert [n["text"] for n in state["kept"]["notes"]] == ["the oven runs hot"]
    assert [(e["role"], e["text"]) for e in state["kept"]["record"][0]["entries"]] == [
        ("user", "set a pasta timer"), ("assistant", "Pasta timer set for 5 minutes.")]
    assert state["live"]["state"] == "idle"


async def test_a_timer_cancelled_on_the_page_is_cancelled_in_the_store_by_the_timer_tool(rig: Rig) -> None:
    first = rig.home.timers.start(60)
    pasta = rig.home.timers.start(300, "pasta")
    unnamed = rig.home.timers.start(60)

    answer = await rig.post("/api/timers/cancel", {"id": first.id})

    assert answer.status_code == 200, answer.text
    assert answer.json() == {"ok": True, "text": "1 minute timer cancelled."}
    assert sorted(t.id for t in rig.home.timers.active()) == [pasta.id, unnamed.id]
    answer = await rig.post("/api/timers/cancel", {"id": pasta.id})
    assert answer.json() == {"ok": True, "text": "Pasta timer cancelled."}
    assert [t.id for t in rig.home.timers.active()] == [unnamed.id]
    # The change is on record as a turn of its own, made on the page.
    tools = [e for e in rig.record.entries() if e.role == "tool"]
    assert [(e.text, e.status, e.data["origin"]) for e in tools] == [
        ("timer_cancel", "started", "page"), ("timer_cancel", "ok", "page")] * 2
    assert [e.status for e in rig.record.entries() if e.role == "turn"] == ["page", "page"]


async def test_an_item_added_and_ticked_off_on_the_page_is_what_the_list_tool_reads_aloud(rig: Rig) -> None:
    rig.home.lists.add("eggs")

    added = await rig.post("/api/list/add", {"item": "flour"})
    assert added.json() == {"ok": True, "text": "Added flour to the shopping list."}
    ticked = await rig.post("/api/list/complete", {"item": "eggs"})
    assert ticked.json() == {"ok": True, "text": "Ticked eggs off the list."}

    spoken = await rig.home.executor.call("shopping_list", {})
    assert spoken.output is not None
    assert "flour" in spoken.output.text and "eggs" not in spoken.output.text
    assert [e.item for e in rig.home.lists.items()] == ["flour"]


async def test_a_tick_for_an_item_not_on_the_list_answers_with_the_tools_words_and_changes_nothing(rig: Rig) -> None:
    rig.home.lists.add("eggs")
    answer = await rig.post("/api/list/complete", {"item": "bread"})
    assert answer.status_code == 409
    assert answer.json()["ok"] is False and "bread" in answer.json()["text"]
    assert [e.item for e in rig.home.lists.items()] == ["eggs"]


@pytest.mark.parametrize(("path", "body", "status", "says"), [
    ("/api/list/add", {"item": ""}, 422, "item"),
    ("/api/list/add", {"item": "x" * 500}, 422, "item"),
    ("/api/list/add", {"item": "x" * 20_000}, 413, "at most"),
    ("/api/list/add", ["milk"], 400, "JSON object"),
    ("/api/timers/cancel", {"id": "one"}, 422, "id"),
    ("/api/timers/cancel", {"id": 999}, 404, "not running"),
])
async def test_bad_changes_get_a_one_line_4xx_and_the_page_keeps_serving(rig: Rig, path: str, body: object, status: int, says: str) -> None:
    answer = await rig.post(path, body)
    assert answer.status_code == status
    text = answer.json()["text"] if answer.headers["content-type"].startswith("application/json") else answer.text
    assert says in text and text.strip().count("\n") == 0
    assert rig.home.lists.items() == []
    assert (await rig.client.get("/api/state")).status_code == 200


async def test_a_body_that_is_not_json_is_refused(rig: Rig) -> None:
    answer = await rig.client.post("/api/list/add", content=b"{nope", headers={
        "Content-Type": "application/json", "X-CSRF-Token": rig.csrf})
    assert answer.status_code == 400 and "not JSON" in answer.text


@pytest.mark.parametrize(("change", "status"), [
    ({"X-CSRF-Token": ""}, 403),
    ({"X-CSRF-Token": "guessed"}, 403),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "http://127.0.0.1:9999"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Site": "same-site"}, 403),
])
async def test_changes_from_another_site_are_refused_and_change_nothing(rig: Rig, change: dict[str, str], status: int) -> None:
    timer = rig.home.timers.start(60, "tea")
    rig.home.lists.add("eggs")
    for path, body in (("/api/timers/cancel", {"id": timer.id}), ("/api/list/complete", {"item": "eggs"}),
                       ("/api/list/add", {"item": "fifty eggs"})):
        answer = await rig.post(path, body, **change)
        assert answer.status_code == status, (path, change)
    assert [t.label for t in rig.home.timers.active()] == ["tea"]
    assert [e.item for e in rig.home.lists.items()] == ["eggs"]
    assert not [e for e in rig.record.entries() if e.role == "tool"]


async def test_a_form_post_and_a_get_cannot_change_anything(rig: Rig) -> None:
    rig.home.lists.add("eggs")
    form = await rig.client.post("/api/list/complete", data={"item": "eggs"},
                                 headers={"X-CSRF-Token": rig.csrf, "Origin": BASE})
    assert form.status_code == 415
    got = await rig.client.get("/api/list/complete", params={"item": "eggs"})
    assert got.status_code == 405 and got.headers["allow"] == "POST"
    assert [e.item for e in rig.home.lists.items()] == ["eggs"]


async def test_the_page_carries_its_csrf_token_and_security_headers(rig: Rig) -> None:
    page = await rig.client.get("/")
    assert page.status_code == 200
    assert f'<meta name="csrf-token" content="{rig.csrf}">' in page.text
    assert '<html lang="en">' in page.text
    for answer in (page, await rig.client.get("/static/page.js"), await rig.client.get("/static/nothing.js")):
        assert "default-src 'self'" in answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"


async def test_a_korean_household_gets_a_korean_page_and_korean_answers(tmp_path: Path) -> None:
    made, _app = await open_rig(tmp_path, language="ko")
    try:
        page = await made.client.get("/")
        assert '<html lang="ko">' in page.text
        assert "장보기 목록" in page.text and "타이머" in page.text
        labels = json.loads(page.text.split('id="labels">', 1)[1].split("</script>", 1)[0])
        assert labels["cancel"] == "취소"
        answer = await made.post("/api/list/add", {"item": "우유"})
        assert answer.json() == {"ok": True, "text": "장보기 목록에 우유를 추가했어요."}
        state = (await made.client.get("/api/state")).json()
        assert [i["item"] for i in state["kept"]["list"]] == ["우유"]
    finally:
        await made.close()


async def test_only_loopback_host_names_are_answered_without_a_token(rig: Rig) -> None:
    for host in ("127.0.0.1:8750", "localhost:8750", "[::1]:8750"):
        assert (await rig.client.get("/api/state", headers={"Host": host})).status_code == 200, host
    # A name of someone else's pointed at 127.0.0.1 (DNS rebinding) is not this page.
    refused = await rig.client.get("/api/state", headers={"Host": "evil.example:8750"})
    assert refused.status_code == 403 and "loopback" in refused.text


def test_a_bind_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="without a token"):
        create_app(None, WebSettings(host="0.0.0.0"))  # type: ignore[arg-type] - refused before it is read
    with pytest.raises(ValueError, match="without a token"):
        create_app(None, WebSettings(host="192.168.1.20", token=""))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="without a token"):
        create_app(None, WebSettings(host="0.0.0.0", token=" " * 16))  # type: ignore[arg-type]


async def test_with_a_token_every_request_needs_it_by_header_or_the_cookie_the_link_sets(tmp_path: Path) -> None:
    made, _app = await open_rig(tmp_path, token="kitchen-secret", host="0.0.0.0")
    client = made.client
    try:
        for path in ("/", "/api/state", "/static/page.js", "/api/events"):
            refused = await client.get(path)
            assert refused.status_code == 401, path
        assert (await client.get("/", params={"token": "wrong"})).status_code == 401
        assert (await client.get("/api/state", headers={"Authorization": "Bearer wrong"})).status_code == 401
        assert (await client.get("/api/state", headers={"Authorization": "Bearer kitchen-secret"})).status_code == 200
        assert (await client.get("/api/state", headers={"X-Hearth-Token": "kitchen-secret"})).status_code == 200
        # A change needs the token as well as the CSRF token.
        refused = await made.post("/api/list/add", {"item": "milk"})
        assert refused.status_code == 401 and made.home.lists.items() == []

        link = await client.get("/", params={"token": "kitchen-secret"})
        assert link.status_code == 303 and link.headers["location"] == "/"
        cookie = link.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert (await client.get("/")).status_code == 200  # the client kept the cookie
        assert (await made.post("/api/list/add", {"item": "milk"})).json()["ok"] is True
        assert [e.item for e in made.home.lists.items()] == ["milk"]
    finally:
        await made.close()


def _timeline() -> Timeline:
    timeline = Timeline(origin=0.0)
    for name, t, detail in (("speech_start", 0.2, {}), ("speech_end", 1.0, {}),
                            ("final_transcript", 1.2, {"text": "파스타 타이머 맞춰 줘"}), ("llm_start", 1.21, {}),
                            ("first_token", 1.5, {}), ("tts_start", 1.6, {"unit": 0, "text": "네.", "kind": "answer"}),
                            ("tts_end", 1.7, {"unit": 0}), ("unit_audio_out", 1.75, {"unit": 0}),
                            ("first_audio_out", 1.75, {}), ("playback_end", 2.3, {})):
        timeline.mark(name, at=t, **detail)
    return timeline


async def test_each_turns_timeline_is_drawn_as_the_benchs_chart(rig: Rig) -> None:
    rig.assistant.results.append(TurnResult(Outcome.ANSWERED, _timeline(), transcript="파스타 타이머 맞춰 줘", reply="네."))

    turns = (await rig.client.get("/api/turns")).json()
    assert turns == [{"n": 1, "turn": None, "transcript": "파스타 타이머 맞춰 줘", "outcome": "answered"}]
    picture = await rig.client.get("/api/turns/1/timeline.svg")
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/svg+xml"
    assert picture.headers["content-security-policy"] == SVG_POLICY
    svg = ElementTree.fromstring(picture.text)
    texts = " ".join(node.text or "" for node in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "파스타 타이머 맞춰 줘" in texts and "Noto Sans CJK KR" in picture.text
    assert (await rig.client.get("/api/turns/2/timeline.svg")).status_code == 404

    # Numbers stay with their turn as the assistant's bounded results move on.
    rig.assistant.results.append(TurnResult(Outcome.NO_SPEECH, Timeline(origin=0.0)))
    del rig.assistant.results[0]
    assert [t["n"] for t in (await rig.client.get("/api/turns")).json()] == [1, 2]
    assert (await rig.client.get("/api/turns/2/timeline.svg")).status_code == 200


def test_the_record_reads_its_latest_turns(tmp_path: Path) -> None:
    record = ConversationRecord.open(tmp_path / "record.sqlite3")
    try:
        assert record.recent(3) == []
        for words in ("one", "two", "three", "four"):
            turn = record.begin_turn()
            record.append([RecordEntry(turn, "user", words, "heard"), RecordEntry(turn, "turn", "", "answered")])
        recent = record.recent(2)
        assert [(e.turn, e.role, e.text) for e in recent] == [(3, "user", "three"), (3, "turn", ""), (4, "user", "four"), (4, "turn", "")]
        assert record.recent(0) == []
    finally:
        record.close()


def test_every_word_on_the_page_has_a_korean_one_and_every_label_in_the_page_exists() -> None:
    from firmware_py.web.app import STATIC_DIR
    from firmware_py.web.labels import LABELS

    assert LABELS["ko"].keys() == LABELS["en"].keys()
    used = set(re.findall(r"\{\{t:([a-z_]+)\}\}", (STATIC_DIR / "index.html").read_text(encoding="utf-8")))
    assert used and used <= LABELS["en"].keys()


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


async def test_words_from_the_page_lose_control_and_bidi_characters_before_the_tools_keep_them(rig: Rig) -> None:
    added = await rig.post("/api/list/add", {"item": "eggs\u001b[31mRED", "quantity": "2\u202e1"})
    assert added.json() == {"ok": True, "text": "Added 21 eggs[31mRED to the shopping list."}
    added = await rig.post("/api/list/add", {"item": "milk\u202eevil\n"})
    assert added.json()["ok"] is True
    assert [(e.item, e.quantity) for e in rig.home.lists.items()] == [("eggs[31mRED", "21"), ("milkevil", None)]
    # What is ticked off is matched as cleaned too: the words sent as first typed still find the item.
    ticked = await rig.post("/api/list/complete", {"item": "eggs\u001b[31mRED"})
    assert ticked.json() == {"ok": True, "text": "Ticked eggs[31mRED off the list."}
    # Nothing but control characters is no item at all.
    blank = await rig.post("/api/list/add", {"item": "\u202e\x1b\x07"})
    assert blank.status_code == 422 and "item" in blank.json()["text"]
    assert [e.item for e in rig.home.lists.items()] == ["milkevil"]
    kept = json.dumps([(e.text, e.data) for e in rig.record.entries()], ensure_ascii=False)
    assert "RED" in kept and not _CONTROLS.search(kept), kept


@pytest.mark.parametrize("path", ["/api/list/add", "/api/list/complete", "/api/timers/cancel"])
@pytest.mark.parametrize("body", ["[" * 5000, '{"item": ' + "[" * 5000 + "1" + "]" * 5000 + "}"])
async def test_a_body_nested_thousands_deep_gets_a_one_line_400_and_one_log_line(
        rig: Rig, path: str, body: str, caplog: pytest.LogCaptureFixture) -> None:
    rig.home.lists.add("eggs")
    with caplog.at_level("INFO"):
        answer = await rig.client.post(path, content=body.encode(), headers={
            "Content-Type": "application/json", "X-CSRF-Token": rig.csrf, "Origin": BASE, "Sec-Fetch-Site": "same-origin"})
    assert answer.status_code == 400, answer.text
    assert "nested" in answer.text and answer.text.strip().count("\n") == 0
    lines = [r for r in caplog.records if r.name.startswith("firmware_py.web")]
    assert len(lines) == 1 and lines[0].exc_info is None and "\n" not in lines[0].getMessage(), lines
    assert [e.item for e in rig.home.lists.items()] == ["eggs"]
    assert (await rig.client.get("/api/state")).status_code == 200


async def test_the_page_claims_nothing_until_its_first_state_arrives(rig: Rig) -> None:
    rig.home.timers.start(300, "rice")
    for n in range(16):
        rig.home.lists.add(f"item {n}")
    page = (await rig.client.get("/")).text
    # Served before any state: what the stores hold comes only with the live feed, so the page says
    # it is connecting and shows no "empty" line, no idle state and no "answered by" yet.
    for empty in ("timers-empty", "list-empty", "notes-empty", "record-empty", "timeline-empty"):
        tag = re.search(rf'<p id="{empty}"[^>]*>', page)
        assert tag is not None and " hidden" in tag.group(0), (empty, tag)
    answered = re.search(r'<p id="answered"[^>]*>', page)
    assert answered is not None and " hidden" in answered.group(0)
    connection = re.search(r'<span id="connection"[^>]*>([^<]*)<', page)
    assert connection is not None and 'data-state="connecting"' in connection.group(0) and connection.group(1) == "connecting…"
    assert "idle" not in re.search(r'<span id="state"[^>]*>[^<]*<', page).group(0)  # type: ignore[union-attr]
