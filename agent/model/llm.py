"""Chat models: the protocol the turn logic uses, and llama.cpp behind it.

A ``Llama`` object crashes the process when two threads use it at once, so
every call runs on the model's own worker thread under a lock, and a cancel
flag is checked per token (and between decode steps, through a stopping
criterion) so that a barge-in stops generation within a token or so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from agent.model.json_skeleton import Skeleton, compile_skeleton
from agent.model.jump_forward import DecodeCount, decode_along

log = logging.getLogger(__name__)

Role = Literal["system", "user", "assistant"]

GEMMA_TEMPLATE = (
    "{{ bos_token }}{% set system = namespace(text='') %}"
    "{% for m in messages %}{% if m['role'] == 'system' %}{% set system.text = m['content'] + '\n\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['role'] == 'user' %}{{ system.text }}{% set system.text = '' %}{% endif %}"
    "{{ m['content'] | trim }}<end_of_turn>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma's turn format, the system prompt folded into the first user turn, for Gemma GGUFs without a template."""

_GRAMMAR_CACHE = 64
"""Compiled grammars kept, oldest dropped first."""

# llama-cpp-python's JSON-schema converter lets raw control characters into strings; a small model
# then writes a line break inside "say", and the reply no longer parses as JSON.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_JSON_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def json_gbnf(json_schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON schema, with strings that stay valid JSON (no raw control characters)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(json_schema)).replace(_LOOSE_CHAR, _JSON_CHAR)


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items (tokens, characters) ``a`` and ``b`` share."""
    n, limit = 0, min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


async def stream_from_thread(work: Callable[[Callable[[str], None]], None], stop: Callable[[], None]) -> AsyncIterator[str]:
    """Run ``work(emit)`` on a worker thread and yield what it emits, as it emits it; an exception
    in it is raised here. Closing the iterator calls ``stop`` (the thread's cancel) and waits for
    the thread, so nothing it holds (a model, a connection) outlives the stream."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()

    def emit(text: str) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, text)

    def run() -> None:
        try:
            work(emit)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            loop.call_soon_threadsafe(queue.put_nowait, exc)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    worker = loop.run_in_executor(None, run)
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop()
        # Shielded, so that a second cancellation does not leave the thread running unobserved.
        await asyncio.shield(worker)


def stopped_at_cap(chat: Any) -> bool:
    """Whether ``chat``'s latest reply, once its stream has ended, stopped at its token cap and not
    where the model ended it: the last sentence may be unfinished (:meth:`ReplyPath.cut_short
    <agent.speaking.reply.ReplyPath.cut_short>`). The models here say so in ``capped``; a model
    that does not is taken to have finished."""
    return getattr(chat, "capped", False) is True


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str
    keep: bool = False
    """The prompt up to the end of this message is a head that later prompts start with too (the
    system prompt, or examples fixed per tool): a model may keep its state after it and start from
    there next time instead of evaluating it again."""


@runtime_checkable
class ChatModel(Protocol):
    """Streams a reply to a conversation, token by token."""

    async def warm(self, system_prompt: str) -> None:
        """Evaluate the fixed system-prompt prefix now, so the first turn does not pay for it."""
        ...

    def stream(self, messages: Sequence[ChatMessage], max_tokens: int | None = None) -> AsyncIterator[str]:
        """Yield reply text pieces; closing the iterator stops generation."""
        ...


class ModelLoadError(RuntimeError):
    """The model file could not be loaded (missing, truncated, not a GGUF)."""


