"""Which echo canceller: WebRTC's APM (livekit) or speexdsp (pyaec), measured on hearth's own path.

hearth's piper voice speaks a few kitchen replies, reported to a :class:`FarEndReference` the way
the speaker's callback reports them (22.05 kHz blocks with their DAC times); a simulated room
carries them to a 16 kHz microphone: 60 ms delay, a 150 ms exponential tail, gain, a little noise,
and an ADC clock 100 ppm fast whose chunks are stamped by counting samples (so the offset creeps
6 ms a minute and the drift fit has to follow it).  Over every other reply a recorded human voice
(the ``en-human`` clips) speaks, at the level of the echo.  Each canceller runs the whole session
through :class:`EchoFilter`, interleaved with the other, several runs.

Figures per canceller: ERLE over the echo-only stretches after the first reply (and over the first
reply, converging), the running ``erle_db`` the filter reports, how much of the near end survives
(spectral match of cleaned against the clean human voice, its level, and a magnitude SDR, beside the
same figures for the raw microphone), and CPU seconds per second of audio (``time.process_time``)
for the canceller alone and for the whole filter.

    python -m bench.echo.choice    # -> bench/results/echo-choice-<machine>.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.echo import ApmCanceller, EchoFilter, FarEndReference, SpeexCanceller, make_canceller
from audio.protocols import AudioChunk
from audio.wav import read_wav, resample, write_wav
from bench.provenance import machine, written_by

RATE = 16000
RESULTS = Path(__file__).parent.parent / "results"

REPLIES = [
    "Boil the eggs for seven minutes, then cool them in cold water so they peel easily.",
    "Preheat the oven to two hundred and twenty degrees, and bake the bread for about thirty five minutes.",
    "Let the steak rest for five to ten minutes after cooking, so the juices settle back into the meat.",
    "For crispy potatoes, parboil them first, shake them in the pan to rough up the edges, then roast them in hot oil.",
    "You can use the same amount of plain yoghurt or mashed banana instead of butter in most cakes.",
    "Taste a piece of pasta a minute before the time on the packet; it should be tender with a little bite.",
]


VARIANTS = {
    "apm-ns": lambda: ApmCanceller(noise_suppression=True),
    "speex-system": lambda: SpeexCanceller(library="system"),
    "speex-pyaec": lambda: SpeexCanceller(library="pyaec"),
    "speex-linear": lambda: SpeexCanceller(preprocess=False),
    "speex-128ms": lambda: SpeexCanceller(filter_s=0.128),
    "speex-500ms": lambda: SpeexCanceller(filter_s=0.5),
}
"""Settings of the two beside their defaults (``make_canceller``), for ``--kinds``."""


@dataclass(frozen=True)
class Room:
    """The simulated path from the speaker to the microphone."""

    delay_s: float = 0.060
    """DAC to microphone: the room and the latency the drivers do not report."""
    tail_s: float = 0.150
    """The reverberant tail falls 60 dB over this."""
    tail_level: float = 0.05
    """Amplitude of the tail's first taps against the direct path (about a third of the energy)."""
    gain: float = 0.5
    """Direct path gain, speaker to microphone."""
    noise: float = 3e-4
    """Microphone noise, RMS (about -70 dBFS)."""
    drift_ppm: float = 100.0
    """The ADC clock runs this much fast; its chunks are stamped by counting samples."""
    gap_s: float = 1.0
    """Silence between replies."""
    near_level: float = 1.0
    """RMS of the human voice against the RMS of the echo while both sound."""
    chunk: int = 320
    """Microphone chunk, samples at 16 kHz."""
    speaker_block: int = 441
    """Speaker callback block, samples at the voice's rate."""


