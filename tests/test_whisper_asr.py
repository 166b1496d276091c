"""Whisper recognizer: stable-prefix policy, scheduling and cancellation, the full-window final, the
hallucination filter and the n best, on a scripted decoder."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audio.protocols import AudioChunk, Recognizer, Transcript
from audio.whisper_asr import StablePrefix, WhisperRecognizer, WhisperSettings, is_silence
from audio.whisper_decode import Checks, Decode, speech_text

from tests.speech import RATE, silence
SCRIPT = "set a timer for ten minutes please".split()


# -- helpers ---------------------------------------------------------------------------------


async def chunks_of(samples: np.ndarray, chunk_s: float = 0.1, pause_s: float = 0.0) -> AsyncIterator[AudioChunk]:
    step = int(chunk_s * RATE)
    for i in range(0, len(samples), step):
        yield AudioChunk(samples[i : i + step], RATE)
        await asyncio.sleep(pause_s)


async def collect(stream: AsyncIterator[Transcript]) -> list[Transcript]:
    return [t async for t in stream]


def assert_partials_well_formed(partials: list[Transcript]) -> None:
    """Every stable prefix survives in every later partial."""
    for i, earlier in enumerate(partials):
        prefix = earlier.text[: earlier.stable_chars]
        for later in partials[i + 1 :]:
            assert later.text.startswith(prefix), (earlier, later)
            assert later.stable_chars >= earlier.stable_chars


def assert_well_formed(transcripts: list[Transcript]) -> None:
    """Exactly one final, last, which is a whole hypothesis; partials' stable prefixes only grow."""
    assert transcripts and transcripts[-1].is_final
    assert not any(t.is_final for t in transcripts[:-1])
    assert_partials_well_formed(transcripts[:-1])
    assert transcripts[-1].hypothesis == transcripts[-1].text


class ScriptedDecoder:
    """Reveals one more word of SCRIPT per ``seconds_per_word`` of audio; records calls."""

    def __init__(self, seconds_per_word: float = 0.2, gate: threading.Event | None = None) -> None:
        self.seconds_per_word = seconds_per_word
        self.gate = gate
        self.calls: list[int] = []
        self.running = 0
        self.max_running = 0
        self._lock = threading.Lock()

    def __call__(self, samples: np.ndarray, window_s: float, prompt: str) -> Decode:
        with self._lock:
            self.calls.append(len(samples))
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            if self.gate is not None:
                assert self.gate.wait(30), "test gate never opened"
            n = int(len(samples) / (RATE * self.seconds_per_word) + 1e-9)
            return Decode(" ".join(SCRIPT[:n]), window_s=window_s)
        finally:
            with self._lock:
                self.running -= 1


def sound(seconds: float) -> np.ndarray:
    """Quiet noise, loud enough not to be taken for silence (which is never decoded)."""
    return np.random.default_rng(7).normal(0.0, 0.01, int(seconds * RATE)).astype(np.float32)


async def held_until(covered: asyncio.Event, audio: np.ndarray) -> AsyncIterator[AudioChunk]:
    """``audio`` in 0.1 s chunks, then the utterance held open (the speaker keeps the button held)
    until ``covered`` is set: a partial covering all of it has come."""
    async for chunk in chunks_of(audio, 0.1):
        yield chunk
    await covered.wait()


def fake_recognizer(decoder: Callable[[np.ndarray, float, str], Decode], interval: float = 0.05, **settings: object) -> WhisperRecognizer:
    options = WhisperSettings(
        model_dir=Path("unused"), partial_interval_s=interval, min_partial_audio_s=0.1, lead_silence_s=0.0, **settings  # type: ignore[arg-type]
    )
    return WhisperRecognizer(options, decoder=decoder)


# -- the stable-prefix policy ------------------------------------------------------------------


def test_agreed_words_are_committed_except_the_newest_last_word() -> None:
    policy = StablePrefix()
    assert policy.update("Set a") == ("Set a", 0)
    # "Set a" agreed; "a" is not the newest hypothesis' last word, so both commit.
    assert policy.update("Set a timer") == ("Set a timer", len("Set a"))
    # Agreement on "set a timer" (case and punctuation aside) commits "timer" in its new spelling.
    assert policy.update("set a timer, for") == ("Set a timer, for", len("Set a timer,"))


def test_committed_words_stay_in_later_partials() -> None:
    policy = StablePrefix()
    policy.update("Set a timer for")
    policy.update("Set a timer for ten")
    assert policy.committed == "Set a timer for"
    # The model changes its mind about the beginning: the shown partial keeps the committed words.
    text, stable = policy.update("Said a time for ten minutes")
    assert text == "Set a timer for ten minutes"
    assert text[:stable] == "Set a timer for"


