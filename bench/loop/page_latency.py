"""From an event in the loop to its appearance on the companion page, in a real browser.

Scripted turns run through a real Assistant, the household's real stores, the live view and the
real web server (the rig in ``bench/loop/page_rig.py``), while headless Chromium shows the page.
Each event the live view folds in is stamped on the server (``time.time()``, just before the live
view applies it); a MutationObserver put into the page from outside (the page carries no
measuring code) stamps ``Date.now()`` when text is added or changed in the document, and again at
the next animation frame (when it can be painted). The browser and the server share this machine's
clock. An event's latency is the first DOM change in the page's live section holding its text after
its stamp, minus the stamp.

The events measured are the ones with words of their own: each partial transcript, the final
transcript and each unit spoken. Every turn's words carry tokens of their own (``k03w07``) so the
record of earlier turns on the page never matches a later turn's event.

Run it from the repository's root:

    python -m bench.loop.page_latency --turns 16 --out bench/results/page-latency-<date>.json
    python -m bench.loop.page_latency --real --rounds 4 --out bench/results/page-latency-real-<date>.json

``--real`` runs hearth's own loop with the real models (``bench/loop/live_loop.py``) on the recorded
English requests instead of the scripted turns: the same measure while Whisper, the talker and the
voice load the machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from bench.provenance import written_by

OBSERVER_JS = """
if (!window.__hearthSeen) {
  window.__hearthSeen = [];
  const cap = 50000;
  const now = () => performance.timeOrigin + performance.now();  // ms since the epoch, finer than Date.now()
  new MutationObserver(records => {
    const t = now();
    const texts = [];
    for (const r of records) {
      if (r.type === 'characterData') texts.push(r.target.textContent);
      else for (const n of r.addedNodes) texts.push(n.textContent);
    }
    const rows = texts.filter(x => x).map(x => ({t: t, text: x.slice(0, cap), frame: null}));
    window.__hearthSeen.push(...rows);
    requestAnimationFrame(() => { const f = now(); for (const row of rows) row.frame = f; });
  }).observe(document.getElementById('live'), {subtree: true, childList: true, characterData: true});
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
    from agent.events import State, StateChanged, TranscriptFinal, TranscriptPartial, UnitSpoken

    rows: list[dict[str, Any]] = []
    done: set[tuple[str, str]] = set()
    ordered = sorted(seen, key=lambda s: s.t_ms)
    for stamped in events:
        event = stamped.event
        if isinstance(event, StateChanged) and event.state == State.LISTENING:
            done.clear()  # a new turn: its words may repeat an earlier turn's
        if not isinstance(event, (TranscriptPartial, TranscriptFinal, UnitSpoken)) or not stamped.changed:
            continue
        text = event.text.strip()
        key = (type(event).__name__, text)
        if not text or key in done:
            continue
        done.add(key)
        # The live section starts afresh each turn and the text cannot show before it happened, so the
        # first change holding it from its stamp on is its appearance (a millisecond's slack for the clocks).
        first = next((s for s in ordered if s.t_ms >= stamped.t * 1000 - 1 and text in s.text), None)
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


def measure(rig: Any, plays: list[Callable[[], Future[Any]]]) -> dict[str, Any]:
    """Open the page on ``rig``, watch it, run each of ``plays`` (a turn each) in turn; the figures."""
    from bench.loop.browser import chromium, wait_for

    seen: list[Seen] = []
    with chromium() as driver:
        driver.get(rig.url)
        wait_for(lambda: driver.find_element("id", "connection").get_attribute("data-state") == "open", what="the live stream")
        driver.execute_script(OBSERVER_JS)
        first_event = len(rig.events)
        began = time.monotonic()
        for play in plays:
            future = play()
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
        "turns": len(plays), "seconds": round(elapsed, 1), "events": len(rows), "never_seen": len(rows) - len(found),
        "dom": summary([r["dom_ms"] for r in found]),
        "frame": summary([r["frame_ms"] for r in found if r["frame_ms"] is not None]),
        "by_event": by_kind, "rows": rows,
    }