@dataclass(frozen=True)
class LlamaSettings:
    """How to run a GGUF model with llama.cpp."""

    model_path: Path
    """The GGUF file."""
    n_ctx: int = 2048
    """Context window in tokens: system prompt + history + reply must fit."""
    n_threads: int = 2
    """CPU threads for decoding; llama.cpp's default (half the cores) is too few on a Pi 5."""
    n_batch: int = 256
    """Prompt tokens evaluated per batch."""
    max_tokens: int = 160
    """Longest reply, in tokens: a spoken answer should be short."""
    temperature: float = 0.3
    """Sampling temperature; low keeps small models on topic."""
    json_temperature: float = 0.0
    """Temperature of grammar-constrained replies (tool decisions): greedy, so the same words get the same call."""
    top_p: float = 0.9
    """Nucleus sampling cut-off."""
    repeat_penalty: float = 1.15
    """Discourages the loops small models fall into."""
    seed: int = 7
    """Sampling seed, so that runs can be compared."""
    chat_template: str | None = None
    """A Jinja chat template to use instead of the GGUF's own (a base model has none, see :data:`GEMMA_TEMPLATE`)."""
    prefill_slice: int = 32
    """Prompt tokens evaluated per slice, a newer call's cancel checked between slices; 0 evaluates
    the prompt in one piece (a cancelled call then still evaluates all of it)."""
    kept_heads: int = 20
    """Prompt heads (up to a message marked ``keep``) whose model state is kept, least recently used
    dropped first; loading one takes milliseconds where evaluating it takes a second or more. For
    SmolLM2-135M a state is ~23 KB a token, ~7 MB for a 300-token head; 0 keeps none."""
    n_gpu_layers: int = 0
    """Layers offloaded to the GPU (a llama.cpp built with CUDA): -1 all, 0 none."""
    top_token_first: bool = True
    """Under a grammar, check the model's own choice against it before masking the whole vocabulary
    (:mod:`agent.model.grammar_sampling`): several times faster, and identical output when greedy."""
    jump_forward: bool = True
    """Under a JSON schema (with ``top_token_first``), evaluate the text the schema forces (keys,
    quotes, the rest of a tool's name) in one batch instead of sampling it token by token
    (:mod:`agent.model.jump_forward`)."""


_LOADING = threading.Lock()
"""One model load at a time in the process: llama-cpp-python silences a load by swapping
``sys.stdout`` and ``sys.stderr`` for /dev/null and back, and two loads in two threads (the talker
and the reasoner, side by side at start-up) can restore each other's /dev/null, leaving the
process's console silent for good."""