def test_an_empty_hypothesis_keeps_the_committed_words_on_show() -> None:
    policy = StablePrefix()
    policy.update("turn off")
    policy.update("turn off the oven")
    assert policy.update("") == ("turn off", len("turn off"))


@given(st.lists(st.lists(st.sampled_from(["set", "Set", "a", "timer", "timer.", "ten", "10", "for"]), max_size=8)))
def test_stable_prefixes_only_grow(hypotheses: list[list[str]]) -> None:
    policy = StablePrefix()
    shown: list[Transcript] = []
    for words in hypotheses:
        text, stable = policy.update(" ".join(words))
        shown.append(Transcript(text, False, stable))
    assert_partials_well_formed(shown)


# -- the hallucination filter --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decode", "expected"),
    [
        # Values measured on silence and noise with tiny.en and base.
        (Decode(" you", 0.74, -1.06), ""),
        (Decode(" .", 0.94, -1.24), ""),
        (Decode(" I'm", 0.74, -2.2), ""),
        (Decode(" 이 영상은", 0.73, -2.6), ""),
        (Decode(" Thank you.", 0.55, -0.8), ""),
        # Real speech: a short "thank you" said to the assistant, and ordinary commands.
        (Decode(" Thank you.", 0.38, -0.17), "Thank you."),
        (Decode(" Set a timer for 10 minutes.", 0.24, -0.38), "Set a timer for 10 minutes."),
        (Decode(" 타이머 맞춰 주세요", 0.08, -1.35), "타이머 맞춰 주세요"),
        (Decode(""), ""),
    ],
)
def test_speech_text_drops_phantoms_of_silence(decode: Decode, expected: str) -> None:
    assert speech_text(decode, Checks()) == expected


def test_is_silence() -> None:
    rng = np.random.default_rng(1)
    assert is_silence(silence(1.0), 0.001)
    assert is_silence(rng.normal(0, 1e-4, RATE).astype(np.float32), 0.001)
    assert not is_silence(rng.normal(0, 0.01, RATE).astype(np.float32), 0.001)
    assert is_silence(np.zeros(0, dtype=np.float32), 0.001)
    burst = silence(1.0)
    burst[8000:8400] = 0.1  # one short click is louder than the floor
    assert not is_silence(burst, 0.001)


# -- scheduling, reuse and cancellation with a scripted decoder ----------------------------------


def test_constructor_does_no_io(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=tmp_path / "nowhere"))
    assert not recognizer.loaded
    assert isinstance(recognizer, Recognizer)
    assert recognizer.language == "en" and recognizer.sample_rate == RATE


def test_incomplete_model_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"")
    (tmp_path / "config.json").write_text("{}")
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=tmp_path))
    with pytest.raises(FileNotFoundError, match=r"missing tokenizer\.json"):
        recognizer.load()


async def test_partials_grow_and_one_final_ends() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder)
    audio = sound(1.6)
    transcripts = await collect(recognizer.transcribe(chunks_of(audio, 0.05, pause_s=0.02)))
    assert_well_formed(transcripts)
    partials = [t for t in transcripts if not t.is_final]
    assert partials, "no partial before the final"
    assert transcripts[-1].text == " ".join(SCRIPT[:8])
    assert transcripts[-1].audio_s == pytest.approx(1.6)
    assert all(t.audio_s <= 1.6 for t in partials)
    assert any(t.stable_chars > 0 for t in partials)
    assert decoder.max_running == 1


async def test_final_reuses_a_whole_partial_that_covered_all_audio() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder, partial_window="full")
    audio = sound(1.0)
    covered = asyncio.Event()
    transcripts: list[Transcript] = []
    async for t in recognizer.transcribe(held_until(covered, audio)):
        transcripts.append(t)
        if t.audio_s == pytest.approx(1.0):
            covered.set()
    assert_well_formed(transcripts)
    assert decoder.calls.count(len(audio)) == 1
    assert transcripts[-1].text == " ".join(SCRIPT[:5])


async def test_final_decodes_all_audio_when_partials_lag() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder, interval=60.0)  # no tick before the audio ends
    audio = sound(0.8)
    transcripts = await collect(recognizer.transcribe(chunks_of(audio, 0.1)))
    assert [t.is_final for t in transcripts] == [True]
    assert decoder.calls == [len(audio)]
    assert transcripts[0].text == " ".join(SCRIPT[:4])