def impulse_response(room: Room, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(room.tail_s * RATE)
    h = np.zeros(n)
    h[0] = 1.0
    k = np.arange(1, n)
    h[1:] = room.tail_level * rng.standard_normal(n - 1) * np.exp(-k * 6.9 / n)
    return room.gain * h


def synthesize_replies(texts: list[str], cache: Path) -> tuple[list[np.ndarray], int]:
    """hearth's configured English voice (piper) speaking ``texts``; cached as WAVs at the voice's rate."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = [cache / f"{hashlib.sha256(t.encode()).hexdigest()[:16]}.wav" for t in texts]
    if not all(p.is_file() for p in paths):
        from firmware_py.config import load_config
        from firmware_py.wiring import make_synthesizer
        from models.store import ModelStore, default_models_dir

        synth = make_synthesizer(load_config(), ModelStore(default_models_dir()))

        async def speak(text: str) -> AudioChunk:
            await synth.load()
            pieces = [c async for c in synth.synthesize(text)]
            return AudioChunk(np.concatenate([p.samples for p in pieces]).astype(np.float32), pieces[0].sample_rate)

        for text, path in zip(texts, paths):
            if not path.is_file():
                write_wav(path, asyncio.run(speak(text)))
    audio = [read_wav(p) for p in paths]
    return [a.samples for a in audio], audio[0].sample_rate


def human_clips() -> list[tuple[str, np.ndarray]]:
    """The en-human recordings (real readers), 16 kHz."""
    from bench.suites.scenarios import load_suite, resolve_audio

    clips = []
    for scenario in load_suite("en-human").scenarios:
        a = read_wav(resolve_audio(scenario))
        clips.append((scenario.id, resample(a.samples, a.sample_rate, RATE).astype(np.float32)))
    return clips


def clip_texts() -> dict[str, str]:
    from bench.suites.scenarios import load_suite

    return {s.id: s.text for s in load_suite("en-human").scenarios}


class Transcriber:
    """hearth's configured recognizer (Whisper), for what is left of the user's words after cancelling."""

    def __init__(self) -> None:
        from firmware_py.config import load_config
        from firmware_py.wiring import make_recognizer
        from models.store import ModelStore, default_models_dir

        self.recognizer = make_recognizer(load_config(), ModelStore(default_models_dir()))
        self.recognizer.load()
        self.texts = clip_texts()

    def wer(self, clip: str, samples: np.ndarray) -> tuple[float, str]:
        from bench.suites.scoring import word_error_rate

        heard = self.recognizer.decode(np.asarray(samples, np.float32))
        return word_error_rate(self.texts[clip], heard), heard


@dataclass
class Session:
    far: list[tuple[float, np.ndarray]]  # (DAC time, block) as the speaker reports them
    far_rate: int
    mic: np.ndarray  # what the ADC took, 16 kHz
    echo: np.ndarray  # the echo alone, on the microphone's samples
    near: np.ndarray  # the human voice alone, on the microphone's samples
    near_spans: list[tuple[str, int, int]]  # clip id, first and last microphone sample
    echo_spans: list[tuple[int, int]]  # replies with no human voice, microphone samples
    seconds: float


def build_session(
    replies: list[np.ndarray], far_rate: int, clips: list[tuple[str, np.ndarray]], room: Room, seed: int
) -> Session:
    rng = np.random.default_rng(seed)
    t0 = 1000.0
    far_blocks: list[tuple[float, np.ndarray]] = []
    starts = []
    t = 0.5
    for reply in replies:
        starts.append(t)
        for i in range(0, len(reply), room.speaker_block):
            far_blocks.append((t0 + t + i / far_rate, reply[i : i + room.speaker_block]))
        t += len(reply) / far_rate + room.gap_s
    seconds = t
    n = int(seconds * RATE) + RATE
    played = np.zeros(n)  # what left the speaker, on the monotonic 16 kHz grid
    for start, reply in zip(starts, replies):
        r16 = resample(reply, far_rate, RATE)
        a = int(round(start * RATE))
        played[a : a + len(r16)] += r16[: n - a]
    d = int(round(room.delay_s * RATE))
    wet = np.zeros(n)
    wet[d:] = np.convolve(played, impulse_response(room, seed))[: n - d]
    near = np.zeros(n)
    near_spans = []
    echo_spans = []
    for k, (start, reply) in enumerate(zip(starts, replies)):
        a = int(round((start + room.delay_s) * RATE))
        b = a + int(len(reply) / far_rate * RATE)
        if k % 2 == 0:
            echo_spans.append((a, b))
            continue
        clip_id, clip = clips[(seed * 3 + k // 2) % len(clips)]  # six runs place all eighteen clips once
        at = a + int(rng.uniform(0.25, 0.45) * (b - a))
        clip = clip[: max(0, n - at)]
        echo_rms = np.sqrt(np.mean(wet[a:b] ** 2))
        voiced = clip[np.abs(clip) > 0.02 * np.max(np.abs(clip))]
        near[at : at + len(clip)] += clip * room.near_level * echo_rms / np.sqrt(np.mean(voiced**2))
        near_spans.append((clip_id, at, at + len(clip)))
    true_t = np.arange(int(seconds * RATE)) / (RATE * (1 + room.drift_ppm * 1e-6))  # the fast ADC's sample times
    grid = np.arange(n) / RATE
    echo_m = np.interp(true_t, grid, wet)
    near_m = np.interp(true_t, grid, near)
    mic = echo_m + near_m + room.noise * rng.standard_normal(len(true_t))
    # the spans were placed on the monotonic grid; on the fast ADC's samples they sit a little later
    scale = 1 + room.drift_ppm * 1e-6
    near_spans = [(c, int(a * scale), int(b * scale)) for c, a, b in near_spans]
    echo_spans = [(int(a * scale), int(b * scale)) for a, b in echo_spans]
    return Session(far_blocks, far_rate, mic.astype(np.float32), echo_m, near_m, near_spans, echo_spans, seconds)


class Timed:
    """A canceller with its process time counted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate
        self.frame = inner.frame
        self.latency = getattr(inner, "latency", 0)
        self.cpu_s = 0.0

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        t = time.process_time()
        out = self.inner.process(near, far)
        self.cpu_s += time.process_time() - t
        return out

    def reset(self) -> None:
        self.inner.reset()


def spectrogram(x: np.ndarray, n: int = 512, hop: int = 256) -> np.ndarray:
    w = np.hanning(n)
    return np.array([np.abs(np.fft.rfft(w * x[i : i + n])) for i in range(0, len(x) - n, hop)])


def near_figures(cleaned: np.ndarray, near: np.ndarray) -> dict[str, float]:
    """How much of the near end survives: spectral match, level, magnitude SDR, over the frames it speaks in."""
    c, s = spectrogram(cleaned), spectrogram(near)
    m = min(len(c), len(s))
    c, s = c[:m], s[:m]
    active = np.sqrt(np.mean(s**2, axis=1)) > 0.1 * np.sqrt(np.mean(s**2))
    c, s = c[active], s[active]
    return {
        "spectral_match": float(np.corrcoef(c.ravel(), s.ravel())[0, 1]),
        "level_db": float(10 * np.log10(np.sum(c**2) / np.sum(s**2))),
        "sdr_db": float(10 * np.log10(np.sum(s**2) / np.sum((c - s) ** 2))),
    }


def run_one(kind: str, session: Session) -> dict[str, Any]:
    canceller = Timed(VARIANTS[kind]() if kind in VARIANTS else make_canceller(kind))
    reference = FarEndReference()
    flt = EchoFilter(canceller, reference)
    t0 = 1000.0
    out = []
    fb = 0
    cpu_filter = 0.0
    chunk = 320
    for i in range(0, len(session.mic), chunk):
        stamp = t0 + i / RATE  # counted samples: the ADC's drift is left for the fit to find
        # the speaker's callback runs ahead of the microphone by its output latency (~50 ms)
        while fb < len(session.far) and session.far[fb][0] <= stamp + 0.05:
            at, block = session.far[fb]
            c = time.process_time()
            reference.played(block, session.far_rate, at)
            cpu_filter += time.process_time() - c
            fb += 1
        c = time.process_time()
        out.append(flt.clean(AudioChunk(session.mic[i : i + chunk], RATE), stamp).samples)
        cpu_filter += time.process_time() - c
    cleaned = np.concatenate(out)[flt.latency :]
    n = min(len(cleaned), len(session.mic))
    mic, cleaned = session.mic[:n].astype(np.float64), cleaned[:n].astype(np.float64)

    def erle(spans: list[tuple[int, int]]) -> float:
        num = sum(np.sum(mic[a:b] ** 2) for a, b in spans if b <= n)
        den = sum(np.sum(cleaned[a:b] ** 2) for a, b in spans if b <= n)
        return float(10 * np.log10(num / den))

    near = [
        {
            "clip": clip,
            "cleaned": near_figures(cleaned[a:b], session.near[a:b]),
            "microphone": near_figures(mic[a:b], session.near[a:b]),
        }
        for clip, a, b in session.near_spans
        if b <= n
    ]
    first, rest = session.echo_spans[:1], session.echo_spans[1:]
    tail = int(0.3 * RATE)
    heard = [
        (clip, cleaned[a : b + tail], mic[a : b + tail], session.near[a : b + tail])
        for clip, a, b in session.near_spans
        if b + tail <= n
    ]
    return {
        "_heard": heard,
        "canceller": kind,
        "erle_db": erle(rest),
        "erle_first_reply_db": erle(first),
        "erle_by_reply_db": [erle([span]) for span in session.echo_spans],
        "running_erle_db": flt.erle_db,
        "working": flt.working(),
        "near": near,
        "spectral_match": float(np.median([x["cleaned"]["spectral_match"] for x in near])),
        "near_level_db": float(np.median([x["cleaned"]["level_db"] for x in near])),
        "near_sdr_db": float(np.median([x["cleaned"]["sdr_db"] for x in near])),
        "mic_near_sdr_db": float(np.median([x["microphone"]["sdr_db"] for x in near])),
        "cpu_per_audio_s": canceller.cpu_s / session.seconds,
        "filter_cpu_per_audio_s": cpu_filter / session.seconds,
        "delay_ms": reference.delay_at(t0 + session.seconds) * 1e3,
        "drift_ppm": reference.drift_ppm,
        "delay_measurements": reference.measurements,
    }


def summarize(runs: list[dict[str, Any]], kinds: list[str], asr: bool) -> dict[str, Any]:
    keys = ["erle_db", "erle_first_reply_db", "running_erle_db", "spectral_match", "near_level_db", "near_sdr_db", "mic_near_sdr_db",
            "cpu_per_audio_s", "filter_cpu_per_audio_s", "delay_ms", "drift_ppm"]  # fmt: skip
    keys += ["wer_cleaned", "wer_microphone", "wer_alone"] if asr else []
    out: dict[str, Any] = {}
    for kind in kinds:
        mine = [r for r in runs if r["canceller"] == kind]
        out[kind] = {k: {"median": float(np.median([r[k] for r in mine])), "min": float(np.min([r[k] for r in mine])),
                         "max": float(np.max([r[k] for r in mine]))} for k in keys}  # fmt: skip
        out[kind]["working_runs"] = sum(r["working"] for r in mine)
        out[kind]["runs"] = len(mine)
    return out


def table(summary: dict[str, Any]) -> str:
    rows = ["| canceller | ERLE dB (after 1st reply) | ERLE dB (1st reply) | running erle_db | near end: spectral match | "
            "near level dB | near SDR dB (mic) | WER of the user: cleaned (mic, alone) | CPU s per audio s (canceller / filter) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for kind, s in summary.items():
        m = {k: v["median"] for k, v in s.items() if isinstance(v, dict)}
        wer = "–"
        if "wer_cleaned" in m:
            wer = f"{m['wer_cleaned']:.1%} ({m['wer_microphone']:.1%}, {m['wer_alone']:.1%})"
        rows.append(
            f"| {kind} | {m['erle_db']:.1f} ({s['erle_db']['min']:.1f}–{s['erle_db']['max']:.1f}) | {m['erle_first_reply_db']:.1f} | "
            f"{m['running_erle_db']:.1f} | {m['spectral_match']:.3f} | {m['near_level_db']:+.1f} | {m['near_sdr_db']:.1f} "
            f"({m['mic_near_sdr_db']:.1f}) | {wer} | {m['cpu_per_audio_s']:.4f} / {m['filter_cpu_per_audio_s']:.4f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6, help="runs per canceller, interleaved (6 place all 18 clips)")
    parser.add_argument("--kinds", default="apm,speex", help=f"cancellers, comma-separated: apm, speex, {', '.join(VARIANTS)}")
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "hearth" / "bench-echo", help="synthesized replies"
    )
    parser.add_argument("--near-level", type=float, default=1.0, help="the user's voice against the echo, RMS ratio")
    parser.add_argument("--no-asr", action="store_true", help="skip recognizing the user's words in the cleaned audio")
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/echo-choice-<machine>.json)")
    args = parser.parse_args(argv)
    provenance = written_by("bench.echo.choice", argv)
    kinds = args.kinds.split(",")
    room = Room(near_level=args.near_level)
    replies, far_rate = synthesize_replies(REPLIES, args.cache)
    clips = human_clips()
    transcriber = None if args.no_asr else Transcriber()
    runs = []
    for r in range(args.runs):
        session = build_session(replies, far_rate, clips, room, seed=r)
        for kind in kinds if r % 2 == 0 else kinds[::-1]:
            result = run_one(kind, session)
            result["run"] = r
            heard = result.pop("_heard")
            if transcriber is not None:
                for item, (clip, cleaned, mic, near) in zip(result["near"], heard):
                    item["wer_cleaned"], item["heard_cleaned"] = transcriber.wer(clip, cleaned)
                    item["wer_microphone"], item["heard_microphone"] = transcriber.wer(clip, mic)
                    item["wer_alone"], item["heard_alone"] = transcriber.wer(clip, near)
                result["wer_cleaned"] = float(np.mean([x["wer_cleaned"] for x in result["near"]]))
                result["wer_microphone"] = float(np.mean([x["wer_microphone"] for x in result["near"]]))
                result["wer_alone"] = float(np.mean([x["wer_alone"] for x in result["near"]]))
            runs.append(result)
            print(f"run {r} {kind}: ERLE {result['erle_db']:.1f} dB, near match {result['spectral_match']:.3f}, "
                  f"CPU {result['cpu_per_audio_s']:.4f} s/s", file=sys.stderr)  # fmt: skip
    summary = summarize(runs, kinds, asr=transcriber is not None)
    report = {
        "written_by": provenance,
        "command": "python -m bench.echo.choice " + " ".join(provenance["arguments"]),
        "machine": machine(),
        "room": room.__dict__,
        "replies": [{"text": t, "seconds": len(a) / far_rate} for t, a in zip(REPLIES, replies)],
        "voice_rate": far_rate,
        "session_s": session.seconds,
        "summary": summary,
        "runs": runs,
    }
    out = args.out or RESULTS / f"echo-choice-{platform.machine()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(table(summary))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
