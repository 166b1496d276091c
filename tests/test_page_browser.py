"""The companion page in a real browser, while scripted turns run through the real assistant.

Headless Chromium (Debian's, through Selenium) opens the page served by the real web server over a
real Assistant, the household's real SQLite stores, the conversation record and the live view (the
rig in ``bench/loop/page_rig.py``; only the models are scripted, with real timing). What the page
shows is read from its DOM; what the page changes is checked in the stores and in what the speaker
says next. Each run leaves screenshots under ``out/``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent.events import ToolCalled
from bench.loop.browser import PHONE, chromium, save_screenshot, wait_for
from bench.loop.page_rig import ENGLISH_DECISIONS, PageRig, Utterance, growing

pytestmark = pytest.mark.browser

OUT = Path(__file__).resolve().parent.parent / "out"

# Records every change of what is heard and said, as the page shows it, with the browser's clock.
WATCH_JS = """
window.__watched = [];
const look = () => ({
  t: Date.now(),
  heard: document.getElementById('heard').textContent,
  units: Array.from(document.querySelectorAll('#units li.unit')).map(li => li.firstChild ? li.firstChild.textContent : ''),
});
window.__watched.push(look());
new MutationObserver(() => window.__watched.push(look()))
  .observe(document.getElementById('live'), {subtree: true, childList: true, characterData: true});
return true;
"""

# Whether the page's own font draws Hangul as Hangul: two different syllables must come out as
# different ink, and unlike the box an unassigned code point gets.
HANGUL_INK_JS = """
const font = getComputedStyle(document.querySelector('h2')).fontFamily;
const canvas = document.createElement('canvas');
canvas.width = 120; canvas.height = 60;
const g = canvas.getContext('2d');
const ink = (s) => {
  g.clearRect(0, 0, 120, 60); g.font = '40px ' + font; g.fillText(s, 5, 48);
  const d = g.getImageData(0, 0, 120, 60).data; let h = 0, n = 0;
  for (let i = 3; i < d.length; i += 4) { h = (h * 31 + d[i]) | 0; n += d[i] > 0 ? 1 : 0; }
  return [h, n];
};
return {font: font, ta: ink('타'), ga: ink('가'), none: ink('\\u0378')};
"""


@contextmanager
def page(tmp_path: Path, language: str = "en", window: tuple[int, int] | None = None,
         before: Any = None) -> Iterator[tuple[PageRig, Any]]:
    """The rig started, ``before(home)`` run on its loop, and the page open in Chromium."""
    with PageRig(tmp_path, language=language) as rig:
        if before is not None:
            rig.on_loop(before)
        with chromium(**({"window": window} if window else {}), language=language) as driver:
            driver.get(rig.url)
            wait_for(lambda: driver.find_element("id", "connection").get_attribute("data-state") == "open",
                     what="the page's live stream to open")
            yield rig, driver


def clock_s(text: str) -> int:
    """Seconds from the page's countdown ("4:58" or "1:02:03")."""
    parts = [int(p) for p in re.fullmatch(r"\d+(?::\d\d){1,2}", text.strip()).group(0).split(":")]  # type: ignore[union-attr]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    return seconds


def first_seen(watched: list[dict[str, Any]], test) -> float | None:
    return next((w["t"] / 1000 for w in watched if test(w)), None)


def spoken_and_read(rig: PageRig, since: int) -> tuple[str, list[dict[str, Any]]]:
    """What the speaker said after ``rig.events[since]``, and the data of the list reads made then."""
    said = " ".join(rig.spoken_since(since))
    reads = [s.event.data for s in rig.events[since:] if isinstance(s.event, ToolCalled) and s.event.name == "shopping_list"]
    return said, reads


def _a_kitchen_in_use(home: Any) -> None:
    home.timers.start(600, "rice")
    home.lists.add("milk")
    home.lists.add("eggs", "6")
    home.lists.add_note("The oven runs hot: 10 degrees lower")


