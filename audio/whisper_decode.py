"""One Whisper decode, and whether its text can be trusted.

Whisper was trained on 30 s windows only.  Encoding a shorter window (the
utterance plus a margin) is several times cheaper, but it is outside the
model's training, and how it fails depends on the CPU's arithmetic: on one
machine a 2.6 s request came back whole, on another as a repetition loop, on a
third as nothing at all.  So every decode here reports what the checks need
(did it reach end-of-text, does it repeat itself, did it echo the prompt), and
:func:`distrust` names the first reason not to believe it.  A final transcript
is decoded in the full window, as Whisper was trained, unless configured
otherwise; then a decode that fails a check is done again in the full window.

The prompt is Whisper's "previous text": words likely to be said (units, list
items, recipe titles) make the decoder prefer them.  A decode that repeats a
long run of the prompt is an echo, and is done again without it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000
FULL_WINDOW_S = 30.0

DEFAULT_HALLUCINATIONS: tuple[str, ...] = (
    "you",
    "thank you",
    "thanks for watching",
    "thank you for watching",
    "thank you so much for watching",
    "please subscribe",
    "bye",
    "i'm",
    "so",
    "uh",
    "um",
    "이 영상은",
    "감사합니다",
    "시청해 주셔서 감사합니다",
    "구독과 좋아요 부탁드립니다",
    "아",
    "음",
)
"""What Whisper says over silence or noise; dropped only when the model also doubts there was speech."""


@dataclass(frozen=True)
class Decode:
    """What one decode produced, with the scores the checks read."""

    text: str
    """The decoded text, stripped."""
    no_speech_prob: float = 0.0
    avg_logprob: float = 0.0
    compression_ratio: float = 1.0
    ended: bool = True
    """The decoder wrote end-of-text before its token cap (a loop runs into the cap)."""
    window_s: float = FULL_WINDOW_S
    """The encoder window it was decoded in."""
    prompted: bool = False
    """It was decoded with a prompt."""
    seconds: float = 0.0
    """Wall time it took."""
    alternatives: tuple[tuple[str, float], ...] = ()
    """When n-best was asked for: each hypothesis's text and mean token log-probability,
    the decoder's best (``text``) first."""


class WindowDecoder(Protocol):
    """Decodes 16 kHz audio (lead silence already added) in an encoder window, with an optional prompt;
    with ``hypotheses`` > 1 also the n best texts (beam search), as ``Decode.alternatives``."""

    def __call__(self, audio: np.ndarray, window_s: float, prompt: str, hypotheses: int = 1) -> Decode: ...


WordProbabilities = tuple[tuple[str, float], ...]
"""Each word of a text with the probability the decoder gives it on the audio: how sure it is of
that word, apart from the rest (a sure "seconds" after an unsure "five")."""


@runtime_checkable
class WordScorer(Protocol):
    """A decoder that can also say, for any text, how sure it is of each word on the audio it
    decoded last (the chosen hypothesis may be another than its best)."""

    def word_probabilities(self, text: str) -> WordProbabilities: ...


@dataclass(frozen=True)
class Checks:
    """When a decode is not believed, and when its text is dropped as a phantom."""

    no_speech_threshold: float = 0.6
    """A decode with no_speech_prob above this and avg_logprob below ``logprob_threshold`` heard no speech."""
    logprob_threshold: float = -1.0
    """See ``no_speech_threshold``."""
    compression_ratio_threshold: float = 2.4
    """A text that compresses better than this is a repetition loop."""
    hallucination_no_speech: float = 0.5
    """A text in ``hallucinations`` is dropped when no_speech_prob exceeds this."""
    hallucinations: tuple[str, ...] = DEFAULT_HALLUCINATIONS
    """Known phantom texts, compared case-, space- and punctuation-insensitively."""
    echo_words: int = 5
    """A decode holding this many consecutive words of the prompt is an echo of it."""


_NON_WORD = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    return _NON_WORD.sub("", text.lower())


def words_of(text: str) -> list[str]:
    return [w for w in (normalize(w) for w in text.split()) if w]


def speech_text(decode: Decode, checks: Checks) -> str:
    """The decode's text if it sounds like speech; ``""`` for silence, noise, long loops and known phantoms."""
    if not normalize(decode.text):
        return ""
    if decode.compression_ratio > checks.compression_ratio_threshold:
        return ""  # a long loop is what Whisper writes over noise
    if decode.no_speech_prob > checks.no_speech_threshold and decode.avg_logprob < checks.logprob_threshold:
        return ""
    phantoms = {normalize(h) for h in checks.hallucinations}
    if normalize(decode.text) in phantoms and decode.no_speech_prob > checks.hallucination_no_speech:
        return ""
    return decode.text.strip()


