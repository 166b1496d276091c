"""Echo cancellation on the real audio path, under the loads hearth meets while it talks.

hearth's PortAudio speaker plays 10 s of voice into a PulseAudio room of its own
(:mod:`bench.echo.room`) and its microphone hears it back; the canceller's ERLE is taken over the
second half (the first is the canceller converging). A load runs meanwhile: nothing, other
processes keeping cores busy, or the reasoner writing its answer in hearth's own process on both
cores (a delegated question's reply is spoken while the rest is written), with busy processes
besides. Speaker latencies are interleaved run by run, so each pair saw the same machine::

    python -m bench.echo.real_path --loads idle reasoner reasoner+2 --latencies 0.05 0.1 --rounds 3 \\
        --out bench/results/echo-under-load-x86_64.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agent.model.llm import ChatMessage, LlamaChatModel, LlamaSettings
from audio.echo import EchoFilter, FarEndReference, make_canceller
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
from audio.protocols import AudioChunk, CapturedChunk

RATE = 16000
REASONER_ASK = "Tell me, step by step and at length, how to make a good chicken stock."


def voice_like(seconds: float, seed: int, pitch: float = 140.0) -> np.ndarray:
    """Voiced syllables (a gliding pitch with its harmonics, coloured noise) between short pauses."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    f0 = pitch * (1 + 0.15 * np.sin(2 * np.pi * 0.4 * t + seed))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 20))
    noise = np.convolve(rng.standard_normal(n), 0.8 ** np.arange(30))[:n]
    syllable = np.clip(np.sin(2 * np.pi * 3.0 * t + rng.uniform(0, 6)), 0, None) ** 0.5
    words = (np.sin(2 * np.pi * 0.35 * t + seed) > -0.5).astype(float)
    x = (voiced + 0.3 * noise) * syllable * words
    return (0.25 * x / np.sqrt(np.mean(x**2))).astype(np.float32)


@dataclass
class EchoRun:
    """What one reply of voice measured on the real path."""

    erle_db: float
    """Attenuation over the reply's second half: microphone energy over cleaned energy."""
    delay_s: float
    """The speaker-to-microphone delay the reference measured (NaN when never found)."""
    lags: list[float] = field(repr=False)
    """Each chunk's arrival after its capture time."""
    underruns: int
    """Callbacks PortAudio flagged as output underflow in the run."""
    echo: EchoFilter = field(repr=False)


