"""Moonshine base on the real converted model: a recorded request, synthetic speech, the
checked draft against a plain decode, and the installed files against the wheel's."""

from __future__ import annotations

import asyncio
import wave
from pathlib import Path

import numpy as np
import pytest

from audio.moonshine_asr import MoonshineRecognizer, MoonshineSettings
from audio.moonshine_model import MoonshineFiles, MoonshineModel
from tests.speech import espeak, silence
from tests.test_whisper_asr import assert_well_formed, chunks_of, collect
from tests.test_whisper_asr_integration import word_error_rate

pytestmark = pytest.mark.integration

PANCAKES = Path(__file__).parent / "data" / "find-me-a-recipe-for-pancakes.wav"


def _pancakes() -> np.ndarray:
    with wave.open(str(PANCAKES)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768


@pytest.fixture(scope="module")
def moonshine(model_path) -> MoonshineRecognizer:
    recognizer = MoonshineRecognizer(MoonshineSettings(model_dir=model_path("moonshine-base-en")))
    recognizer.load()
    recognizer.warm()
    return recognizer


async def test_a_recorded_request_streams_to_its_words(moonshine: MoonshineRecognizer) -> None:
    transcripts = await collect(moonshine.transcribe(chunks_of(_pancakes(), 0.1, 0.05)))
    assert_well_formed(transcripts)
    final = transcripts[-1]
    assert word_error_rate("find me a recipe for pancakes", final.text) == 0.0
    assert len(transcripts) > 2, "partials while the request grew"
    assert [w.strip(",.").lower() for w, _ in final.word_probs] == ["find", "me", "a", "recipe", "for", "pancakes"]
    assert all(0.0 < p <= 1.0 for _, p in final.word_probs)
    # The final checked the last partial's tokens, or was that partial.
    assert moonshine.last_final is not None
    assert moonshine.last_final.decoded.accepted > 0 or moonshine.last_decode_s == 0.0


SYNTHETIC = ["set a timer for ten minutes", "add olive oil to the shopping list", "what is the weather tomorrow",
             "take a note call the plumber", "how many grams in a cup of flour", "pause the timer"]


def test_synthetic_commands_are_mostly_heard(moonshine: MoonshineRecognizer, tmp_path: Path) -> None:
    # espeak-ng's voice is far from the speech Moonshine learned on: some kitchen words go
    # ("olive oil", "grams"), which is why the figures that matter are on human and Piper voices.
    errors = [
        word_error_rate(said, moonshine.decode(np.concatenate([silence(0.3), espeak(said, "en-us", tmp_path), silence(0.3)])))
        for said in SYNTHETIC
    ]
    assert sum(e == 0.0 for e in errors) >= 4 and sum(errors) / len(errors) <= 0.25, errors


def test_a_checked_draft_changes_nothing_the_model_says(model_path) -> None:
    model = MoonshineModel(MoonshineFiles.in_dir(model_path("moonshine-base-en")))
    model.load()
    audio = _pancakes()
    plain = model.transcribe(audio, 40)
    assert plain.ended and plain.steps == len(plain.tokens) + 1
    early = model.transcribe(audio[: len(audio) // 2], 40)
    for draft in (plain.tokens, early.tokens, plain.tokens[:3] + (999,) + plain.tokens[4:], ()):
        checked = model.transcribe(audio, 40, draft)
        assert checked.tokens == plain.tokens
        np.testing.assert_allclose(checked.logprobs, plain.logprobs, atol=1e-3)
    whole = model.transcribe(audio, 40, plain.tokens)
    assert whole.accepted == len(plain.tokens) and whole.steps == 1


def test_silence_and_a_tap_of_noise_say_nothing_long(moonshine: MoonshineRecognizer) -> None:
    assert moonshine.decode(np.zeros(16000, np.float32)) == ""
    noise = np.random.default_rng(3).normal(0, 0.02, 8000).astype(np.float32)
    assert len(moonshine.decode(noise).split()) <= 4


def test_the_installed_files_are_the_converted_wheel(model_path) -> None:
    from models.manifest import load_manifest
    from models.store import sha256_file

    entry = next(e for e in load_manifest().model if e.name == "moonshine-base-en")
    folder = model_path("moonshine-base-en")
    for spec in entry.files:
        digest = spec.expected()
        assert digest is not None and sha256_file(folder / spec.rel) == digest.sha256


def test_a_second_utterance_after_a_cancelled_one_is_heard(moonshine: MoonshineRecognizer) -> None:
    async def run() -> str:
        stream = moonshine.transcribe(chunks_of(_pancakes(), 0.1, 0.05))
        async for _ in stream:
            break
        await stream.aclose()
        return (await collect(moonshine.transcribe(chunks_of(_pancakes(), 0.2))))[-1].text

    assert word_error_rate("find me a recipe for pancakes", asyncio.run(run())) == 0.0


def test_a_beam_search_keeps_the_greedy_hearing_first_and_gives_rivals(model_path) -> None:
    model = MoonshineModel(MoonshineFiles.in_dir(model_path("moonshine-base-en")))
    model.load()
    audio = _pancakes()
    greedy = model.transcribe(audio, 40)
    found = model.hypotheses(audio, 40, 5)
    assert len(found) == 5 and all(h.ended for h in found)
    assert found[0].tokens == greedy.tokens
    assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)
    texts = {model.tokenizer.decode(h.tokens) for h in found}
    assert len(texts) == 5 and all("recipe" in t for t in texts)


def test_the_household_words_make_the_final_a_weighed_beam(model_path) -> None:
    recognizer = MoonshineRecognizer(MoonshineSettings(model_dir=model_path("moonshine-base-en"), hypotheses=5))
    recognizer.load()
    final = recognizer.final(_pancakes(), context="pancakes, waffles")
    assert word_error_rate("find me a recipe for pancakes", final.text) == 0.0
    assert len(final.alternatives) == 5 and final.word_probs
