"""From an event in the loop to its appearance on the companion page, in a real browser.

Scripted turns run through a real Assistant, the household's real stores, the live view and the
real web server (the rig in ``tests/page_harness.py``), while headless Chromium shows the page.
Each event the live view folds in is stamped on the server (``time.time()``, just before the live
view applies it); a MutationObserver put into the page from outside (the page carries no
measuring code) stamps ``Date.now()`` when text is added or changed in the document, and again at
the next animation frame (when it can be painted). The browser and the server share this machine's
clock. An event's latency is the first DOM change holding its text, minus its server stamp.

The events measured are the ones with words of their own: each partial transcript, the final
transcript and each unit spoken. Every turn's words carry tokens of their own (``k03w07``) so the
record of earlier turns on the page never matches a later turn's event.

Run it from the repository's root (it uses the test rig):

    python -m bench.page_latency --turns 16 --out bench/results/page-latency-<date>.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runner import git_commit

OBSERVER_JS = """
if (!window.__hearthSeen) {
  window.__hearthSeen = [];
  const cap = 50000;
  const keep = (t, text, frame) => { window.__hearthSeen.push({t: t, text: (text || '').slice(0, cap), frame: frame}); };
  new MutationObserver(records => {
    const t = Date.now();
    const texts = [];
    for (const r of records) {
      if (r.type === 'characterData') texts.push(r.target.textContent);
      else for (const n of r.addedNodes) texts.push(n.textContent);
    }
    const rows = texts.filter(x => x).map(x => ({t: t, text: x.slice(0, cap), frame: null}));
    window.__hearthSeen.push(...rows);
    requestAnimationFrame(() => { const f = Date.now(); for (const row of rows) row.frame = f; });
  }).observe(document.documentElement, {subtree: true, childList: true, characterData: true});
}
return true;
"""

TAKE_JS = "const s = window.__hearthSeen || []; window.__hearthSeen = []; return s;"


@dataclass(frozen=True)
class Seen:
    """Text that appeared in the page: when the DOM changed, and the next frame after (ms)."""

    t_ms: float
    frame_ms: float | None
    text: str


def turn_words(n: int, words: int = 12) -> str:
    return " ".join(f"k{n:02d}w{j:02d}" for j in range(1, words + 1)) + f" k{n:02d}end"


def turn_answer(n: int) -> str:
    return f"Answer a{n:02d}one comes first here. Then a{n:02d}two follows it along. And a{n:02d}three ends the turn."


def latencies(events: list[Any], seen: list[Seen]) -> list[dict[str, Any]]:
    """Each worded event's latency: the first appearance of its text on the page after its stamp."""
    from agent.events import TranscriptFinal, TranscriptPartial, UnitSpoken

    rows: list[dict[str, Any]] = []
    done: set[tuple[str, str]] = set()
    ordered = sorted(seen, key=lambda s: s.t_ms)
    for stamped in events:
        event = stamped.event
        if not isinstance(event, (TranscriptPartial, TranscriptFinal, UnitSpoken)) or not stamped.changed:
            continue
        text = event.text.strip()
        key = (type(event).__name__, text)
        if not text or key in done:
            continue
        done.add(key)
        # Every turn's words are its own, so the first DOM change holding the text is this event's
        # appearance; the second's slack only keeps a clock step from hiding one.
        first = next((s for s in ordered if s.t_ms >= stamped.t * 1000 - 1000 and text in s.text), None)
        rows.append({
            "event": type(event).__name__, "text": text, "server_t": round(stamped.t, 4),
            "dom_ms": None if first is None else round(first.t_ms - stamped.t * 1000, 1),
            "frame_ms": None if first is None or first.frame_ms is None else round(first.frame_ms - stamped.t * 1000, 1),
        })
    return rows


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"n": len(values), "median_ms": round(statistics.median(ordered), 1), "p90_ms": round(p90, 1),
            "max_ms": round(ordered[-1], 1), "min_ms": round(ordered[0], 1)}


def run(turns: int, folder: Path) -> dict[str, Any]:
    from tests.browser import chromium
    from tests.page_harness import Decision, PageRig, growing

    decisions = [Decision(f"k{n:02d}w01", turn_answer(n)) for n in range(1, turns + 1)]
    seen: list[Seen] = []
    with PageRig(folder, decisions=decisions, seconds_per_char=0.012) as rig, chromium() as driver:
        driver.get(rig.url)
        time.sleep(1.0)  # the page's first render and its live stream open
        driver.execute_script(OBSERVER_JS)
        first_event = len(rig.events)
        began = time.monotonic()
        for n in range(1, turns + 1):
            future = rig.say(growing(turn_words(n), speech_s=1.6, every_s=0.12))
            while not future.done():
                time.sleep(0.2)
                seen += [Seen(r["t"], r.get("frame"), r["text"]) for r in driver.execute_script(TAKE_JS)]
            future.result()
            time.sleep(0.3)
        time.sleep(0.5)
        seen += [Seen(r["t"], r.get("frame"), r["text"]) for r in driver.execute_script(TAKE_JS)]
        elapsed = time.monotonic() - began
        rows = latencies(rig.events[first_event:], seen)
    found = [r for r in rows if r["dom_ms"] is not None]
    by_kind: dict[str, Any] = {}
    for kind in sorted({r["event"] for r in rows}):
        by_kind[kind] = summary([r["dom_ms"] for r in found if r["event"] == kind])
    return {
        "turns": turns, "seconds": round(elapsed, 1), "events": len(rows), "never_seen": len(rows) - len(found),
        "dom": summary([r["dom_ms"] for r in found]),
        "frame": summary([r["frame_ms"] for r in found if r["frame_ms"] is not None]),
        "by_event": by_kind, "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path(f"bench/results/page-latency-{time.strftime('%Y-%m-%d')}.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hearth-page-") as tmp:
        result = run(args.turns, Path(tmp))
    report = {
        "what": "ms from the live view applying an event (server time.time()) to its text in the page's DOM "
                "(MutationObserver Date.now()), headless Chromium, scripted turns through the real assistant, stores and server",
        "command": f"python -m bench.page_latency --turns {args.turns} --out {args.out}",
        "commit": git_commit(),
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "python": sys.version.split()[0]},
        "target_ms": 100,
        **result,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("events", "never_seen", "dom", "frame", "by_event")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