async def test_busy_ticks_are_skipped_and_decodes_never_overlap() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=0.01)
    first_call = asyncio.Event()

    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(sound(0.2), RATE)
        while not decoder.calls:
            await asyncio.sleep(0.005)
        first_call.set()
        yield AudioChunk(sound(0.3), RATE)
        # Many ticks pass while the first decode is blocked.
        await asyncio.sleep(0.2)
        gate.set()

    transcripts = await collect(recognizer.transcribe(source()))
    assert first_call.is_set()
    assert decoder.max_running == 1
    # One blocked partial, then (at most one more partial and) the final of all audio.
    assert decoder.calls[0] == int(0.2 * RATE) and decoder.calls[-1] == int(0.5 * RATE)
    assert len(decoder.calls) <= 3
    assert transcripts[-1].is_final and transcripts[-1].text == " ".join(SCRIPT[:2])


async def test_cancelling_the_consumer_stops_further_decodes() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=0.01)
    received: list[Transcript] = []

    async def consume() -> None:
        async for t in recognizer.transcribe(chunks_of(sound(30.0), 0.1, pause_s=0.01)):
            received.append(t)

    task = asyncio.create_task(consume())
    while not decoder.calls:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    calls = len(decoder.calls)
    gate.set()  # the blocked decode finishes; its result must go nowhere
    await asyncio.sleep(0.1)
    assert len(decoder.calls) == calls == 1
    assert received == []


async def test_cancelling_during_the_final_decode() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=60.0)
    task = asyncio.create_task(collect(recognizer.transcribe(chunks_of(sound(0.5), 0.1))))
    while not decoder.calls:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    await asyncio.sleep(0.05)
    assert decoder.calls == [int(0.5 * RATE)]


async def test_no_audio_gives_an_empty_final_without_decoding() -> None:
    decoder = ScriptedDecoder()
    transcripts = await collect(fake_recognizer(decoder).transcribe(chunks_of(sound(0.0))))
    assert transcripts == [Transcript("", True, 0, 0.0, "")]
    assert decoder.calls == []


async def test_wrong_sample_rate_is_refused() -> None:
    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(sound(0.1), 48000)

    with pytest.raises(ValueError, match="48000"):
        await collect(fake_recognizer(ScriptedDecoder()).transcribe(source()))


async def test_audio_source_errors_reach_the_consumer() -> None:
    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(sound(0.1), RATE)
        raise OSError("microphone unplugged")

    with pytest.raises(OSError, match="unplugged"):
        await collect(fake_recognizer(ScriptedDecoder()).transcribe(source()))


# -- a final that keeps every word, whatever the CPU's arithmetic does to a short window -----------

PANCAKES = "Find me a recipe for pancakes."


class RecordedDecoder:
    """Gives, per encoder window, what Whisper tiny.en was recorded giving on the pancake request
    (``tests/data/find-me-a-recipe-for-pancakes.wav``) on machines whose arithmetic differs; records
    each call's window."""

    def __init__(self, fit: Decode, full: Decode = Decode(" " + PANCAKES, 0.055, -0.19), partial: Decode | None = None) -> None:
        self.fit, self.full, self.partial = fit, full, partial
        self.windows: list[float] = []

    def __call__(self, samples: np.ndarray, window_s: float, prompt: str) -> Decode:
        self.windows.append(window_s)
        if window_s >= 30.0:
            return self.full
        if self.partial is not None and len(samples) < 2.0 * RATE:
            return self.partial
        return self.fit


LOOP = Decode(
    "Find me a recipe for pancakes Find me a recipe for pancakes Find me a recipe for pancakes Find me",
    0.025, -0.105, compression_ratio=2.9, ended=False, window_s=8.0,
)
"""This machine (Intel): a repetition loop up to the token cap."""
EMPTY = Decode("", 0.74, -1.3, window_s=8.0)
"""The machine of the report (AMD EPYC): nothing at all."""
ECHO_FREE_SHORT = Decode("Find me a recipe.", 0.05, -0.4, window_s=8.0)
"""A cut short-window decode that reads like a whole sentence."""


@pytest.mark.parametrize("fit", [LOOP, EMPTY, Decode("Find me a recipe for pancakes. Find me a recipe for pancakes.", window_s=8.0)])
async def test_a_distrusted_short_window_final_is_decoded_again_in_the_full_window(fit: Decode) -> None:
    decoder = RecordedDecoder(fit)
    recognizer = fake_recognizer(decoder, interval=60.0, final_window="fit")
    transcripts = await collect(recognizer.transcribe(chunks_of(sound(2.6), 0.1)))
    assert transcripts[-1].text == PANCAKES
    assert decoder.windows[-2:] == [8.0, 30.0]
    assert recognizer.last_final is not None and "full window" in recognizer.last_final.note


