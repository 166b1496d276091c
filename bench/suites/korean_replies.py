"""Whether hearth's Korean replies are Korean sentences, checked by Kiwi's morphological analysis.

    python -m bench.suites.korean_replies --suite ko-kitchen ko-fresh ko-knowledge --out out/korean-replies.json

Every request of the suites (follow-ups too, in order, each scenario from a fresh conversation)
is asked as a text turn through the real loop after the transcript: the same Responder, tools,
templates, talker and reasoner as a spoken turn, with nothing heard and nothing played.  Each
reply is split into sentences by Kiwi (``kiwipiepy``), and a sentence passes when

- its last morpheme before closing punctuation is a sentence-final ending (Kiwi's ``EF``):
  "타이머를 10분으로 맞췄어요." passes, "파스타 타이머 10분." (a noun phrase) does not; or it is
  an interjection alone ("천만에요.", "네.");
- no morpheme is unknown to Kiwi (``oov``), unless the user said it (a list item, a name);
- it is written in Hangul (an English sentence in a Korean reply fails).

A reply passes when all its sentences do.  Replies are sorted by who wrote them: the reasoner
(the turn was routed to it), a template (a tool ran or was asked back, a command, an undo, a
repeat: hearth's own fixed sentences), or the talker (anything else, written freely).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.provenance import git_commit, written_by
from bench.suites.scenarios import load_suite

log = logging.getLogger(__name__)

PUNCTUATION_TAGS = frozenset({"SF", "SP", "SS", "SE", "SO", "SW"})
"""Kiwi's tags for punctuation and symbols: not words, so never the sentence's last morpheme."""
FOREIGN_TAGS = frozenset({"SL", "SH", "SN", "SB"})
"""Latin letters, Hanja, numbers and list numbering: not unknown Korean."""
TEMPLATE_MARKS = frozenset({"tool_start", "tool_refused", "confirmation", "command", "undo", "amend", "time_left", "repeat", "template"})
"""Timeline marks of a turn whose reply hearth's own templates wrote."""
_HANGUL = re.compile("[가-힣]")


@dataclass(frozen=True)
class Verdict:
    """One reply, checked."""

    reply: str
    problems: tuple[str, ...]

    @property
    def passes(self) -> bool:
        return not self.problems


def check_reply(kiwi: Any, reply: str, said: str = "") -> Verdict:
    """Kiwi's reading of ``reply``: each sentence ends with a sentence-final ending, no morpheme is
    unknown but those the user said (``said``), and the sentence is Korean."""
    problems: list[str] = []
    for sentence in kiwi.split_into_sents(reply, return_tokens=True):
        words = [t for t in sentence.tokens if t.tag not in PUNCTUATION_TAGS]
        if not words:
            continue
        if not _HANGUL.search(sentence.text):
            problems.append(f"not Korean: {sentence.text!r}")
            continue
        last = words[-1]
        if all(t.tag == "IC" for t in words):
            pass  # an interjection is a whole reply of its own: "천만에요.", "네."
        elif last.tag != "EF":
            problems.append(f"no sentence-final ending: {sentence.text!r} ends with {last.form}/{last.tag}")
        for token in words:
            if token.oov and token.tag not in FOREIGN_TAGS and token.form not in said:
                problems.append(f"unknown to Kiwi: {token.form}/{token.tag} in {sentence.text!r}")
    return Verdict(reply, tuple(problems))


def writer(route: str | None, marks: set[str]) -> str:
    """Who wrote a reply: "reasoner", "template" or "talker" (see the module's docstring)."""
    if route is not None:
        return "reasoner"
    return "template" if marks & TEMPLATE_MARKS else "talker"


async def collect(config: Any, suites: list[str], limit: int | None) -> list[dict[str, Any]]:
    """Ask every request of ``suites`` as a text turn; one row per turn, with its reply."""
    from agent.text_turns import TextTurns
    from audio.silent import SilentSpeaker
    from firmware_py.wiring import build_turn_deps, close_turn_deps, warm_assistant

    deps = await build_turn_deps(config, SilentSpeaker(config.audio.output_rate))
    rows: list[dict[str, Any]] = []
    try:
        assistant = await warm_assistant(config, deps)
        text_turns = TextTurns(assistant)
        for name in suites:
            suite = load_suite(name)
            for scenario in suite.scenarios[:limit]:
                assistant.forget()
                for turn_index, text in enumerate([scenario.said, *(f.said for f in scenario.followups)]):
                    await assistant.until_idle()
                    turn = assistant.start_text_turn(text, lambda _event: None, text_turns.deps())
                    assert turn.task is not None
                    result = await turn.task
                    await asyncio.sleep(0)  # the finished turn is recorded and ``current`` freed
                    marks = {m.name for m in result.timeline.marks}
                    rows.append({
                        "suite": suite.suite, "scenario": scenario.id, "turn": turn_index, "said": text,
                        "reply": result.reply, "writer": writer(result.route, marks),
                        "tools": [c.name for c in result.tool_calls], "outcome": result.outcome.value,
                    })
                    log.info("%s/%s: %r → %r", suite.suite, scenario.id, text, result.reply)
    finally:
        await close_turn_deps(deps)
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The share of replies that pass, per writer and per suite."""
    def share(group: list[dict[str, Any]]) -> dict[str, Any]:
        passed = sum(r["passes"] for r in group)
        return {"replies": len(group), "pass": passed, "share": round(passed / len(group), 3) if group else None}

    spoken = [r for r in rows if r["reply"].strip()]
    return {
        "all": share(spoken),
        "by_writer": {w: share([r for r in spoken if r["writer"] == w]) for w in ("template", "talker", "reasoner")},
        "by_suite": {s: share([r for r in spoken if r["suite"] == s]) for s in sorted({r["suite"] for r in spoken})},
        "silent_turns": len(rows) - len(spoken),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", nargs="+", default=["ko-kitchen", "ko-fresh", "ko-knowledge"])
    parser.add_argument("--config", type=Path)
    parser.add_argument("--limit", type=int, help="only the first N scenarios of each suite")
    parser.add_argument("--out", type=Path, default=Path("out/korean-replies.json"))
    options = parser.parse_args(argv)
    provenance = written_by("bench.suites.korean_replies", argv)  # the code as the run starts
    logging.basicConfig(level=logging.WARNING)
    from kiwipiepy import Kiwi

    from firmware_py.config import load_config

    config = load_config(options.config)
    with tempfile.TemporaryDirectory(prefix="hearth-korean-replies-") as data:
        # The suites' timers and list items go to a scratch folder, never the household's own.
        tools = config.tools.model_copy(update={"data_dir": Path(data)})
        config = config.model_copy(update={"language": "ko", "tools": tools})
        rows = asyncio.run(collect(config, options.suite, options.limit))
    kiwi = Kiwi()
    for row in rows:
        verdict = check_reply(kiwi, row["reply"], row["said"])
        row["passes"], row["problems"] = verdict.passes, list(verdict.problems)
    report = {"written_by": provenance, "suites": options.suite, "git_commit": git_commit(), "summary": summarise(rows), "rows": rows}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    s = report["summary"]
    print(f"Korean replies that Kiwi reads as sentences: {s['all']['pass']}/{s['all']['replies']}; "
          + "; ".join(f"{w} {v['pass']}/{v['replies']}" for w, v in s["by_writer"].items()) + f"; written to {options.out}")
    for row in rows:
        if not row.get("passes", True) and row["reply"].strip():
            print(f"  [{row['writer']}] {row['said']!r} → {row['reply']!r}: {'; '.join(row['problems'])}")


if __name__ == "__main__":
    main()
