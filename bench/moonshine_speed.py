"""Where Moonshine's time goes: the wheel's ``.ort`` decoder against the converted ONNX, threads,
packed weights, and a final that checks the last partial against one decoded afresh.

Every variant decodes the same recordings in turn, round after round (interleaved, so that a
busy spell of a shared machine falls on all of them), and the report gives medians and ratios
against the wheel's files.  Memory is measured in a fresh process per variant.

    python -m bench.moonshine_speed --rounds 5 --out bench/results/moonshine-speed-x86_64.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.moonshine_model import MoonshineFiles, MoonshineModel
from audio.wav import read_wav
from bench.provenance import written_by

RATE = 16000
WHEEL_DIR = "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/"
PARTIAL_LAG_S = 0.25
"""How far the last partial trails the end of the audio (the partials' cadence)."""


@dataclass(frozen=True)
class Variant:
    name: str
    files: str
    """"wheel" (the .ort files as shipped) or "converted" (the installed ONNX)."""
    threads: int
    pack: bool


VARIANTS = (
    Variant("wheel-ort-2t", "wheel", 2, True),
    Variant("onnx-2t", "converted", 2, False),
    Variant("onnx-packed-2t", "converted", 2, True),
    Variant("onnx-1t", "converted", 1, False),
)


def _wheel_files(model_dir: Path, work: Path) -> MoonshineFiles:
    """The wheel's own .ort files, from the installer's wheel cache."""
    wheels = sorted((model_dir.parent / ".cache" / "wheels").glob("moonshine_cpp-*.whl"))
    if not wheels:
        raise SystemExit(f"no moonshine-cpp wheel in {model_dir.parent / '.cache' / 'wheels'}: run `hearth models install moonshine-base-en`")
    with zipfile.ZipFile(wheels[-1]) as archive:
        for member, name in (("encoder_model.ort", "encoder.ort"), ("decoder_model_merged.ort", "decoder.ort"), ("tokenizer.bin", "tokenizer.bin")):
            (work / name).write_bytes(archive.read(WHEEL_DIR + member))
    return MoonshineFiles(work / "encoder.ort", work / "decoder.ort", work / "tokenizer.bin")


def _recordings(paths: list[Path]) -> dict[str, np.ndarray]:
    return {path.stem: read_wav(path.read_bytes(), RATE).samples for path in paths}


def _one_request(model: MoonshineModel, samples: np.ndarray) -> dict[str, float]:
    started = time.perf_counter()
    hidden = model.encode(samples)
    encoder_s = time.perf_counter() - started
    steps: list[float] = []

    def timed(tokens: np.ndarray, hidden: np.ndarray, cache: Any) -> Any:
        began = time.perf_counter()
        out = model.step(tokens, hidden, cache)
        steps.append(time.perf_counter() - began)
        return out

    from audio.moonshine_model import greedy

    cap = int(len(samples) / RATE * 10) + 8
    began = time.perf_counter()
    plain = greedy(timed, hidden, cap)
    plain_s = time.perf_counter() - began + encoder_s
    partial = model.transcribe(samples[: max(RATE // 4, len(samples) - int(PARTIAL_LAG_S * RATE))], cap)
    checked = model.transcribe(samples, cap, partial.tokens)
    return {
        "encoder_s": encoder_s,
        "token_ms": 1000 * statistics.median(steps[1:] or steps),
        "tokens": len(plain.tokens),
        "greedy_s": plain_s,
        "checked_final_s": checked.seconds,
        "checked_steps": checked.steps,
        "whole_partial_accepted": float(checked.accepted == len(partial.tokens) and checked.tokens[: len(partial.tokens)] == partial.tokens),
        "same_text": float(checked.tokens == plain.tokens),
    }


def _memory_mb(variant: Variant, files: MoonshineFiles) -> float:
    """Resident memory the loaded model adds, in a fresh process."""
    code = (
        "import sys, json; from pathlib import Path\n"
        "from audio.moonshine_model import MoonshineFiles, MoonshineModel\n"
        "def rss(): return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) / 1024\n"
        "import onnxruntime, numpy\n"
        "before = rss()\n"
        f"m = MoonshineModel(MoonshineFiles(Path({str(files.encoder)!r}), Path({str(files.decoder)!r}), Path({str(files.tokenizer)!r})), {variant.threads}, {variant.pack})\n"
        "m.load(); m.transcribe(numpy.zeros(16000, 'float32') + 0.01, 4)\n"
        "print(json.dumps(rss() - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    return round(float(out.stdout.strip().splitlines()[-1]), 1)


def run(model_dir: Path, recordings: list[Path], rounds: int) -> dict[str, Any]:
    clips = _recordings(recordings)
    with tempfile.TemporaryDirectory() as work:
        converted = MoonshineFiles.in_dir(model_dir)
        wheel = _wheel_files(model_dir, Path(work))
        models: dict[str, MoonshineModel] = {}
        for variant in VARIANTS:
            model = MoonshineModel(wheel if variant.files == "wheel" else converted, variant.threads, variant.pack)
            model.load()
            model.transcribe(np.zeros(RATE, np.float32) + 0.01, 4)
            models[variant.name] = model
        rows: list[dict[str, Any]] = []
        for round_index in range(rounds):
            for name, samples in clips.items():
                for variant in VARIANTS:
                    rows.append({"variant": variant.name, "round": round_index, "clip": name, **_one_request(models[variant.name], samples)})
        memory = {v.name: _memory_mb(v, wheel if v.files == "wheel" else converted) for v in VARIANTS}
    summary: dict[str, dict[str, float]] = {}
    for variant in VARIANTS:
        mine = [r for r in rows if r["variant"] == variant.name]
        summary[variant.name] = {
            key: round(statistics.median(r[key] for r in mine), 4)
            for key in ("encoder_s", "token_ms", "greedy_s", "checked_final_s")
        } | {
            "whole_partial_accepted": round(statistics.mean(r["whole_partial_accepted"] for r in mine), 3),
            "same_text": round(statistics.mean(r["same_text"] for r in mine), 3),
            "memory_mb": memory[variant.name],
        }
    base = VARIANTS[0].name
    ratios: dict[str, dict[str, float]] = {}
    for variant in VARIANTS[1:]:
        pairs = [(a, b) for a in rows if a["variant"] == variant.name for b in rows
                 if b["variant"] == base and b["round"] == a["round"] and b["clip"] == a["clip"]]
        ratios[variant.name] = {
            key: round(statistics.median(a[key] / b[key] for a, b in pairs), 3) for key in ("token_ms", "greedy_s", "checked_final_s")
        }
    return {"clips": {k: round(len(v) / RATE, 2) for k, v in clips.items()}, "rounds": rounds, "summary": summary,
            f"ratio_to_{base}": ratios, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", type=Path, help="where models are installed (default: hearth's)")
    parser.add_argument("--recordings", type=Path, nargs="*", help="16 kHz WAV requests (default: the en-human suite's)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from firmware_py.config import load_config
    from firmware_py.wiring import model_store

    store = model_store(load_config()) if args.models_dir is None else None
    model_dir = (args.models_dir / "moonshine-base-en") if args.models_dir else store.path("moonshine-base-en")  # type: ignore[union-attr]
    recordings = args.recordings or _human_requests()
    result = {"written_by": written_by("bench.moonshine_speed", argv), **run(model_dir, recordings, args.rounds)}
    print(json.dumps({"clips": result["clips"], "summary": result["summary"], "ratios": result["ratio_to_wheel-ort-2t"]}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def _human_requests() -> list[Path]:
    """The recordings of the ``en-human`` suite (real voices), and the test request."""
    from bench.suites.scenarios import load_suite, resolve_audio

    suite = load_suite("en-human")
    found = [resolve_audio(s) for s in suite.scenarios if s.audio]
    return [*found[:6], Path(__file__).resolve().parents[1] / "tests" / "data" / "find-me-a-recipe-for-pancakes.wav"]


if __name__ == "__main__":
    sys.exit(main())