def test_the_partial_transcript_and_then_each_unit_appear_in_order_while_the_turn_runs(tmp_path: Path) -> None:
    # A reply of several units: a recipe read aloud (its name, servings, ingredients), a command of hearth's own.
    utterance = growing("read me the banana bread recipe", speech_s=1.8, every_s=0.3)
    with PageRig(tmp_path, decisions=list(ENGLISH_DECISIONS)) as rig, chromium(window=(1280, 1800)) as driver:
        rig.on_loop(_a_kitchen_in_use)  # so the screenshot shows what is kept beside the turn
        driver.get(rig.url)
        wait_for(lambda: driver.find_element("id", "connection").get_attribute("data-state") == "open", what="the live stream")
        rig.say(growing("set a timer for five minutes for the pasta")).result(30)  # a turn before, for its timeline
        wait_for(lambda: driver.find_element("id", "timeline").get_attribute("src"), what="the last turn's timeline")
        driver.execute_script(WATCH_JS)
        first_event = len(rig.events)
        turn = rig.say(utterance)
        shot = None
        while not turn.done():
            if shot is None and "Banana" in driver.find_element("id", "units").text:
                shot = save_screenshot(driver, OUT / "page-mid-turn.png")  # a unit said, the turn still going
            time.sleep(0.05)
        result = turn.result()
        time.sleep(0.3)
        watched: list[dict[str, Any]] = driver.execute_script("return window.__watched;")

    partials = [p for _, p in utterance.partials]
    assert result.transcript == utterance.final and len(result.spoken) >= 2, result.spoken
    assert shot is not None and shot.stat().st_size > 10_000, "no screenshot was taken while a unit was on the page"
    # What the heard line showed, change by change: every partial in the order said, then the final words.
    heard = [w["heard"] for w in watched]
    shown = [h for i, h in enumerate(heard) if h and (i == 0 or h != heard[i - 1]) and h in (*partials, utterance.final)]
    assert shown == [*partials, utterance.final], shown
    # The units: each appears on its own, in the order spoken, after the final words were shown.
    final_at = first_seen(watched, lambda w: w["heard"] == utterance.final)
    unit_at = [first_seen(watched, lambda w, n=n: w["units"][:n] == result.spoken[:n]) for n in range(1, len(result.spoken) + 1)]
    assert watched[-1]["units"] == result.spoken
    assert final_at is not None and all(t is not None for t in unit_at), unit_at
    assert final_at <= unit_at[0] and all(a < b for a, b in zip(unit_at, unit_at[1:])), (final_at, unit_at)
    # Seen on the page as the server applied them, not all at the end: partials before the final.
    partial_at = [first_seen(watched, lambda w, p=p: w["heard"] == p) for p in partials]
    assert all(a < b for a, b in zip(partial_at, partial_at[1:])) and partial_at[-1] < final_at
    stamps = [s.t for s in rig.events[first_event:] if type(s.event).__name__ == "UnitSpoken"]
    assert len(stamps) == len(unit_at) and unit_at[0] < stamps[-1] + 0.001  # the first unit showed before the last was said


def _timer_row(driver: Any, name: str) -> Any:
    """The timer row named ``name``, found afresh (a row kept across a re-render is stale), or None."""
    for li in driver.find_elements("css selector", "#timers li.timer"):
        if li.find_element("css selector", ".name").text == name:
            return li
    return None


def _timer_remaining(driver: Any, name: str) -> str:
    row = _timer_row(driver, name)
    return "" if row is None else str(row.find_element("css selector", ".remaining").text)


def _cancel_timer(driver: Any, name: str) -> bool:
    row = _timer_row(driver, name)
    if row is not None:
        row.find_element("css selector", "button.cancel").click()
    return row is not None


def test_a_timer_started_by_voice_counts_down_and_cancel_on_the_page_stops_it_in_the_store(tmp_path: Path) -> None:
    with page(tmp_path) as (rig, driver):
        result = rig.say(growing("set a timer for five minutes for the pasta")).result(30)
        assert result.spoken == ["Pasta timer set for 5 minutes."]
        first = clock_s(wait_for(lambda: _timer_remaining(driver, "pasta"), what="the pasta timer on the page"))
        time.sleep(1.3)
        second = clock_s(wait_for(lambda: _timer_remaining(driver, "pasta"), what="the pasta timer"))
        assert 290 <= second < first <= 300, (first, second)  # counting down, from five minutes
        assert [t.label for t in rig.on_loop(lambda home: home.timers.active())] == ["pasta"]

        wait_for(lambda: _cancel_timer(driver, "pasta"), what="the pasta timer's cancel button")
        wait_for(lambda: rig.on_loop(lambda home: home.timers.active()) == [], what="the timer gone from the store")
        wait_for(lambda: not driver.find_elements("css selector", "#timers li.timer"), what="the timer gone from the page")
        said = driver.find_element("id", "said")
        assert said.get_attribute("data-ok") == "true" and "pasta" in said.text.lower(), said.text
        save_screenshot(driver, OUT / "page-timer-cancelled.png")