def scripted(turns: int, folder: Path) -> dict[str, Any]:
    """Scripted turns: partials every 0.12 s, a three-sentence answer, each unit said in real time."""
    from bench.loop.page_rig import Decision, PageRig, growing

    decisions = [Decision(f"k{n:02d}w01", turn_answer(n)) for n in range(1, turns + 1)]
    with PageRig(folder, decisions=decisions, seconds_per_char=0.012) as rig:
        return measure(rig, [lambda n=n: rig.say(growing(turn_words(n), speech_s=1.6, every_s=0.12)) for n in range(1, turns + 1)])


def real(config_path: Path | None, folder: Path, rounds: int = 1, language: str = "en") -> dict[str, Any]:
    """hearth's own loop with the real models (bench/loop/live_loop.py), the requests played from their WAVs."""
    from audio.wav import read_wav
    from bench.loop.live_loop import LiveLoop
    from firmware_py.config import load_config
    from bench.loop.page_rig import PageRig

    config = load_config(config_path).model_copy(update={"language": language})
    requests_dir = Path(__file__).resolve().parent / "requests"
    requests = [r for r in json.loads((requests_dir / "requests.json").read_text(encoding="utf-8")) if r["language"] == language]

    class RealRig(PageRig):
        """The rig with hearth's real loop in place of the scripted models."""

        async def _open(self) -> str:
            from agent.live_view import LiveView

            self.loop_under_test = LiveLoop(config, self.folder / "data")
            await self.loop_under_test.open()
            assistant = self.loop_under_test.assistant
            assert assistant is not None and assistant.deps.tools is not None
            told = assistant.on_event

            def both(event: Any) -> None:
                told(event)
                self._on_event(event)

            assistant.on_event = both
            self.view, self.assistant, self.record = LiveView(), assistant, assistant.record
            self.home = assistant.deps.tools.home  # type: ignore[assignment]
            return await self._serve()

        async def _close(self) -> None:
            if self._server is not None:
                await self._server.stop()
            await self.loop_under_test.close()

    rig = RealRig(folder, language=language)
    rig.start(timeout_s=600)  # the models load and warm first
    try:
        plays = [lambda r=r: rig.run_later(rig.loop_under_test.say(read_wav(requests_dir / r["wav"], 16000)))
                 for _ in range(rounds) for r in requests]
        result = measure(rig, plays)
    finally:
        rig.stop(timeout_s=60)
    return {"requests": [r["id"] for r in requests], "rounds": rounds, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=16, help="scripted turns")
    parser.add_argument("--real", action="store_true", help="hearth's real loop and models on the recorded requests instead")
    parser.add_argument("--rounds", type=int, default=1, help="with --real: how many times each request is played")
    parser.add_argument("--config", type=Path, default=None, help="with --real: the configuration (default: hearth's own)")
    parser.add_argument("--out", type=Path, default=Path(f"bench/results/page-latency-{time.strftime('%Y-%m-%d')}.json"))
    args = parser.parse_args(argv)
    provenance = written_by("bench.loop.page_latency", argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="hearth-page-") as tmp:
        result = real(args.config, Path(tmp), args.rounds) if args.real else scripted(args.turns, Path(tmp))
    how = ("hearth's real loop and models (bench/loop/live_loop.py) on the recorded English requests" if args.real
           else "scripted turns (bench/loop/page_rig.py) through the real assistant, stores, record and server")
    command = "python -m bench.loop.page_latency " + (f"--real --rounds {args.rounds}{f' --config {args.config}' if args.config else ''}" if args.real else f"--turns {args.turns}")
    report = {
        "written_by": provenance,
        "what": "ms from the live view applying an event (server time.time()) to its text in the page's live section "
                f"(MutationObserver, performance.timeOrigin + now()), headless Chromium; {how}",
        "command": f"{command} --out {args.out}",
        "commit": provenance["commit"],
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
                    "python": sys.version.split()[0]},
        "target_ms": 100,
        **result,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("events", "never_seen", "dom", "frame", "by_event")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