async def play_and_measure(
    kind: str,
    beside: Callable[[], Awaitable[None]] | None = None,
    latency: float = 0.05,
    seconds: float = 10.0,
) -> EchoRun:
    """Play ``seconds`` of voice through hearth's speaker while its microphone hears the room, with
    ``beside`` running on the same loop meanwhile (cancelled at the end)."""
    echo = EchoFilter(make_canceller(kind), FarEndReference())
    speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=22050, latency=latency), reference=echo.reference)
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    energy: list[tuple[float, float, float]] = []  # (capture time, raw, cleaned)
    lags: list[float] = []

    async def listen() -> None:
        async for chunk in mic.chunks():
            assert isinstance(chunk, CapturedChunk)
            lags.append(time.monotonic() - chunk.captured_at)
            cleaned = echo.clean(chunk, chunk.captured_at)
            energy.append((chunk.captured_at, float(np.sum(chunk.samples.astype(np.float64) ** 2)),
                           float(np.sum(cleaned.samples.astype(np.float64) ** 2))))

    await speaker.start()
    await mic.start()
    listener = asyncio.create_task(listen())
    work = asyncio.create_task(beside()) if beside is not None else None
    try:
        voice = voice_like(seconds, seed=5)
        started = time.monotonic()
        for i in range(0, len(voice), RATE // 5):
            await speaker.write(AudioChunk(voice[i : i + RATE // 5], RATE))
        ended = await speaker.drain()
        await asyncio.sleep(0.5)
    finally:
        if work is not None:
            work.cancel()
        await mic.close()
        await speaker.close()
        await asyncio.gather(listener, *([work] if work is not None else []), return_exceptions=True)
    if work is not None and not work.cancelled() and (failed := work.exception()) is not None:
        raise failed
    rows = [(r, c) for at, r, c in energy if started + seconds / 2 <= at < ended]
    raw, cleaned = sum(r for r, _ in rows), sum(c for _, c in rows)
    delay = echo.reference.delay_at(ended) if echo.reference.delay_measured else float("nan")
    return EchoRun(float(10 * np.log10(max(raw, 1e-12) / max(cleaned, 1e-12))), delay, lags, speaker.underflows, echo)


@contextlib.contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` other processes, each keeping a core busy."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


async def warmed_reasoner(model_path: Path, threads: int = 2) -> LlamaChatModel:
    """The reasoner loaded, and its weights paged in by a first short reply, as in the running loop."""
    model = LlamaChatModel(LlamaSettings(model_path=model_path, n_threads=threads, max_tokens=200))
    await asyncio.to_thread(model.load)
    async for _ in model.stream([ChatMessage("user", REASONER_ASK)], max_tokens=8):
        pass
    return model


class WritingOn:
    """Keeps a chat model writing a long answer, again and again, counting the pieces it streams."""

    def __init__(self, model: LlamaChatModel) -> None:
        self.model = model
        self.pieces = 0

    async def __call__(self) -> None:
        ask = [ChatMessage("user", REASONER_ASK)]
        while True:
            async for _ in self.model.stream(ask):
                self.pieces += 1


def parse_load(load: str) -> tuple[bool, int]:
    """``idle``, ``busyN`` (N processes busy), ``reasoner`` or ``reasoner+N``: (reasoner writing, busy processes)."""
    if load == "idle":
        return False, 0
    if load.startswith("busy") and load[4:].isdigit():
        return False, int(load[4:])
    if load == "reasoner":
        return True, 0
    if load.startswith("reasoner+") and load[9:].isdigit():
        return True, int(load[9:])
    raise argparse.ArgumentTypeError(f"unknown load {load!r}: idle, busyN, reasoner or reasoner+N")


async def measure(loads: Sequence[str], latencies: Sequence[float], rounds: int, model_path: Path) -> list[dict]:
    from bench.echo.room import KitchenRoom, RoomSettings

    reasoner = await warmed_reasoner(model_path) if any(parse_load(load)[0] for load in loads) else None
    rows: list[dict] = []
    room = KitchenRoom(RoomSettings())
    room.open()
    try:
        for round_ in range(rounds):
            for load in loads:
                writing, busy = parse_load(load)
                for latency in latencies:
                    writer = WritingOn(reasoner) if writing and reasoner is not None else None
                    with busy_cores(busy):
                        run = await play_and_measure("speex", writer, latency=latency)
                    row = {"round": round_, "load": load, "latency_s": latency, "erle_db": round(run.erle_db, 1),
                           "working": run.echo.working(), "underruns": run.underruns,
                           "path_steps": run.echo.path_steps, "set_aside": run.echo.path_suspicions,
                           "delay_ms": round(1000 * run.delay_s, 1), "reasoner_pieces": writer.pieces if writer else None}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    finally:
        room.close()
    return rows


def summarise(rows: Sequence[dict]) -> list[dict]:
    """Per load and latency: runs, runs at 20 dB or more and working, the ERLE range, underruns' range."""
    groups: dict[tuple[str, float], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["load"], row["latency_s"]), []).append(row)
    return [
        {"load": load, "latency_s": latency, "runs": len(group),
         "held": sum(1 for r in group if r["erle_db"] >= 20.0 and r["working"]),
         "erle_db": [min(r["erle_db"] for r in group), max(r["erle_db"] for r in group)],
         "underruns": [min(r["underruns"] for r in group), max(r["underruns"] for r in group)]}
        for (load, latency), group in groups.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    from bench.provenance import written_by

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", nargs="+", default=["idle", "reasoner", "reasoner+2"],
                        help="idle, busyN, reasoner, reasoner+N")
    parser.add_argument("--latencies", nargs="+", type=float, default=[0.05, 0.1], help="speaker latencies, s")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reasoner", type=Path, default=None, help="GGUF (default: the installed qwen2.5-coder-1.5b)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    for load in args.loads:
        parse_load(load)
    model_path = args.reasoner
    if model_path is None:
        from models.store import default_models_dir

        model_path = default_models_dir() / "qwen2.5-coder-1.5b" / "model.gguf"
    rows = asyncio.run(measure(args.loads, args.latencies, args.rounds, model_path))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"written_by": written_by("bench.echo.real_path", argv), "summary": summarise(rows),
                                    "runs": rows}, indent=1) + "\n")
    print(json.dumps(summarise(rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
