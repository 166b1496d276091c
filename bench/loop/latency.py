"""Latency, real-time factors and memory of the whole loop on the bundled spoken requests.

Each request is played in real time into the real models (WAV microphone,
clocked WAV speaker), the way ``hearth demo`` does it, and the turn's timeline
is read on the listener's side.  Writes JSON; prints a summary.

    python -m bench.loop.latency --rounds 3 --out out/bench-latency.json

The requests are synthetic speech (hearth's piper voice), and say so in the output.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import resource
import time
from pathlib import Path
from typing import Any

from agent.assistant import Assistant
from agent.results import TurnResult
from audio.wav import WavFileSpeaker, read_wav
from bench.loop.metrics import aggregate, asr_rtf, turn_figures
from bench.provenance import git_commit, written_by
from bench.suites.scoring import word_error_rate
from firmware_py.config import HearthConfig, load_config
from firmware_py.demo import play_request
from firmware_py.wiring import build_turn_deps, close_turn_deps

REQUESTS = Path(__file__).parent / "requests"
log = logging.getLogger(__name__)


def measure_turn(result: TurnResult, reference: str, asr_decode_s: float | None) -> dict[str, Any]:
    tl = result.timeline
    return {
        "outcome": result.outcome.value,
        "transcript": result.transcript,
        "reply": result.reply,
        "wer": round(word_error_rate(reference, result.transcript), 4),
        **tl.summary(),
        "speech_end_to_final_transcript_s": tl.between("speech_end", "final_transcript"),
        "tts_rtf": turn_figures(tl)["tts_rtf"],
        "asr_final_decode_s": asr_decode_s,
        "asr_rtf": asr_rtf(tl, asr_decode_s),
        "marks": tl.to_dict()["marks"],
    }


async def run(config: HearthConfig, rounds: int, mode: str) -> dict[str, Any]:
    catalogue = [r for r in json.loads((REQUESTS / "requests.json").read_text()) if r["language"] == config.language]
    speaker = WavFileSpeaker(config.audio.output_rate)
    t0 = time.monotonic()
    deps = await build_turn_deps(config, speaker)
    assistant = Assistant(deps, history_turns=0)  # every request starts a fresh conversation
    await assistant.warm()
    startup_s = time.monotonic() - t0
    rows: list[dict[str, Any]] = []
    for round_index in range(rounds):
        for request in catalogue:
            result = await play_request(assistant, read_wav(REQUESTS / request["wav"], 16000), hold=(mode == "hold"))
            decode_s = getattr(deps.recognizer, "last_decode_s", None)
            row = {"id": request["id"], "round": round_index, "synthetic": request["synthetic"], "voice": request["voice"]}
            row |= measure_turn(result, request["text"], decode_s)
            rows.append(row)
            print(
                f"{request['id']:<24} round {round_index}: first audio {row['speech_end_to_first_audio_s']} s, "
                f"WER {row['wer']:.2f}, {row['transcript']!r}",
                flush=True,
            )
    await close_turn_deps(deps)
    keys = [
        "speech_end_to_first_audio_s",
        "speech_end_to_final_transcript_s",
        "final_transcript_to_first_token_s",
        "first_token_to_first_audio_s",
        "tts_rtf",
        "asr_rtf",
        "wer",
    ]
    return {
        "benchmark": "latency",
        "mode": mode,
        "audio": "synthetic speech (piper en_US-joe-medium), not human recordings",
        "git_commit": git_commit(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "python": platform.python_version()},
        "config": config.model_dump(mode="json"),
        "rounds": rounds,
        "startup_s": round(startup_s, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "aggregate": {key: aggregate(rows, key) for key in keys},
        "turns": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=["tap", "hold"], default="tap",
                        help="tap: the voice detector ends the utterance; hold: the button is released as speech ends")
    parser.add_argument("--out", type=Path, default=Path("out/bench-latency.json"))
    args = parser.parse_args()
    provenance = written_by("bench.loop.latency")
    logging.basicConfig(level=logging.WARNING)
    report = {"written_by": provenance, **asyncio.run(run(load_config(args.config), args.rounds, args.mode))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    agg = report["aggregate"]
    print(f"\nmode {args.mode}, {args.rounds} rounds; peak RSS {report['peak_rss_mb']} MB; start-up {report['startup_s']} s")
    for key, stats in agg.items():
        print(f"{key:<36} median {stats['median']}  p90 {stats['p90']}  (n={stats['n']})")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