def _three_items(home: Any) -> None:
    for item in ("milk", "eggs", "flour"):
        home.lists.add(item)


def test_an_item_ticked_off_on_the_page_is_gone_when_the_list_is_read_aloud(tmp_path: Path) -> None:
    with page(tmp_path, before=_three_items) as (rig, driver):
        wait_for(lambda: len(driver.find_elements("css selector", "#list li.item")) == 3, what="three items on the page")
        driver.find_element("css selector", '#list li.item[data-item="eggs"] button.tick').click()
        wait_for(lambda: "eggs" not in [e.item for e in rig.on_loop(lambda home: home.lists.items())], what="eggs ticked off in the store")
        wait_for(lambda: not driver.find_elements("css selector", '#list li.item[data-item="eggs"]'), what="eggs gone from the page")

        since = len(rig.events)
        rig.say(growing("what's on my shopping list")).result(30)
        said, reads = spoken_and_read(rig, since)
        assert "milk" in said and "flour" in said and "eggs" not in said, said
        assert [[i["item"] for i in read["items"]] for read in reads] == [["milk", "flour"]]


def test_an_item_added_on_the_page_is_in_what_the_speaker_says_next(tmp_path: Path) -> None:
    with page(tmp_path) as (rig, driver):
        box = driver.find_element("id", "add-item")
        box.send_keys("saffron")
        driver.find_element("id", "add-button").click()
        wait_for(lambda: [e.item for e in rig.on_loop(lambda home: home.lists.items())] == ["saffron"], what="saffron in the store")
        wait_for(lambda: driver.find_elements("css selector", '#list li.item[data-item="saffron"]'), what="saffron on the page")
        assert box.get_attribute("value") == ""

        since = len(rig.events)
        rig.say(growing("what's on my shopping list")).result(30)
        said, reads = spoken_and_read(rig, since)
        assert "saffron" in said, said
        assert [[i["item"] for i in read["items"]] for read in reads] == [["saffron"]]
        record = rig.on_loop(lambda _home: rig.record.recent(8))  # type: ignore[union-attr]
        assert any(e.role == "tool" and e.text == "shopping_add" and e.data.get("origin") == "page" for e in record)


def test_the_page_in_korean_on_a_phone_is_legible_and_shows_a_spoken_timer(tmp_path: Path) -> None:
    with page(tmp_path, language="ko", window=PHONE) as (rig, driver):
        turn = rig.say(Utterance("파스타 타이머 오 분 맞춰 줘", ((0.4, "파스타"), (0.8, "파스타 타이머"), (1.2, "파스타 타이머 오 분"))))
        wait_for(lambda: driver.find_elements("css selector", "#timers li.timer"), timeout_s=15, what="the timer on the page")
        save_screenshot(driver, OUT / "page-ko-phone.png")  # the answer being said
        result = turn.result(30)
        assert result.transcript == "파스타 타이머 오 분 맞춰 줘"
        wait_for(lambda: [li.find_element("css selector", ".name").text for li in driver.find_elements("css selector", "#timers li.timer")] == ["파스타"],
                 what="the 파스타 timer on the page")

        headings = [h.text for h in driver.find_elements("css selector", "h2")]
        assert "타이머" in headings and "장보기 목록" in headings, headings
        assert driver.find_element("css selector", "#timers button.cancel").text == "취소"
        assert driver.find_element("id", "heard").text == "파스타 타이머 오 분 맞춰 줘"
        # Legible on a phone: nothing wider than the screen, so no sideways scrolling.
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth];")
        assert width[0] <= width[1] <= PHONE[0], width
        ink = driver.execute_script(HANGUL_INK_JS)
        assert ink["ta"][1] > 50 and ink["ta"] != ink["ga"] and ink["ta"] != ink["none"], ink  # Hangul drawn as Hangul, not boxes