async def test_the_default_final_is_decoded_in_the_full_window_so_a_short_window_cannot_cut_it() -> None:
    # A cut short-window decode passes every check; only the full window gets the request whole.
    decoder = RecordedDecoder(ECHO_FREE_SHORT)
    transcripts = await collect(fake_recognizer(decoder, interval=60.0).transcribe(chunks_of(sound(2.6), 0.1)))
    assert transcripts[-1].text == PANCAKES
    assert decoder.windows == [30.0]


async def test_a_prefix_only_partial_does_not_become_the_final() -> None:
    # Partials agreed on "Find me a recipe"; the last one, covering all the audio, is an empty
    # short-window decode.  The shown text keeps the prefix, but it is not offered as a whole
    # hypothesis, and the final is the full decode of all the audio.
    decoder = RecordedDecoder(EMPTY, partial=ECHO_FREE_SHORT)
    recognizer = fake_recognizer(decoder, interval=0.01)
    transcripts = await collect(recognizer.transcribe(chunks_of(sound(2.6), 0.1, pause_s=0.03)))
    partials = [t for t in transcripts if not t.is_final]
    assert any(t.text.startswith("Find me a recipe") for t in partials)
    assert all(t.hypothesis is None for t in partials)
    assert transcripts[-1].text == transcripts[-1].hypothesis == PANCAKES


def test_repetition_and_prompt_echo_are_reasons_not_to_believe_a_decode() -> None:
    from audio.whisper_decode import collapse_repetition, distrust

    checks = Checks()
    assert distrust(LOOP, "", checks) == "no_end"
    assert distrust(Decode("Try again. Try again."), "", checks) == "repetition"
    assert distrust(Decode("Set a timer for ten minutes."), "", checks) is None
    prompt = "Kitchen timer, shopping list, recipes. Grams, cups, ounces, tablespoons, Celsius."
    assert distrust(Decode("Grams, cups, ounces, tablespoons, Celsius.", prompted=True), prompt, checks) == "echo"
    assert distrust(Decode("How many grams in two cups?", prompted=True), prompt, checks) is None
    assert collapse_repetition("Add bananas too. Add bananas too. Add bananas too.") == "Add bananas too."
    assert collapse_repetition("Set a timer for ten minutes.") == "Set a timer for ten minutes."


async def test_the_context_reaches_the_decoder_as_its_prompt() -> None:
    prompts: list[str] = []

    def decoder(samples: np.ndarray, window_s: float, prompt: str) -> Decode:
        prompts.append(prompt)
        return Decode("How many grams in a cup?")

    recognizer = fake_recognizer(decoder, interval=60.0)
    await collect(recognizer.transcribe(chunks_of(sound(1.0), 0.1), "Grams, cups."))
    assert prompts == ["Grams, cups."]


async def test_a_final_asked_for_its_n_best_is_a_beam_search_and_carries_them() -> None:
    asked: list[int] = []
    beam = (("참가.", -0.84), ("잠깐.", -1.44), ("참고.", -1.6))

    def decoder(samples: np.ndarray, window_s: float, prompt: str, hypotheses: int = 1) -> Decode:
        asked.append(hypotheses)
        return Decode(beam[0][0], avg_logprob=beam[0][1], alternatives=beam if hypotheses > 1 else ())

    # Without a context, and with the settings' own width at 1: asked for, the final still searches.
    recognizer = fake_recognizer(decoder, interval=60.0, hypotheses=1)
    transcripts = await collect(recognizer.transcribe(chunks_of(sound(0.6), 0.1), hypotheses=5))
    assert asked == [5]
    assert transcripts[-1].is_final and transcripts[-1].text == "참가."
    assert transcripts[-1].alternatives == beam
    # Not asked for: greedy, and none.
    asked.clear()
    transcripts = await collect(recognizer.transcribe(chunks_of(sound(0.6), 0.1)))
    assert asked == [1] and transcripts[-1].alternatives == ()


async def test_a_final_asked_for_its_n_best_is_not_a_greedy_partial_reused() -> None:
    asked: list[int] = []

    def decoder(samples: np.ndarray, window_s: float, prompt: str, hypotheses: int = 1) -> Decode:
        asked.append(hypotheses)
        return Decode("stop", window_s=window_s, alternatives=(("stop", -0.1), ("stop it", -0.5)) if hypotheses > 1 else ())

    recognizer = fake_recognizer(decoder, partial_window="full")
    covered = asyncio.Event()
    transcripts: list[Transcript] = []
    async for t in recognizer.transcribe(held_until(covered, sound(1.0)), hypotheses=3):
        transcripts.append(t)
        if not t.is_final and t.audio_s == pytest.approx(1.0):
            covered.set()
    assert asked[-1] == 3 and set(asked[:-1]) == {1}
    assert transcripts[-1].alternatives == (("stop", -0.1), ("stop it", -0.5))


# -- real models ---------------------------------------------------------------------------------


