"""Moonshine's tokenizer, the draft-checking greedy decode, and the recognizer's partials and
final, with a scripted decoder in place of the model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from audio.moonshine_asr import MoonshineRecognizer, MoonshineSettings
from audio.moonshine_model import BOS, EOS, Decoded, Hypothesis, MoonshineFiles, MoonshineTokenizer, TokenizerError, beam_search, greedy
from audio.protocols import AudioChunk, Recognizer
from audio.whisper_rescore import Lexicon

VOCAB = 16
PIECES = [b"<unk>", b"<s>", b"</s>", "\u2581set".encode(), "\u2581a".encode(), "\u2581tim".encode(), b"er", "\u2581for".encode(),
          "\u2581ten".encode(), "\u2581minutes".encode(), b".", "\u2581caf".encode(), "\u00e9".encode(), b"\xc3", b"\xa9"]


def _tokenizer_bytes(pieces: Sequence[bytes]) -> bytes:
    return b"".join(bytes([len(p)]) + p for p in pieces)


TOKENIZER = MoonshineTokenizer.parse(_tokenizer_bytes(PIECES))


class History:
    """A decoder that knows what was said: at each position it picks the next token of ``said``
    when everything fed so far (BOS included, read back from its own cache) agrees with it, and a
    wrong token otherwise; so a cache cut in the wrong place changes what it says."""

    def __init__(self, said: Sequence[int], confused: int = 3) -> None:
        self.said = list(said)
        self.confused = confused
        self.calls: list[int] = []

    def _next(self, history: list[int]) -> int:
        if history != [BOS, *self.said[: len(history) - 1]]:
            return self.confused
        at = len(history) - 1
        return self.said[at] if at < len(self.said) else EOS

    def __call__(self, tokens: np.ndarray, hidden: np.ndarray, cache: dict[str, np.ndarray] | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        fed = [int(t) for t in tokens[0]]
        self.calls.append(len(fed))
        before = [] if cache is None else [int(t) for t in cache["past_key_values.0.decoder.key"][0, 0, :, 0]]
        logits = np.zeros((1, len(fed), VOCAB), np.float32)
        for i in range(len(fed)):
            logits[0, i, self._next(before + fed[: i + 1])] = 5.0
        history = np.array(before + fed, np.float32).reshape(1, 1, -1, 1)
        return logits, {"past_key_values.0.decoder.key": history, "past_key_values.0.encoder.key": np.zeros((1, 1, 3, 1), np.float32)}


HIDDEN = np.zeros((1, 4, 2), np.float32)


def test_the_tokenizer_reads_pieces_spaces_and_split_characters() -> None:
    assert TOKENIZER.decode([BOS, 3, 4, 5, 6, 7, 8, 9, 10, EOS]) == "set a timer for ten minutes."
    assert TOKENIZER.decode([11, 12]) == "café"
    assert TOKENIZER.decode([11, 13, 14]) == "café"  # a character in two byte tokens
    assert TOKENIZER.piece(5) == " tim" and TOKENIZER.piece(EOS) == "" and TOKENIZER.piece(999) == ""


@pytest.mark.parametrize("broken", [
    _tokenizer_bytes(PIECES)[:-1],  # the last token runs past the end
    _tokenizer_bytes([b"<unk>", b"<x>", b"</s>"]),  # no <s> where it belongs
    b"",
])
def test_a_tokenizer_file_that_is_not_moonshines_is_refused(broken: bytes) -> None:
    with pytest.raises(TokenizerError):
        MoonshineTokenizer.parse(broken)


def test_greedy_without_a_draft_steps_once_a_token() -> None:
    step = History([3, 4, 5, 6])
    decoded = greedy(step, HIDDEN, 20)
    assert decoded.tokens == (3, 4, 5, 6) and decoded.ended and decoded.accepted == 0
    assert decoded.steps == 5 and step.calls == [1, 1, 1, 1, 1]
    assert all(p < 0 for p in decoded.logprobs) and len(decoded.logprobs) == 4


def test_a_whole_draft_is_checked_in_one_pass() -> None:
    step = History([3, 4, 5, 6])
    decoded = greedy(step, HIDDEN, 20, draft=[3, 4, 5, 6])
    assert decoded.tokens == (3, 4, 5, 6) and decoded.ended and decoded.accepted == 4
    assert decoded.steps == 1 and step.calls == [5]


@pytest.mark.parametrize(("draft", "accepted"), [
    ([3, 4, 9, 6], 2),  # a word changed in the middle
    ([3, 4], 2),  # the user said more since
    ([3, 4, 5, 6, 7, 8], 4),  # the draft heard more than there is
    ([8, 8, 8], 0),  # nothing agrees
])
def test_a_draft_is_kept_only_as_far_as_the_model_agrees(draft: list[int], accepted: int) -> None:
    step = History([3, 4, 5, 6])
    decoded = greedy(step, HIDDEN, 20, draft=draft)
    # Whatever the draft, the text is the plain greedy decode's (a badly cut cache would say 3s).
    assert decoded.tokens == greedy(History([3, 4, 5, 6]), HIDDEN, 20).tokens
    assert decoded.accepted == accepted and decoded.ended
    assert decoded.steps == 1 + (4 - accepted)


def test_the_length_cap_ends_a_loop_and_says_so() -> None:
    decoded = greedy(History([3] * 50), HIDDEN, 6)
    assert decoded.tokens == (3,) * 6 and not decoded.ended


def test_a_set_cancel_stops_the_decode() -> None:
    cancel = threading.Event()
    cancel.set()
    decoded = greedy(History([3, 4, 5, 6]), HIDDEN, 20, cancel=cancel)
    assert decoded.tokens == () and not decoded.ended


class ScriptedModel:
    """The :class:`~audio.moonshine_model.MoonshineModel` shape: the words said grow with the audio
    (one token each 0.5 s), and each decode checks its draft as the real one does."""

    loaded = True
    tokenizer = TOKENIZER

    def __init__(self, said: Sequence[int]) -> None:
        self.said = list(said)
        self.drafts: list[tuple[int, ...]] = []

    def transcribe(self, samples: np.ndarray, max_tokens: int, draft: Sequence[int] = (), cancel: threading.Event | None = None) -> Decoded:
        self.drafts.append(tuple(draft))
        heard = self.said[: max(1, int(len(samples) / 16000 / 0.5))]
        decoded = greedy(History(heard), HIDDEN, max_tokens, draft, cancel)
        return Decoded(decoded.tokens, decoded.logprobs, decoded.ended, decoded.accepted, decoded.steps, 0.01)


async def _speech(seconds: float, chunk_s: float = 0.1, pace: float = 0.02) -> AsyncIterator[AudioChunk]:
    rng = np.random.default_rng(1)
    for _ in range(int(seconds / chunk_s)):
        yield AudioChunk(samples=rng.normal(0, 0.1, int(16000 * chunk_s)).astype(np.float32), sample_rate=16000)
        await asyncio.sleep(pace)


def _recognizer(model: ScriptedModel, interval: float = 0.05) -> MoonshineRecognizer:
    return MoonshineRecognizer(MoonshineSettings(Path("unused"), partial_interval_s=interval), model=model)


def test_partials_grow_and_the_final_checks_the_last_partial() -> None:
    model = ScriptedModel([3, 4, 5, 6, 7, 8, 9, 10])
    recognizer = _recognizer(model)
    assert isinstance(recognizer, Recognizer)

    async def run() -> list:
        return [t async for t in recognizer.transcribe(_speech(4.0))]

    transcripts = asyncio.run(run())
    partials, final = transcripts[:-1], transcripts[-1]
    assert partials and all(not t.is_final for t in partials) and final.is_final
    assert final.text == "set a timer for ten minutes." and final.audio_s == pytest.approx(4.0)
    # Every decode after the first was handed the one before as its draft.
    assert model.drafts[0] == () and all(len(d) > 0 for d in model.drafts[1:])
    assert [w for w, _ in final.word_probs] == ["set", "a", "timer", "for", "ten", "minutes."]
    assert final.avg_logprob is not None and final.avg_logprob < 0


def test_silence_is_heard_as_nothing_without_a_decode() -> None:
    model = ScriptedModel([3, 4])
    recognizer = _recognizer(model)

    async def quiet() -> AsyncIterator[AudioChunk]:
        for _ in range(10):
            yield AudioChunk(samples=np.zeros(1600, np.float32), sample_rate=16000)

    async def run() -> list:
        return [t async for t in recognizer.transcribe(quiet())]

    final = asyncio.run(run())[-1]
    assert final.is_final and final.text == "" and model.drafts == []


def test_a_decode_that_never_ends_is_cut_back_to_its_words() -> None:
    model = ScriptedModel([8, 9] * 100)
    recognizer = MoonshineRecognizer(MoonshineSettings(Path("unused"), max_tokens_per_s=1, token_slack=1, tail_silence_s=0.3), model=model)
    final = recognizer.final(np.random.default_rng(2).normal(0, 0.1, 16000 * 10).astype(np.float32))
    assert final.text == "ten minutes" and final.word_probs == ()
    assert recognizer.last_final is None  # a blocking final is not a stream's


def test_audio_at_another_rate_is_the_callers_error() -> None:
    recognizer = _recognizer(ScriptedModel([3]))

    async def wrong() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(samples=np.zeros(800, np.float32), sample_rate=8000)

    async def run() -> None:
        async for _ in recognizer.transcribe(wrong()):
            pass

    with pytest.raises(ValueError, match="16000 Hz"):
        asyncio.run(run())


def test_a_model_folder_without_its_files_says_how_to_get_them(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="hearth models install moonshine-base-en"):
        MoonshineFiles.in_dir(tmp_path)


def test_the_configuration_names_moonshine_as_the_english_ear(tmp_path: Path) -> None:
    from firmware_py.config import parse_config
    from firmware_py.wiring import StartupError, make_recognizer
    from models.manifest import load_manifest
    from models.store import ModelStore

    store = ModelStore(tmp_path, load_manifest())
    config = parse_config({"asr": {"model_en": "moonshine-base-en", "moonshine_partial_interval_s": 0.3, "n_threads": 1}})
    recognizer = make_recognizer(config, store)
    assert isinstance(recognizer, MoonshineRecognizer) and not recognizer.loaded
    assert recognizer.settings.partial_interval_s == 0.3 and recognizer.settings.cpu_threads == 1
    assert recognizer.settings.model_dir == store.path("moonshine-base-en")
    korean = parse_config({"language": "ko", "asr": {"model_ko": "moonshine-base-en"}})
    with pytest.raises(StartupError, match="English only"):
        make_recognizer(korean, store)


class Forked:
    """A batched decoder whose best path is ``likely`` but that also gives ``other`` a fair chance at
    ``at`` (a word heard two ways); each row of a batch follows its own history."""

    def __init__(self, likely: Sequence[int], other: int, at: int) -> None:
        self.likely, self.other, self.at = list(likely), other, at
        self.batches: list[int] = []

    def _row(self, history: list[int]) -> np.ndarray:
        row = np.full(VOCAB, -9.0, np.float32)
        position = len(history) - 1
        said = history[1:]
        on_path = said == self.likely[:position] or said == [*self.likely[: self.at], self.other, *self.likely[self.at + 1 : position]]
        if not on_path or position >= len(self.likely):
            row[EOS] = 5.0
        elif position == self.at:
            row[self.likely[position]], row[self.other] = 3.0, 2.5
        else:
            row[self.likely[position]] = 5.0
        return row

    def __call__(self, tokens: np.ndarray, hidden: np.ndarray, cache: dict[str, np.ndarray] | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        self.batches.append(tokens.shape[0])
        assert hidden.shape[0] in (1, tokens.shape[0])
        before = np.zeros((tokens.shape[0], 0), np.int64) if cache is None else cache["past_key_values.0.decoder.key"][:, 0, :, 0].astype(np.int64)
        history = np.concatenate([before, tokens], axis=1)
        logits = np.stack([[self._row(list(h))] for h in history])
        return logits, {"past_key_values.0.decoder.key": history[:, None, :, None].astype(np.float32),
                        "past_key_values.0.encoder.key": np.zeros((tokens.shape[0], 1, 3, 1), np.float32)}


def test_a_beam_search_finds_the_word_heard_two_ways() -> None:
    step = Forked([3, 4, 5, 6], other=11, at=2)
    found = beam_search(step, HIDDEN, 20, width=3)
    assert [h.tokens for h in found[:2]] == [(3, 4, 5, 6), (3, 4, 11, 6)]
    assert all(h.ended for h in found) and found[0].score >= found[1].score
    assert max(step.batches) <= 3 and step.batches[0] == 1


def test_a_beam_that_reaches_the_cap_is_kept_as_not_ended() -> None:
    found = beam_search(Forked([3] * 50, other=11, at=1), HIDDEN, 5, width=2)
    assert found and not found[0].ended and len(found[0].tokens) == 5


class BeamModel(ScriptedModel):
    """The scripted model with a beam search: "ten minutes" or "tim minutes" (a word heard two ways)."""

    def hypotheses(self, samples: np.ndarray, max_tokens: int, width: int, cancel: threading.Event | None = None) -> list[Hypothesis]:
        self.drafts.append(("beam", width))
        return [
            Hypothesis((3, 4, 5, 9), (-0.1, -0.1, -0.5, -0.1, -0.1), True),  # "set a tim minutes"
            Hypothesis((3, 4, 8, 9), (-0.1, -0.1, -0.7, -0.1, -0.1), True),  # "set a ten minutes"
        ]


def test_a_final_with_the_households_words_is_chosen_among_the_beams() -> None:
    model = BeamModel([3, 4, 8, 9])
    recognizer = MoonshineRecognizer(
        MoonshineSettings(Path("unused"), partial_interval_s=0.05, hypotheses=2), model=model, lexicon=Lexicon.of(["set a ten minutes"]),
    )

    async def run(context: str) -> list:
        return [t async for t in recognizer.transcribe(_speech(2.0), context)]

    final = asyncio.run(run("ten minutes"))[-1]
    assert final.text == "set a ten minutes" and ("beam", 2) in model.drafts
    assert [text for text, _ in final.alternatives] == ["set a tim minutes", "set a ten minutes"]
    assert final.avg_logprob == pytest.approx(-0.25)  # its own tokens, the end of text aside
    # Without the household's words the final is the greedy decode that checks the last partial.
    model.drafts.clear()
    plain = asyncio.run(run(""))[-1]
    assert plain.alternatives == () and all(d[:1] != ("beam",) for d in model.drafts)
