"""The alternative to hearth's own home commands, measured: each request of a home suite handed,
as words, to Home Assistant's own conversation agent (Assist's sentence templates, the
``conversation/process`` WebSocket command), and scored by the same states as ``hearth bench``.

    python -m bench.home_assistant.conversation --suite home-en --out out/home-en-assist.json

A scratch core (:mod:`bench.home_assistant.core`) is started and stopped; before each scenario
the home is reset; after each turn the states Home Assistant reports are compared with the
suite's.  Follow-ups go to the same conversation (Assist keeps none the way hearth does, which is
part of what is compared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.home_assistant.core import HomeAssistantCore, remove_core, start_core
from bench.provenance import written_by


async def _process(core: HomeAssistantCore, text: str, language: str, conversation_id: str | None) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    async with connect(core.url.replace("http", "ws", 1) + "/api/websocket", proxy=None) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "auth", "access_token": core.token}))
        await ws.recv()
        message = {"id": 1, "type": "conversation/process", "text": text, "language": language}
        if conversation_id:
            message["conversation_id"] = conversation_id
        await ws.send(json.dumps(message))
        while True:
            answer = json.loads(await ws.recv())
            if answer.get("id") == 1:
                return answer.get("result") or {"error": answer.get("error")}


def run(suite_name: str) -> dict[str, Any]:
    from bench.loop.runner import _score_home
    from bench.suites.scenarios import load_suite

    suite = load_suite(suite_name)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hearth-assist-") as scratch:
        core = start_core(Path(scratch))
        try:
            for scenario in suite.scenarios:
                core.reset(scenario.home_before)
                turns = [(scenario.said, scenario.home), *((f.said, f.home) for f in scenario.followups)]
                conversation_id = None
                for n, (text, expected) in enumerate(turns):
                    before = core.home()
                    began = time.perf_counter()
                    result = asyncio.run(_process(core, text, suite.language, conversation_id))
                    took = time.perf_counter() - began
                    conversation_id = result.get("conversation_id")
                    response = result.get("response") or {}
                    rows.append({
                        "scenario": scenario.id, "turn": n, "text": text, "category": scenario.category,
                        "response_type": response.get("response_type"),
                        "speech": ((response.get("speech") or {}).get("plain") or {}).get("speech"),
                        "seconds": round(took, 4),
                        **_score_home(core, before, expected or {}),
                    })
        finally:
            remove_core(core)
    return {
        "suite": suite.suite,
        "language": suite.language,
        "agent": "Home Assistant's conversation agent (2024.3.3, its built-in sentences)",
        "machine": {"platform": platform.platform(), "machine": platform.machine()},
        "turns": len(rows),
        "home_right": round(sum(r["home_right"] for r in rows) / len(rows), 4),
        "home_changed_unasked": sum(1 for r in rows if r["home_unasked"]),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", required=True, help="a home suite (home-en, home-ko)")
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    options = parser.parse_args(argv)
    provenance = written_by("bench.home_assistant.conversation", argv)
    report = {"written_by": provenance, **run(options.suite)}
    print(f"{report['suite']}: Assist's own agent, {report['turns']} turns: states right {report['home_right']:.1%}, "
          f"changed unasked {report['home_changed_unasked']}")
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