def repeated_run(words: Sequence[str], min_run: int = 2) -> tuple[int, int, int] | None:
    """The first run of ``min_run``+ words said again straight after itself: (start, length, times)."""
    n = len(words)
    for length in range(min_run, n // 2 + 1):
        for start in range(0, n - 2 * length + 1):
            run = words[start : start + length]
            times = 1
            while words[start + times * length : start + (times + 1) * length] == run:
                times += 1
            if times >= 2 and length * times >= 4:
                return start, length, times
    return None


def longest_shared_run(words: Sequence[str], other: Sequence[str]) -> int:
    """The longest run of consecutive words that ``words`` and ``other`` share."""
    best = 0
    previous = [0] * (len(other) + 1)
    for a in words:
        current = [0] * (len(other) + 1)
        for j, b in enumerate(other, 1):
            if a == b:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def distrust(decode: Decode, prompt: str, checks: Checks) -> str | None:
    """Why ``decode`` cannot be believed, or None.

    ``"no_end"``: it ran into its token cap; ``"repetition"``: it says a run of words again
    straight after itself, or compresses like a loop; ``"echo"``: it repeats the prompt.
    An empty text is no reason here: silence decodes to nothing, and the caller knows
    whether there was speech.
    """
    if not decode.ended:
        return "no_end"
    words = words_of(decode.text)
    if decode.compression_ratio > checks.compression_ratio_threshold or repeated_run(words) is not None:
        return "repetition"
    if decode.prompted and prompt and longest_shared_run(words, words_of(prompt)) >= min(checks.echo_words, max(3, len(words))):
        return "echo"
    return None


def collapse_repetition(text: str) -> str:
    """The text with a run said again and again kept once ("Try again. Try again. Try again.")."""
    pieces = text.split()
    found = repeated_run(words_of(text))
    if found is None or len(pieces) != len(words_of(text)):
        return text
    start, length, times = found
    return " ".join(pieces[: start + length] + pieces[start + length * times :])


# -- the real decoder -----------------------------------------------------------------------------


def load_whisper(model_dir: Path, compute_type: str, cpu_threads: int, language: str, device: str = "cpu") -> Any:
    """A faster-whisper model from a local CTranslate2 directory (blocking); never reaches a network."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise FileNotFoundError(f"Whisper model directory {model_dir} does not exist")
    for name in ("model.bin", "config.json", "tokenizer.json"):
        # Without tokenizer.json faster-whisper would fetch one from the network.
        if not (model_dir / name).is_file():
            raise FileNotFoundError(f"Whisper model directory {model_dir} is incomplete: missing {name}")
    from faster_whisper import WhisperModel

    if device == "cuda":
        import ctranslate2

        if ctranslate2.get_cuda_device_count() == 0:
            # PyPI's CTranslate2 for aarch64 has no CUDA: a Jetson runs Whisper on its CPU unless
            # setup.sh built CTranslate2 with CUDA (HEARTH_CT2_CUDA=1).
            logger.warning("CTranslate2 sees no CUDA device: Whisper runs on the CPU (int8)")
            device, compute_type = "cpu", "int8"
    started = time.perf_counter()
    model = WhisperModel(
        str(model_dir), device=device, compute_type=compute_type, cpu_threads=cpu_threads, num_workers=1, local_files_only=True
    )
    if not model.model.is_multilingual and language != "en":
        raise ValueError(f"Whisper model {model_dir} is English-only; language {language!r} is not available")
    logger.info("loaded Whisper %s (%s) in %.2f s", model_dir.name, compute_type, time.perf_counter() - started)
    return model


def encode_window(model: Any, audio: np.ndarray, window_s: float) -> tuple[Any, int]:
    """``audio`` (16 kHz) in a window of ``window_s``, through faster-whisper's model's feature
    extractor and encoder; the encoder's output and the window's frames."""
    import ctranslate2

    frames = int(round(window_s * 100))  # the feature extractor's hop is 10 ms
    padded = np.zeros(frames * 160, dtype=np.float32)
    padded[: len(audio)] = audio[: len(padded)]
    features = model.feature_extractor(padded)[:, :frames]
    return model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None])), to_cpu=False), frames


class CTranslate2Decoder:
    """Greedy (or beam) decoding of one window with faster-whisper's model, without its segment loop.

    Encodes the window once; a decode that echoes the prompt is done again from the same
    encoder output without it, which costs only the decoder.
    """

    def __init__(self, model: Any, language: str, beam_size: int = 1, max_tokens_per_s: float = 16.0, checks: Checks = Checks()) -> None:
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.model = model
        self.beam_size = beam_size
        self.max_tokens_per_s = max_tokens_per_s
        self.checks = checks
        self.tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
        self.suppressed = get_suppressed_tokens(self.tokenizer, [-1])
        self._prompts: dict[str, list[int]] = {}
        self._last: tuple[Any, list[int], int] | None = None  # the last decode's encoder output, prompt and frames

    def _prompt(self, prompt: str) -> list[int]:
        tokens = self._prompts.get(prompt)
        if tokens is None:
            previous = self.tokenizer.encode(" " + prompt.strip()) if prompt.strip() else []
            # Whisper keeps at most half its context for previous text.
            tokens = self.model.get_prompt(self.tokenizer, previous[-223:], without_timestamps=True)
            if len(self._prompts) > 16:
                self._prompts.clear()
            self._prompts[prompt] = tokens
        return tokens

    def __call__(self, audio: np.ndarray, window_s: float, prompt: str, hypotheses: int = 1) -> Decode:
        started = time.perf_counter()
        encoded, frames = encode_window(self.model, audio, window_s)
        # faster-whisper rejects prompt + new tokens beyond 448.
        cap = min(int(16 + self.max_tokens_per_s * min(len(audio) / SAMPLE_RATE, FULL_WINDOW_S)), 440)
        decode = self._generate(encoded, prompt, cap, window_s, hypotheses)
        if decode.prompted and distrust(decode, prompt, self.checks) == "echo":
            logger.info("the decode echoed its prompt (%r); decoding again without it", decode.text[:80])
            prompt = ""
            decode = self._generate(encoded, "", cap, window_s, hypotheses)
        self._last = (encoded, self._prompt(prompt), min(frames, int(len(audio) / 160) + 1))
        return _with_seconds(decode, time.perf_counter() - started)

    def word_probabilities(self, text: str) -> WordProbabilities:
        """How sure the decoder is of each word of ``text`` on the audio it decoded last, with the
        same prompt: the text is forced through the decoder (one pass, about as costly as decoding
        a word or two) and each word gets the lowest probability of its tokens.  Empty before any
        decode, or for an empty text."""
        if self._last is None or not text.strip():
            return ()
        encoded, prompt, frames = self._last
        tokens = self.tokenizer.encode(" " + text.strip())
        result = self.model.model.align(encoded, prompt, [tokens], frames)[0]
        words = group_words([self.tokenizer.decode([t]) for t in tokens], list(result.text_token_probs))
        return tuple((self.tokenizer.decode([tokens[i] for i in span]).strip(), p) for span, p in words)

    def _generate(self, encoded: Any, prompt: str, cap: int, window_s: float, hypotheses: int = 1) -> Decode:
        from faster_whisper.transcribe import get_compression_ratio

        tokens_in = self._prompt(prompt)
        cap = min(cap, 448 - len(tokens_in))
        result = self.model.model.generate(
            encoded,
            [tokens_in],
            beam_size=max(self.beam_size, hypotheses),
            num_hypotheses=hypotheses,
            max_length=len(tokens_in) + cap,  # the prompt counts towards the length
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self.suppressed,
        )[0]
        tokens = result.sequences_ids[0]
        text = self.tokenizer.decode(tokens).strip()
        alternatives: tuple[tuple[str, float], ...] = ()
        if hypotheses > 1:
            alternatives = tuple(
                (self.tokenizer.decode(ids).strip(), float(score)) for ids, score in zip(result.sequences_ids, result.scores)
            )
        return Decode(
            text=text,
            no_speech_prob=float(result.no_speech_prob),
            # faster-whisper's recovery of the mean log-probability (length penalty 1).
            avg_logprob=float(result.scores[0]) * len(tokens) / (len(tokens) + 1),
            compression_ratio=get_compression_ratio(text) if text else 0.0,
            ended=len(tokens) < cap,
            window_s=window_s,
            prompted=bool(prompt.strip()),
            alternatives=alternatives,
        )


def group_words(pieces: Sequence[str], probabilities: Sequence[float]) -> list[tuple[range, float]]:
    """Tokens made into words, as (the tokens' indices, the word's probability): a piece that
    starts with a space starts a word; punctuation and the rest of a word join the word before.
    A word's probability is its least likely token's, punctuation left out (Whisper is often
    unsure of a comma, rarely of what it means).  A piece of a character (a Korean syllable's
    bytes decode alone as U+FFFD) is part of a word."""
    words: list[tuple[int, int, float]] = []
    for i, (piece, p) in enumerate(zip(pieces, probabilities)):
        wordy = bool(_NON_WORD.sub("", piece)) or "\ufffd" in piece
        if not words or (piece.startswith(" ") and wordy):
            words.append((i, i + 1, float(p) if wordy else 1.0))
        else:
            start, _, least = words[-1]
            words[-1] = (start, i + 1, min(least, float(p)) if wordy else least)
    return [(range(start, end), round(p, 4)) for start, end, p in words]


def _with_seconds(decode: Decode, seconds: float) -> Decode:
    from dataclasses import replace

    return replace(decode, seconds=seconds)
