"""Stop words as the reply listener hears them: with the recognizer's best only, and with its n best.

    python -m bench.echo.stop_words [--language en --language ko] [--hypotheses 5] [--margin 0.75]
                               [--out bench/results/stop-words-<machine>.json]

Each phrase is said by espeak-ng voices (people the recognizer has never heard; hearth's own
voices are not among them) and decoded the way :class:`agent.listening.barge_in.ReplyListener`
decodes a short utterance said over a reply: the real Whisper of the language, the stop-phrase
prompt, the final decode.  Every clip is decoded twice, interleaved: greedily, reading the best
only (``best``), and as a beam of ``--hypotheses`` read by
:func:`agent.listening.stop_words.stop_among` (``n_best``).  Reported per language and per set:

- ``stop_heard``: share of stop phrases taken for a stop (target ≥ 95 %);
- ``false_stops``: share of short requests taken for a stop (what the n best may cost);
- ``decide_s``: the decode's median wall time, and the ratio n best / best from the same clips.

Two sets: ``tuning`` (the phrases and voices the margin was chosen on) and ``held_out`` (other
phrases, other voices), so a margin fitted to the first shows on the second.  No room and no echo
here: :mod:`bench.echo.listening` measures the same words over hearth's voice on a real audio path.

Exit status 0 with the JSON written; 2 when a model or espeak-ng is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np

from agent.listening.stop_words import PROMPTS, heard_stop
from audio.protocols import AudioChunk, Recognizer, Transcript
from audio.wav import read_wav
from bench.provenance import written_by

log = logging.getLogger(__name__)

RATE = 16000

SETS: dict[str, dict[str, dict[str, Any]]] = {
    "ko": {
        "tuning": {
            "voices": [("ko+f3", 150), ("ko", 170), ("ko+m3", 130)],
            "stops": ["그만", "잠깐", "그만해", "잠깐만", "멈춰", "취소", "그만해요", "잠깐만요"],
            "requests": ["도마", "감사합니다", "다음", "두 개", "소금 얼마나", "불 꺼줘", "타이머 몇 분 남았어",
                         "뭐라고", "네 알겠어", "그런데 말이야", "계란 몇 개", "잠깐 타이머 꺼줘", "그만 넣어"],
        },
        "held_out": {
            "voices": [("ko+f1", 140), ("ko+m1", 160), ("ko+f5", 180)],
            "stops": ["그만해줘", "멈춰요", "잠시만", "취소해", "됐어", "그만하세요", "조용히", "스톱"],
            "requests": ["다음은 뭐야", "물 얼마나 넣어", "소금", "오븐 켜줘", "몇 분이야", "좋아", "알람 맞춰줘",
                         "설탕 두 스푼", "우유 추가해", "다시 말해줘", "천천히", "온도 몇 도"],
        },
    },
    "en": {
        "tuning": {
            "voices": [("en-us+f3", 150), ("en-gb", 170), ("en-us+m3", 130)],
            "stops": ["stop", "cancel", "stop it", "hearth, stop", "wait", "never mind", "stop talking"],
            "requests": ["thanks", "what", "next", "how much salt", "turn it off", "two eggs", "what time is it",
                         "stop the timer", "wait, how much salt", "okay", "hold on a second, what"],
        },
        "held_out": {
            "voices": [("en-us+f1", 140), ("en-gb+m2", 160), ("en-us+f5", 180)],
            "stops": ["hold on", "be quiet", "enough", "cancel that", "stop now", "forget it", "hang on"],
            "requests": ["add milk", "what's next", "how long", "set a timer", "louder", "repeat that",
                         "one more time", "cancel the timer", "stop the oven", "shopping list", "how many grams"],
        },
    },
}


def _cache() -> Path:
    from bench.suites.audio import default_cache_dir

    path = default_cache_dir() / "bench-stop-words"
    path.mkdir(parents=True, exist_ok=True)
    return path


def say(text: str, voice: str, speed: int) -> np.ndarray:
    """``text`` in an espeak-ng voice, 16 kHz (cached)."""
    path = _cache() / f"{hashlib.sha256(f'{text}|{voice}|{speed}'.encode()).hexdigest()[:16]}.wav"
    if not path.is_file():
        raw = path.with_suffix(".part.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True, capture_output=True)
        raw.rename(path)
    return read_wav(path, RATE).samples


async def as_the_listener_hears(
    recognizer: Recognizer, samples: np.ndarray, language: str, hypotheses: int, margin: float
) -> tuple[Transcript, bool]:
    """The final the reply listener's decode of ``samples`` (16 kHz) gives (the stop-phrase prompt,
    ``hypotheses`` best), and whether the listener would take it for a stop."""

    async def audio() -> AsyncIterator[AudioChunk]:
        for i in range(0, len(samples), RATE // 10):
            yield AudioChunk(samples[i : i + RATE // 10], RATE)

    final = Transcript("", True)
    async for transcript in recognizer.transcribe(audio(), PROMPTS.get(language, ""), hypotheses=hypotheses):
        if transcript.is_final:
            final = transcript
    return final, heard_stop(final.text, final.alternatives if hypotheses > 1 else (), margin) is not None


def decide(recognizer: Recognizer, samples: np.ndarray, language: str, hypotheses: int, margin: float) -> dict[str, Any]:
    """What the reply listener would make of ``samples``: its decode, and whether it is a stop."""
    started = time.perf_counter()
    final, stop = asyncio.run(as_the_listener_hears(recognizer, samples, language, hypotheses, margin))
    seconds = time.perf_counter() - started
    return {"text": final.text, "stop": stop, "s": seconds, "alternatives": [[t, round(v, 3)] for t, v in final.alternatives]}


def run_language(language: str, hypotheses: int, margin: float) -> dict[str, Any]:
    from firmware_py.config import HearthConfig
    from firmware_py.wiring import make_recognizer
    from models.store import ModelStore

    config = HearthConfig(language=language)
    recognizer = make_recognizer(config, ModelStore.default())
    recognizer.load()
    recognizer.warm()
    out: dict[str, Any] = {}
    for name, spec in SETS[language].items():
        rows = []
        for voice, speed in spec["voices"]:
            for kind in ("stops", "requests"):
                for phrase in spec[kind]:
                    samples = say(phrase, voice, speed)
                    best = decide(recognizer, samples, language, 1, margin)
                    n_best = decide(recognizer, samples, language, hypotheses, margin)
                    rows.append({"voice": f"{voice}@{speed}", "said": phrase, "is_stop": kind == "stops", "best": best, "n_best": n_best})
                    log.info("%s %s %s %r: best %r %s, n best %s", language, name, voice, phrase, best["text"], best["stop"], n_best["stop"])
        out[name] = {"summary": summarize(rows), "rows": rows}
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stops = [r for r in rows if r["is_stop"]]
    requests = [r for r in rows if not r["is_stop"]]
    summary: dict[str, Any] = {"stops": len(stops), "requests": len(requests)}
    for way in ("best", "n_best"):
        heard = sum(r[way]["stop"] for r in stops)
        false = sum(r[way]["stop"] for r in requests)
        summary[way] = {
            "stop_heard": round(heard / len(stops), 3) if stops else None,
            "false_stops": round(false / len(requests), 3) if requests else None,
            "decide_s": round(statistics.median(r[way]["s"] for r in rows), 3) if rows else None,
        }
    if rows:
        summary["decide_ratio"] = round(statistics.median(r["n_best"]["s"] / r["best"]["s"] for r in rows), 2)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--language", action="append", choices=["en", "ko"], help="default: en and ko")
    parser.add_argument("--hypotheses", type=int, default=5)
    parser.add_argument("--margin", type=float, default=None, help="default: the reply listener's")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    provenance = written_by("bench.echo.stop_words", argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    from agent.listening.barge_in import ReplySettings

    margin = ReplySettings().stop_margin if args.margin is None else args.margin
    out_path = args.out or Path("bench/results") / f"stop-words-{platform.machine()}.json"
    try:
        subprocess.run(["espeak-ng", "--version"], check=True, capture_output=True)
        results = {lang: run_language(lang, args.hypotheses, margin) for lang in args.language or ["en", "ko"]}
    except (FileNotFoundError, subprocess.CalledProcessError) as error:
        print(f"bench.echo.stop_words: {error}", file=sys.stderr)
        return 2
    report = {
        "written_by": provenance,
        "command": "python -m bench.echo.stop_words " + " ".join(provenance["arguments"]),
        "machine": platform.machine(),
        "hypotheses": args.hypotheses,
        "margin": margin,
        "languages": results,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    for lang, sets in results.items():
        for name, data in sets.items():
            print(lang, name, json.dumps(data["summary"]))
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
