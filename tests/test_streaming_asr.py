"""Streaming transducer recognizer: model files, the streaming loop (with a scripted engine),
and the parts of the real sherpa-onnx API it relies on.

No streaming transducer installs offline, so nothing here decodes with a real model.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from audio.protocols import AudioChunk, Recognizer, Transcript
from audio.streaming_asr import (
    SherpaStreamingRecognizer,
    StreamingSettings,
    TransducerFiles,
    find_transducer_files,
)

RATE = 16000
SCRIPT = "SET A TIMER FOR TEN MINUTES PLEASE".split()
RELEASE = "sherpa-onnx-streaming-zipformer-en-20M-2023-02-17"


def release_layout(directory: Path, parts: tuple[str, ...] = ("encoder", "decoder", "joiner")) -> Path:
    """The file names of k2-fsa's 20M English release (contents are placeholders)."""
    directory.mkdir(parents=True, exist_ok=True)
    for part in parts:
        (directory / f"{part}-epoch-99-avg-1.onnx").write_bytes(b"x")
        (directory / f"{part}-epoch-99-avg-1.int8.onnx").write_bytes(b"x")
    (directory / "tokens.txt").write_text("<blk> 0\n")
    return directory


class FakeStream:
    def __init__(self) -> None:
        self.accepted = 0
        self.decoded = 0
        self.finished = False
        self.rates: list[float] = []

    def accept_waveform(self, sample_rate: float, waveform: np.ndarray) -> None:
        assert not self.finished
        self.rates.append(sample_rate)
        self.accepted += int(len(waveform) * RATE / sample_rate)

    def input_finished(self) -> None:
        self.finished = True