# The live unit that names the milk, and whether its badge still comes after its words on screen.
BIDI_JS = """
const controls = /[\\u0000-\\u0008\\u000b\\u000e-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/;
const li = Array.from(document.querySelectorAll('#units li.unit')).find(li => li.textContent.includes('milk'));
const words = document.createRange();
words.selectNodeContents(li.firstChild);
const badge = li.querySelector('.badge');
return {
  unit: li.textContent, item: document.querySelector('#list li.item .what').textContent,
  controls: controls.test(document.querySelector('main').textContent),
  words_right: words.getBoundingClientRect().right, badge_left: badge.getBoundingClientRect().left,
  label: document.getElementById('heard-label').textContent,
  badges: Array.from(document.querySelectorAll('#units li.unit .badge')).map(b => b.textContent),
};
"""


def _a_list_kept_raw(home: Any) -> None:
    # As if stored before the page cleaned its words: the override is in the store already.
    home.lists.add("milk\u202eevil", "2")
    home.lists.add("eggs")


def test_a_text_turn_shows_as_text_and_a_stored_bidi_override_reorders_nothing_around_it(tmp_path: Path) -> None:
    from agent.text_turns import TextTurns

    with page(tmp_path, before=_a_list_kept_raw) as (rig, driver):

        async def ask(words: str) -> list[str]:
            return [unit async for unit in TextTurns(rig.assistant).answer_text(words)]  # type: ignore[arg-type]

        units = rig.run(ask("what's on my shopping list"), 30)
        assert any("milk" in unit for unit in units), units
        wait_for(lambda: "milk" in driver.find_element("id", "units").text, what="the answer on the page")
        # The record shows the turn as it happened: words sent as text, units sent back, not heard or spoken.
        wait_for(lambda: "what's on my shopping list" in driver.find_element("id", "record").text, what="the turn in the record")
        record_badges = [b.text for b in driver.find_elements("css selector", "#record .badge")]
        shown = driver.execute_script(BIDI_JS)
        save_screenshot(driver, OUT / "page-text-turn.png")

    assert not shown["controls"], shown  # no override or escape reaches the page's text
    assert "milk" in shown["item"] and "evil" in shown["item"], shown
    assert shown["badge_left"] >= shown["words_right"] - 1, shown  # the badge still follows the words
    assert shown["label"] == "Text from Home Assistant", shown  # not "Heard": nothing was heard in the kitchen
    assert shown["badges"] and set(shown["badges"]) == {"sent"}, shown
    assert record_badges and set(record_badges) == {"sent"}, record_badges  # not "told", "heard" or "typed"


def _sixteen_items_and_a_timer(home: Any) -> None:
    home.timers.start(600, "rice")
    for n in range(16):
        home.lists.add(f"item {n + 1}")


NO_CLAIMS = ("No timers running", "The list is empty", "Nothing said yet", "No notes", "Answered by", "idle")


def test_a_page_refused_its_feed_says_why_and_claims_nothing_until_its_first_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_py.web import app as web_app

    monkeypatch.setattr(web_app, "MAX_PAGES", 0)  # as if 32 pages were open already
    with PageRig(tmp_path) as rig, chromium() as driver:
        rig.on_loop(_sixteen_items_and_a_timer)
        driver.get(rig.url)
        wait_for(lambda: driver.find_element("id", "connection").get_attribute("data-state") == "refused",
                 what="the page to say it was refused")
        reason = driver.find_element("id", "refused")
        assert "pages are open already" in reason.text, reason.text
        shown = driver.execute_script("return document.body.innerText;")
        assert not [claim for claim in NO_CLAIMS if claim in shown], shown

        monkeypatch.setattr(web_app, "MAX_PAGES", 32)  # room again: the page tries again by itself
        wait_for(lambda: len(driver.find_elements("css selector", "#list li.item")) == 16, timeout_s=15,
                 what="the sixteen items once the feed is open")
        wait_for(lambda: _timer_row(driver, "rice"), what="the rice timer")
        assert driver.find_element("id", "connection").get_attribute("data-state") == "open"
        assert not driver.find_element("id", "refused").is_displayed()
        shown = driver.execute_script("return document.body.innerText;")
        assert "No notes." in shown and "The list is empty" not in shown and "No timers running" not in shown, shown
        assert "Answered by" not in shown, shown  # no turn yet: nobody has answered anything
