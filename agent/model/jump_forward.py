"""Decoding under a JSON schema that evaluates what the schema forces in one batch.

llama-cpp-python's generator evaluates one token, samples the next, and so on, also where the
grammar leaves a single way on (``", "tool": "``, the rest of a tool's name, an argument's key).
:func:`decode_along` samples only where the model has a choice: after each sampled token it asks
the reply's :class:`~agent.model.json_skeleton.Skeleton` for the text that must follow, checks
each of its tokens against the grammar (a token the grammar refuses ends the forcing there, and
sampling goes on as before), and evaluates the forced tokens with the sampled one as a batch, at
prompt speed.  Forced tokens enter the sampler's history (its repeat penalty) as sampled ones
would.

Greedy decisions stay greedy, but the model reads forced text as the tokenizer splits it, which
may differ from how it would have split it itself: decisions can differ in rare cases, so the
suites measure it (docs/benchmarks.md).
"""

from __future__ import annotations

import codecs
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.model.json_skeleton import Skeleton

log = logging.getLogger(__name__)


@dataclass
class DecodeCount:
    """What one decision cost: tokens the model chose, tokens the schema forced, and the time."""

    sampled: int = 0
    forced: int = 0
    seconds: float = 0.0
    finish: str = ""
    """"stop" (the reply is complete, or the model ended it), "length" (the token cap), "cancelled"."""


def decode_along(
    llama: Any,
    sampler: Any,
    pending: Sequence[int],
    skeleton: Skeleton,
    max_tokens: int,
    cancel: threading.Event,
    emit: Callable[[str], None],
    stops: Sequence[str] = (),
) -> DecodeCount:
    """Generate a reply after the prompt whose last tokens, ``pending``, are not evaluated yet.

    ``sampler`` is a :class:`~agent.model.grammar_sampling.TopTokenFirstSampler` (its grammar says
    which forced tokens are allowed); ``emit`` gets the reply's text piece by piece, forced text
    included.  The reply ends when the skeleton is complete (nothing may follow it), the model
    writes an end-of-generation token, a stop string appears, ``max_tokens`` are written
    (sampled and forced), or ``cancel`` is set."""
    import llama_cpp

    count = DecodeCount()
    started = time.perf_counter()
    utf8 = codecs.getincrementaldecoder("utf-8")("replace")
    vocab = llama._model.vocab
    batch = list(pending)
    written = 0
    text = ""

    def take(tokens: list[int]) -> str | None:
        """Record the tokens' text; None when a stop string cut it."""
        nonlocal text
        piece = utf8.decode(llama.detokenize(tokens))
        text += piece
        for stop in stops:
            if stop and stop in text:
                keep = len(piece) - (len(text) - text.index(stop))
                if keep > 0:
                    emit(piece[:keep])
                return None
        if piece:
            skeleton.feed(piece)
            emit(piece)
        return piece

    while True:
        if cancel.is_set():
            count.finish = "cancelled"
            break
        forced = skeleton.forced() if not skeleton.left else ""
        if forced and written < max_tokens:
            taken = []
            for token in llama.tokenize(forced.encode("utf-8"), add_bos=False, special=False):
                if written + len(taken) >= max_tokens or not sampler.force(token):
                    break
                taken.append(token)
            if taken:
                batch += taken
                written += len(taken)
                count.forced += len(taken)
                if take(taken) is None:
                    count.finish = "stop"
                    break
        if skeleton.done:
            count.finish = "stop"
            break
        if written >= max_tokens:
            count.finish = "length"
            break
        llama.eval(batch)
        token = sampler.sample(llama._ctx, -1)
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            count.finish = "stop"
            break
        batch = [token]
        written += 1
        count.sampled += 1
        if take([token]) is None:
            count.finish = "stop"
            break
    count.seconds = time.perf_counter() - started
    return count