class FakeEngine:
    """Decodes 0.1 s per step and emits one word of SCRIPT per 0.2 s decoded."""

    step = RATE // 10

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.steps = 0
        self.streams: list[FakeStream] = []

    def create_stream(self) -> FakeStream:
        self.streams.append(FakeStream())
        return self.streams[-1]

    def is_ready(self, s: FakeStream) -> bool:
        return s.accepted - s.decoded >= self.step or (s.finished and s.decoded < s.accepted)

    def decode_stream(self, s: FakeStream) -> None:
        if self.gate is not None:
            assert self.gate.wait(30), "test gate never opened"
        self.steps += 1
        s.decoded = min(s.accepted, s.decoded + self.step)

    def get_result(self, s: FakeStream) -> str:
        return " ".join(SCRIPT[: s.decoded // (RATE // 5)])


async def chunks_of(samples: np.ndarray, chunk_s: float = 0.1, rate: int = RATE) -> AsyncIterator[AudioChunk]:
    step = int(chunk_s * rate)
    for i in range(0, len(samples), step):
        yield AudioChunk(samples[i : i + step], rate)
        await asyncio.sleep(0)


async def collect(stream: AsyncIterator[Transcript]) -> list[Transcript]:
    return [t async for t in stream]


def recognizer_with(engine: FakeEngine, tail_padding_s: float = 0.66) -> SherpaStreamingRecognizer:
    return SherpaStreamingRecognizer(
        StreamingSettings(model_dir=Path("unused"), tail_padding_s=tail_padding_s), engine=engine
    )


# -- model files -----------------------------------------------------------------------------


def test_release_layout_picks_int8_encoder_and_joiner_with_float_decoder(tmp_path: Path) -> None:
    d = release_layout(tmp_path / RELEASE)
    assert find_transducer_files(d) == TransducerFiles(
        encoder=d / "encoder-epoch-99-avg-1.int8.onnx",
        decoder=d / "decoder-epoch-99-avg-1.onnx",
        joiner=d / "joiner-epoch-99-avg-1.int8.onnx",
        tokens=d / "tokens.txt",
    )
    full = find_transducer_files(d, prefer_int8=False)
    assert (full.encoder.name, full.decoder.name, full.joiner.name) == (
        "encoder-epoch-99-avg-1.onnx",
        "decoder-epoch-99-avg-1.onnx",
        "joiner-epoch-99-avg-1.onnx",
    )


def test_plain_names_and_int8_only_directories(tmp_path: Path) -> None:
    for part in ("encoder", "decoder", "joiner"):
        (tmp_path / f"{part}.int8.onnx").write_bytes(b"x")
    (tmp_path / "tokens.txt").write_text("<blk> 0\n")
    files = find_transducer_files(tmp_path, prefer_int8=False)
    assert files.decoder.name == "decoder.int8.onnx" and files.encoder.name == "encoder.int8.onnx"


def test_incomplete_directory_names_what_is_missing_in_one_line(tmp_path: Path) -> None:
    d = release_layout(tmp_path / RELEASE, parts=("encoder", "decoder"))
    with pytest.raises(FileNotFoundError) as error:
        find_transducer_files(d)
    assert str(error.value) == f"streaming model directory {d} is incomplete: missing joiner*.onnx"
    (d / "tokens.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing joiner\*\.onnx, tokens\.txt$"):
        find_transducer_files(d)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_transducer_files(tmp_path / "absent")


def test_ambiguous_directory_is_refused(tmp_path: Path) -> None:
    d = release_layout(tmp_path / RELEASE)
    (d / "encoder-epoch-30-avg-1.int8.onnx").write_bytes(b"x")
    with pytest.raises(ValueError, match="several encoder files"):
        find_transducer_files(d)


def test_constructor_does_no_io_and_load_reports_missing_files(tmp_path: Path) -> None:
    recognizer = SherpaStreamingRecognizer(StreamingSettings(model_dir=tmp_path))
    assert not recognizer.loaded
    assert isinstance(recognizer, Recognizer)
    with pytest.raises(FileNotFoundError) as error:
        recognizer.load()
    message = str(error.value)
    assert "\n" not in message
    assert message.endswith("missing encoder*.onnx, decoder*.onnx, joiner*.onnx, tokens.txt")


def test_load_reaches_sherpa_onnx_with_accepted_arguments(tmp_path: Path) -> None:
    # Placeholder files get past our checks and the Python wrapper's keyword arguments,
    # and fail only in the native ONNX loader.
    recognizer = SherpaStreamingRecognizer(StreamingSettings(model_dir=release_layout(tmp_path / RELEASE)))
    with pytest.raises(RuntimeError, match=r"(?i)protobuf|load model"):
        recognizer.load()


def test_sherpa_onnx_has_the_calls_we_use() -> None:
    import sherpa_onnx

    for name in ("create_stream", "is_ready", "decode_stream", "get_result"):
        assert callable(getattr(sherpa_onnx.OnlineRecognizer, name))
    for name in ("accept_waveform", "input_finished"):
        assert callable(getattr(sherpa_onnx.OnlineStream, name))
    params = inspect.signature(sherpa_onnx.OnlineRecognizer.from_transducer).parameters
    for name in ("tokens", "encoder", "decoder", "joiner", "num_threads", "sample_rate", "feature_dim",
                 "enable_endpoint_detection", "decoding_method", "max_active_paths", "model_type", "provider"):
        assert name in params


# -- the streaming loop ------------------------------------------------------------------------


async def test_partials_then_one_final_with_tail_padding() -> None:
    engine = FakeEngine()
    recognizer = recognizer_with(engine, tail_padding_s=0.4)
    audio = np.zeros(int(1.0 * RATE), dtype=np.float32)
    transcripts = await collect(recognizer.transcribe(chunks_of(audio)))
    assert transcripts[-1].is_final and not any(t.is_final for t in transcripts[:-1])
    partials = transcripts[:-1]
    assert [t.text for t in partials] == [" ".join(SCRIPT[:n]) for n in range(1, 6)]
    for i, earlier in enumerate(transcripts):
        for later in transcripts[i + 1 :]:
            assert later.text.startswith(earlier.text[: earlier.stable_chars])
    # The tail padding lets the last 0.4 s decode too: 1.4 s -> 7 words.
    assert transcripts[-1].text == " ".join(SCRIPT[:7])
    assert transcripts[-1].stable_chars == len(transcripts[-1].text)
    assert transcripts[-1].audio_s == pytest.approx(1.0)
    stream = engine.streams[-1]
    assert stream.finished and stream.accepted == int(1.4 * RATE)


async def test_other_sample_rates_go_to_sherpa_onnx_as_they_are() -> None:
    engine = FakeEngine()
    audio = np.zeros(8000, dtype=np.float32)
    transcripts = await collect(recognizer_with(engine).transcribe(chunks_of(audio, 0.1, rate=8000)))
    assert engine.streams[-1].rates[0] == 8000
    assert transcripts[-1].audio_s == pytest.approx(1.0)


async def test_no_audio_gives_an_empty_final() -> None:
    engine = FakeEngine()
    transcripts = await collect(recognizer_with(engine).transcribe(chunks_of(np.zeros(0, dtype=np.float32))))
    assert transcripts == [Transcript("", True, 0, 0.0, "")]
    assert engine.steps == 0


async def test_cancelling_stops_decoding() -> None:
    gate = threading.Event()
    engine = FakeEngine(gate)
    recognizer = recognizer_with(engine)
    task = asyncio.create_task(collect(recognizer.transcribe(chunks_of(np.zeros(RATE, dtype=np.float32), 0.5))))
    while not engine.streams or engine.streams[-1].accepted == 0:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()  # the decode step in flight finishes; the loop must not take another
    await asyncio.sleep(0.05)
    assert engine.steps <= 1