class LlamaChatModel:
    """A llama-cpp-python model formatted with the chat template stored in its GGUF."""

    continues_reply = True
    """``stream`` takes ``reply_start``: the start of the reply, already said, to go on from."""

    def __init__(self, settings: LlamaSettings) -> None:
        self.settings = settings
        self._llama: Any = None
        self._formatter: Any = None
        self._bos_text = ""
        self._grammars: dict[str, tuple[Any, tuple[Any, ...] | None]] = {}
        self._lock = threading.Lock()
        self.last_prompt: tuple[int, int] = (0, 0)
        """(tokens in the prompt, tokens evaluated for it) of the latest call: the rest was
        shared with what an earlier call left in the model's cache, or loaded from a kept head."""
        self.capped = False
        """Whether the latest reply stopped at its token cap (see :func:`stopped_at_cap`)."""
        self.last_decode: DecodeCount | None = None
        """Tokens sampled and forced, and the time, of the latest reply decoded along a schema's
        skeleton (None for one that was not)."""
        self._heads: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._background: set[threading.Event] = set()
        """Cancel flags of background work (keeping heads), set by any real call."""

    # -- loading -------------------------------------------------------------------------
    def load(self) -> None:
        """Load the weights (blocking; call from a worker thread at start-up)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from agent.model.grammar_sampling import llama_class

        s = self.settings
        t0 = time.monotonic()
        try:
            with _LOADING:
                llama = llama_class()(
                    model_path=str(s.model_path),
                    n_ctx=s.n_ctx,
                    n_threads=s.n_threads,
                    n_threads_batch=s.n_threads,
                    n_batch=s.n_batch,
                    n_gpu_layers=s.n_gpu_layers,
                    seed=s.seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(f"cannot load LLM {s.model_path}: {exc}") from exc
        llama.top_token_first = s.top_token_first
        template = s.chat_template or llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelLoadError(
                f"{s.model_path} has no chat template; hearth needs an instruct model with one"
            )
        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", "ignore")
        bos = llama.detokenize([llama.token_bos()]).decode("utf-8", "ignore")
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._bos_text = bos
        self._llama = llama
        log.info("loaded %s in %.2f s", s.model_path.name, time.monotonic() - t0)

    def grammar_stats(self) -> tuple[int, int] | None:
        """(tokens, full-vocabulary grammar passes) of the last top-token-first call, or None."""
        sampler = getattr(self._llama, "last_sampler", None)
        return None if sampler is None else (sampler.tokens, sampler.fallbacks)

    def _require(self) -> Any:
        if self._llama is None:
            raise RuntimeError("LlamaChatModel.load() has not been called")
        return self._llama

    def format(self, messages: Sequence[ChatMessage]) -> tuple[str, list[str]]:
        """The prompt text and stop strings the model's own template gives."""
        self._require()
        result = self._formatter(messages=[{"role": m.role, "content": m.content} for m in messages])
        stops = result.stop if isinstance(result.stop, list) else ([result.stop] if result.stop else [])
        # Special tokens detokenize to "" and an empty stop string would end every reply at
        # once; the end-of-sequence token stops generation by itself.
        return result.prompt, [stop for stop in stops if stop]

    # -- prefix warm-up ------------------------------------------------------------------
    def system_prefix(self, system_prompt: str) -> str:
        """The part of every prompt that does not depend on the user's words.

        Found as the common prefix of two prompts that differ only in the user
        message, so it works for any chat template.
        """
        a, _ = self.format([ChatMessage("system", system_prompt), ChatMessage("user", "a")])
        b, _ = self.format([ChatMessage("system", system_prompt), ChatMessage("user", "b")])
        return a[: _common_prefix(a, b)]

    def head_of(self, messages: Sequence[ChatMessage], prompt: str) -> str:
        """The part of ``prompt`` up to the end of the last message marked ``keep`` ("" if none):
        the common prefix of the prompt and the prompt of those messages alone, so it works for
        any chat template."""
        marked = [i for i, m in enumerate(messages) if m.keep]
        if not marked:
            return ""
        head, _ = self.format(messages[: marked[-1] + 1])
        return prompt[: _common_prefix(head, prompt)]

    def _tokenize(self, text: str) -> list[int]:
        # Token lists, not strings, go to llama.cpp so that the warm prefix and the
        # real prompt are tokenized identically and the cached prefix is reused.
        llama = self._require()
        add_bos = bool(llama._model.add_bos_token()) and not text.startswith(self._bos_text or "\0")
        return llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def _eval_prefix(self, prefix: str) -> int:
        llama = self._require()
        tokens = self._tokenize(prefix)
        with self._lock:
            llama.reset()
            llama.eval(tokens)
        return len(tokens)

    async def warm(self, system_prompt: str) -> None:
        t0 = time.monotonic()
        n = await asyncio.to_thread(self._eval_prefix, self.system_prefix(system_prompt))
        log.info("system prefix of %d tokens evaluated in %.2f s", n, time.monotonic() - t0)

    async def keep_heads(self, prompts: Sequence[Sequence[ChatMessage]]) -> int:
        """Evaluate and keep the head (up to the last message marked ``keep``) of each prompt not
        kept yet, in the background: any real call stops it between slices, and the heads it did
        not reach are kept when first used.  Returns how many were kept now."""
        kept = 0
        for messages in prompts:
            cancel = threading.Event()
            self._background.add(cancel)
            try:
                kept += await asyncio.to_thread(self._keep_head_of, list(messages), cancel)
            except asyncio.CancelledError:
                cancel.set()  # the thread stops at its next slice
                raise
            finally:
                self._background.discard(cancel)
            if cancel.is_set():
                break
        return kept

    def _keep_head_of(self, messages: list[ChatMessage], cancel: threading.Event) -> bool:
        if self.settings.kept_heads <= 0:
            return False
        prompt, _ = self.format([*messages, ChatMessage("user", "")])
        head = self._tokenize(self.head_of(messages, prompt))
        llama = self._require()
        if not head:
            return False
        if tuple(head) in self._heads:
            with self._lock:
                self._heads.move_to_end(tuple(head))  # still wanted: the last to be dropped
            return False
        with self._lock:
            if cancel.is_set():
                return False
            if _common_prefix(llama.input_ids[: llama.n_tokens], head) == len(head):
                llama._ctx.kv_cache_seq_rm(-1, len(head), -1)  # the cache holds the head: keep just it
                llama.n_tokens = len(head)
                self._keep_head(llama, tuple(head))
            else:  # one token past the head, so that all of the head is evaluated and kept
                self._evaluate_in_slices(llama, [*head, 0], cancel, len(head))
        return tuple(head) in self._heads

    async def prefill(self, messages: Sequence[ChatMessage]) -> int:
        """Evaluate the prompt of ``messages`` into the cache without replying, in the background (a
        real call stops it between slices), so a later call that starts the same way reads only
        the rest. Returns the tokens evaluated."""
        prompt, _ = self.format(messages)
        head = self.head_of(messages, prompt)
        cancel = threading.Event()
        self._background.add(cancel)
        try:
            return await asyncio.to_thread(self._prefill, prompt, head, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        finally:
            self._background.discard(cancel)

    def _prefill(self, prompt: str, head: str, cancel: threading.Event) -> int:
        llama = self._require()
        tokens = self._tokenize(prompt)
        n_head = _common_prefix(self._tokenize(head), tokens) if head else 0
        with self._lock:
            if cancel.is_set():
                return 0
            last = self.last_prompt  # a prefill is not a call: what the last call evaluated stands
            self._evaluate_in_slices(llama, tokens, cancel, n_head)
            evaluated, self.last_prompt = self.last_prompt[1], last
        return evaluated

    def forget_heads(self, cache_only: bool = False) -> None:
        """Drop every kept head and the cache: the next call evaluates its whole prompt (a cold
        model). ``cache_only`` keeps the heads: the next call loads its head and reads the rest."""
        llama = self._require()
        with self._lock:
            if not cache_only:
                self._heads.clear()
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            llama.n_tokens = 0

    # -- streaming -----------------------------------------------------------------------
    def _compiled(self, json_schema: dict[str, Any] | None) -> tuple[Any, tuple[Any, ...] | None]:
        """The schema's grammar, and its skeleton when jump-forward is on and the schema has one
        (None, None without a schema); both kept, since narrowed schemas repeat across requests."""
        if json_schema is None:
            return None, None
        from llama_cpp import LlamaGrammar

        key = json.dumps(json_schema, sort_keys=True)
        if key not in self._grammars:  # compiling a grammar costs tens of milliseconds
            if len(self._grammars) >= _GRAMMAR_CACHE:  # narrowed schemas vary per request
                self._grammars.pop(next(iter(self._grammars)))
            jumping = self.settings.jump_forward and self.settings.top_token_first
            self._grammars[key] = (
                LlamaGrammar.from_string(json_gbnf(json_schema), verbose=False),
                compile_skeleton(json_schema) if jumping else None,
            )
        return self._grammars[key]

    def _generate(
        self,
        prompt: str,
        stops: list[str],
        max_tokens: int,
        cancel: threading.Event,
        emit: Any,
        json_schema: dict[str, Any] | None = None,
        head: str = "",
    ) -> None:
        llama = self._require()
        s = self.settings
        grammar, skeleton = self._compiled(json_schema)

        def stop_when_cancelled(_ids: Any, _logits: Any) -> bool:
            return cancel.is_set()

        import llama_cpp

        tokens = self._tokenize(prompt)
        n_head = _common_prefix(self._tokenize(head), tokens) if head else 0
        self.last_decode = None
        with self._lock:
            if not self._evaluate_in_slices(llama, tokens, cancel, n_head):
                return
            if skeleton is not None:
                sampler = llama._init_sampler(
                    temp=s.json_temperature, top_p=s.top_p, repeat_penalty=s.repeat_penalty, grammar=grammar,
                )
                try:
                    count = decode_along(
                        llama, sampler, tokens[llama.n_tokens :], Skeleton(skeleton), max_tokens, cancel, emit, stops,
                    )
                finally:
                    sampler.close()
                self.last_decode = count
                self.capped = count.finish == "length"
                return
            stream = llama.create_completion(
                prompt=tokens,
                max_tokens=max_tokens,
                temperature=s.temperature if grammar is None else s.json_temperature,
                top_p=s.top_p,
                repeat_penalty=s.repeat_penalty,
                stop=stops,
                stream=True,
                stopping_criteria=llama_cpp.StoppingCriteriaList([stop_when_cancelled]),
                grammar=grammar,
            )
            finish = None
            try:
                for chunk in stream:
                    if cancel.is_set():
                        break
                    text = chunk["choices"][0]["text"]
                    finish = chunk["choices"][0].get("finish_reason") or finish
                    if text:
                        emit(text)
            finally:
                stream.close()
            self.capped = finish == "length" and not cancel.is_set()

    def _evaluate_in_slices(self, llama: Any, tokens: list[int], cancel: threading.Event, n_head: int = 0) -> bool:
        """Evaluate all of ``tokens`` but the last past what the cache already holds, a slice at a
        time; False when cancelled between slices.  llama.cpp then finds the prompt cached and
        evaluates only the last token itself.

        The first ``n_head`` tokens are a head worth keeping: when the cache shares less than that
        and the head's state is kept, it is loaded instead of evaluated; when it is not kept yet, it
        is kept once evaluated.  With ``prefill_slice`` 0 the prompt is one slice."""
        end = len(tokens) - 1
        shared = _common_prefix(llama.input_ids[: llama.n_tokens], tokens[:end])
        n_head = min(n_head, end)
        key = tuple(tokens[:n_head])
        keep_head = self.settings.kept_heads > 0 and n_head > shared
        if keep_head and key in self._heads:
            self._load_head(llama, key)
            shared, keep_head = n_head, False
        elif keep_head and (start := self._kept_start(tokens, shared, n_head)) is not None:
            # The head itself is not kept yet (a conversation head, say) but a shorter one it starts
            # with is (the fixed examples before the conversation): start from that one.
            self._load_head(llama, start)
            shared = len(start)
        self.last_prompt = (len(tokens), len(tokens) - shared)
        step = self.settings.prefill_slice or len(tokens)
        llama.n_tokens = pos = shared
        while pos < end:
            if cancel.is_set():
                return False
            stop = min(pos + step, end)
            if keep_head and pos < n_head < stop:
                stop = n_head  # a slice ends at the head, for its state to be kept
            llama.eval(tokens[pos:stop])
            pos = stop
            if keep_head and pos == n_head:
                self._keep_head(llama, key)
        return not cancel.is_set()

    def _kept_start(self, tokens: list[int], shared: int, n_head: int) -> tuple[int, ...] | None:
        """The longest kept head that ``tokens`` start with, longer than ``shared`` and shorter
        than ``n_head``; None when there is none."""
        starts = [k for k in self._heads if shared < len(k) < n_head and tuple(tokens[: len(k)]) == k]
        return max(starts, key=len, default=None)

    def _keep_head(self, llama: Any, key: tuple[int, ...]) -> None:
        import ctypes

        import llama_cpp

        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        self._heads[key] = ctypes.string_at(buffer, written)
        while len(self._heads) > self.settings.kept_heads:
            self._heads.popitem(last=False)

    def _load_head(self, llama: Any, key: tuple[int, ...]) -> None:
        import ctypes

        import llama_cpp

        state = self._heads[key]
        self._heads.move_to_end(key)
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(state), 0) != len(state):
            raise RuntimeError("a kept prompt head could not be loaded into the model")
        llama.input_ids[: len(key)] = key
        llama.n_tokens = len(key)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        reply_start: str = "",
    ) -> AsyncIterator[str]:
        """Stream the reply; with ``json_schema`` the output is constrained to JSON of that schema.
        ``reply_start`` is written as the start of the reply and the model goes on from it (it is
        not streamed back)."""
        prompt, stops = self.format(messages)
        prompt += reply_start
        head = self.head_of(messages, prompt)
        self.capped = False
        for background in list(self._background):
            background.set()  # a real call goes first
        cancel = threading.Event()

        def generate(emit: Callable[[str], None]) -> None:
            self._generate(prompt, stops, max_tokens or self.settings.max_tokens, cancel, emit, json_schema, head)

        # The thread is waited for at the end, so the model is free before anyone else touches it.
        async with aclosing(stream_from_thread(generate, cancel.set)) as pieces:
            async for piece in pieces:
                yield piece
