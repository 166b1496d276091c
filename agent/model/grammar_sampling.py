"""Grammar-constrained sampling that checks the model's own choice first.

llama-cpp-python applies a grammar to every candidate token at every step: with a 49k-token
vocabulary and a branchy reply schema that check, not the model, is most of the decode time.
Under a grammar the model's unconstrained choice is nearly always allowed anyway, so
:class:`TopTokenFirstSampler` samples without the grammar, asks the grammar about that one
token, and only when it is refused applies the grammar to the full vocabulary and samples
again (llama.cpp's own ``common_sampler`` does the same).

With greedy decoding the result is identical to the plain path: the best token overall, if
allowed, is the best allowed token.  With temperature sampling it draws from the same
distribution but consumes the random stream differently, so the text may differ.

:func:`llama_class` gives a ``llama_cpp.Llama`` subclass that uses it for every call made
with a grammar; everything else about ``create_completion`` (prompt cache, stop strings,
stopping criteria, streaming) is unchanged.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import math
from typing import Any

log = logging.getLogger(__name__)


class TopTokenFirstSampler:
    """Stands in for llama-cpp-python's sampler chain (``sample(ctx, idx)``) when a grammar is set."""

    def __init__(self, llama: Any, chain: Any, grammar: Any) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self._llama_cpp = llama_cpp
        self.chain = chain
        """The chain without the grammar: penalties, then greedy or the temperature samplers."""
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        self.n_vocab = llama.n_vocab()
        self._all = _internals.LlamaTokenDataArray(n_vocab=self.n_vocab)
        self._one_data = (llama_cpp.llama_token_data * 1)()
        self._one = llama_cpp.llama_token_data_array(data=self._one_data, size=1, selected=-1, sorted=False)
        self.tokens = 0
        """Tokens sampled."""
        self.fallbacks = 0
        """Tokens for which the unconstrained choice was refused and the full grammar pass ran."""
        self.forced = 0
        """Tokens taken as given (:meth:`force`), not sampled."""

    def _apply(self, sampler: Any, logits: Any) -> int:
        self._all.copy_logits(logits)
        self._all.candidates.selected = -1
        self._llama_cpp.llama_sampler_apply(sampler, ctypes.byref(self._all.candidates))
        return int(self._all.candidates.data[self._all.candidates.selected].id)

    def allows(self, token: int) -> bool:
        """Whether the grammar, in its current state, accepts ``token`` next."""
        self._one_data[0].id = token
        self._one_data[0].logit = 0.0
        self._one_data[0].p = 0.0
        self._one.size, self._one.selected, self._one.sorted = 1, -1, False
        self._llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._one))
        return math.isfinite(self._one_data[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        import numpy as np

        pointer = self._llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))
        token = self._apply(self.chain.sampler, logits)
        self.tokens += 1
        if not self.allows(token):
            self.fallbacks += 1
            # The grammar masks refused tokens to -inf; the chain's penalties leave -inf as it is,
            # so grammar-then-chain ranks exactly as llama-cpp-python's penalties-grammar-rest.
            self._all.copy_logits(logits)
            self._all.candidates.selected = -1
            self._llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._all.candidates))
            self._llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(self._all.candidates))
            token = int(self._all.candidates.data[self._all.candidates.selected].id)
        self._llama_cpp.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)
        return token

    def force(self, token: int) -> bool:
        """Take ``token`` as the next one without sampling, when the grammar allows it (False, and
        nothing changed, when it does not): the grammar and the penalties' history move on as if
        it had been sampled."""
        if not self.allows(token):
            return False
        self._llama_cpp.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)
        self.forced += 1
        return True

    def close(self) -> None:
        if self.grammar:
            self._llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None
        self.chain.close()

    def __del__(self) -> None:
        self.close()


@functools.cache
def llama_class() -> type:
    """``llama_cpp.Llama`` with top-token-first grammar sampling, switchable per instance (``top_token_first``)."""
    import llama_cpp

    class TopTokenFirstLlama(llama_cpp.Llama):  # type: ignore[misc]
        top_token_first = True
        last_sampler: TopTokenFirstSampler | None = None

        def _init_sampler(self, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
            if grammar is None or not self.top_token_first:
                return super()._init_sampler(*args, grammar=grammar, **kwargs)
            if kwargs.get("mirostat_mode", 0) or kwargs.get("logits_processor") is not None:
                return super()._init_sampler(*args, grammar=grammar, **kwargs)
            sampler = TopTokenFirstSampler(self, super()._init_sampler(*args, grammar=None, **kwargs), grammar)
            self.last_sampler = sampler
            return sampler

    return TopTokenFirstLlama
