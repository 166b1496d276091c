"""The Kokoro synthesizer without the real model: a tiny ONNX stand-in with Kokoro's inputs and output."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import numpy as np
import pytest

from audio.kokoro_tts import MAX_TOKENS, KokoroError, KokoroSettings, KokoroSynthesizer, _fit
from audio.protocols import Synthesizer

VOCAB = {" ": 16, ",": 3, ".": 4, "?": 6, "a": 43, "e": 47, "i": 51, "k": 53, "n": 56, "o": 57}


def _stand_in(model_dir: Path, voices: tuple[str, ...] = ("jf_alpha", "jm_kumo")) -> Path:
    """A model that returns one sample per token (token id / 100) plus the style's first value:
    enough to see which tokens and which style were sent."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["tokens"], ["as_float"], to=TensorProto.FLOAT),
            helper.make_node("Constant", [], ["hundredth"], value=helper.make_tensor("h", TensorProto.FLOAT, [], [0.01])),
            helper.make_node("Mul", ["as_float", "hundredth"], ["scaled"]),
            helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.INT64, [2], [0, 0])),
            helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", TensorProto.INT64, [2], [1, 1])),
            helper.make_node("Slice", ["style", "zero", "one"], ["first_style"]),
            helper.make_node("Add", ["scaled", "first_style"], ["shifted"]),
            helper.make_node("Constant", [], ["flat"], value=helper.make_tensor("f", TensorProto.INT64, [1], [-1])),
            helper.make_node("Reshape", ["shifted", "flat"], ["audio"]),
        ],
        "kokoro-stand-in",
        [
            helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, None]),
            helper.make_tensor_value_info("style", TensorProto.FLOAT, [1, 256]),
            helper.make_tensor_value_info("speed", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    model_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(model_dir / "model.onnx"))
    # Style row r starts with r / 1000, so the audio tells which row (input length) was used.
    styles = {name: np.tile((np.arange(510, dtype=np.float32) / 1000).reshape(510, 1, 1), (1, 1, 256)) for name in voices}
    np.savez(model_dir / "voices.npz", **styles)
    (model_dir / "vocab.json").write_text(json.dumps({"vocab": VOCAB}), encoding="utf-8")
    return model_dir


def _loaded(tmp_path: Path, phonemize=lambda text: text, **settings) -> KokoroSynthesizer:
    settings = {"voice": "jf_alpha", "lead_s": 1.0, "tail_s": 1.0, **settings}
    synth = KokoroSynthesizer(KokoroSettings(model_dir=_stand_in(tmp_path / "kokoro"), **settings), phonemize=phonemize)
    asyncio.run(synth.load())
    return synth


async def _collect(synth: KokoroSynthesizer, text: str) -> list[np.ndarray]:
    return [chunk.samples async for chunk in synth.synthesize(text)]


def test_it_is_a_synthesizer_and_constructing_reads_nothing(tmp_path: Path) -> None:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=tmp_path / "nowhere"))
    assert isinstance(synth, Synthesizer)
    assert (synth.language, synth.sample_rate, synth.loaded) == ("ko", 24000, False)


def test_a_missing_model_says_how_to_install_it(tmp_path: Path) -> None:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=tmp_path / "kokoro-82m-ja"))
    with pytest.raises(KokoroError, match=r"missing model\.onnx, voices\.npz, vocab\.json.*hearth models install kokoro-82m-ja"):
        asyncio.run(synth.load())
    assert not synth.loaded


def test_an_unknown_voice_names_the_ones_there_are(tmp_path: Path) -> None:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=_stand_in(tmp_path / "kokoro"), voice="ko_nobody"))
    with pytest.raises(KokoroError, match="no voice 'ko_nobody'; it has jf_alpha, jm_kumo"):
        asyncio.run(synth.load())


def test_synthesizing_before_load_is_an_error(tmp_path: Path) -> None:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=tmp_path))

    async def go() -> None:
        async for _ in synth.synthesize("안녕하세요."):
            pass

    with pytest.raises(RuntimeError, match="load"):
        asyncio.run(go())


def test_one_chunk_per_sentence_with_the_pads_and_the_style_of_its_length(tmp_path: Path) -> None:
    synth = _loaded(tmp_path)
    chunks = asyncio.run(_collect(synth, "kan. nie?"))
    assert len(chunks) == 2
    # "kan." is 4 tokens: the pads (0) around k a n . and the style row for 4 tokens (0.003).
    expected = np.array([0, 53, 43, 56, 4, 0], dtype=np.float32) / 100 + 0.003
    np.testing.assert_allclose(chunks[0], np.clip(expected, -1, 1), atol=1e-6)
    assert len(chunks[1]) == 6


def test_the_korean_pipeline_is_the_default(tmp_path: Path) -> None:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=tmp_path))
    assert synth.phonemes("감자 1개를 넣어요. 네!") == ["kamʥa han keɾɯl nʌʌjo.", "ne!"]


def test_symbols_outside_the_vocabulary_are_dropped(tmp_path: Path) -> None:
    synth = _loaded(tmp_path)
    assert synth.tokens("kʌn.") == [53, 56, 4]


def test_text_without_letters_makes_no_sound(tmp_path: Path) -> None:
    synth = _loaded(tmp_path)
    assert asyncio.run(_collect(synth, " ... !? 🙂")) == []


def test_a_long_sentence_is_split_to_fit_the_model() -> None:
    sentence = ", ".join(["kanakana " * 10] * 12)
    pieces = _fit(sentence, MAX_TOKENS)
    assert len(pieces) > 1 and all(len(p) <= MAX_TOKENS for p in pieces)
    assert "".join(pieces).replace(" ", "") == sentence.replace(" ", "")
    assert _fit("k" * 1100, MAX_TOKENS) == ["k" * 510, "k" * 510, "k" * 80]


def test_closing_the_consumer_stops_before_the_next_sentence(tmp_path: Path) -> None:
    seen: list[str] = []
    synth = _loaded(tmp_path)
    original = synth._run

    def counting(phonemes: str) -> np.ndarray:
        seen.append(phonemes)
        time.sleep(0.02)  # a real sentence takes a second or so
        return original(phonemes)

    synth._run = counting  # type: ignore[method-assign]

    async def first_only() -> None:
        stream = synth.synthesize(". ".join(["kan"] * 50) + ".")
        async for _ in stream:
            break
        await stream.aclose()
        await asyncio.sleep(0.2)

    asyncio.run(first_only())
    assert 1 <= len(seen) < 10
