"""Neural speech from a piper voice, run by sherpa-onnx, phonemized by espeak-ng.

sherpa-onnx 2.x no longer phonemizes text itself: given plain text it returns
no audio.  So text goes through piper's own espeak-ng bridge (``espeakbridge``,
a self-contained extension module with its own espeak-ng data) exactly the way
piper does it, and the phonemes go to sherpa-onnx as codepoints in
``GenerationConfig.phoneme_codepoints``, one list per sentence.  sherpa-onnx
turns each sentence into ids the piper way (BOS, PAD after every phoneme, EOS)
and, with ``max_num_sentences=1``, runs and reports one sentence at a time, so
the first sentence can play while the next is computed.

The voice directory is what :func:`models.piper_voice.prepare_piper_voice`
writes: ``model.onnx`` (with sherpa metadata), ``tokens.txt`` and
``model.onnx.json``.
"""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import json
import logging
import re
import threading
import unicodedata
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from audio.protocols import AudioChunk

log = logging.getLogger(__name__)

_LANG_FLAG = re.compile(r"\([^)]+\)")
_CLAUSE_PAUSE = (",", ":", ";")

# espeak-ng keeps one global voice and state per process, so every bridge call
# goes through this lock, whichever synthesizer makes it.
_ESPEAK_LOCK = threading.Lock()
_BRIDGES: dict[tuple[Path, Path], ModuleType] = {}


@dataclass(frozen=True)
class PiperSettings:
    """Where a piper voice lives and how to run it."""

    voice_dir: Path
    """Directory holding ``model.onnx``, ``tokens.txt`` and ``model.onnx.json``."""
    espeak_bridge: Path
    """Path of piper's ``espeakbridge`` extension module (a ``.so``)."""
    espeak_data: Path | None = None
    """espeak-ng data directory; None means ``espeak-ng-data`` next to the bridge."""
    language: str = "en"
    """Language this voice speaks, as the rest of hearth names it."""
    num_threads: int = 1
    """ONNX Runtime threads; on two cores one thread was as fast as two and leaves a core to the LLM."""
    speed: float = 1.0
    """Speaking rate; 1.0 is the voice's own, 1.2 is 20 % faster."""
    silence_scale: float = 1.0
    """sherpa-onnx's scaling of pauses inside a sentence; 1.0 keeps the voice's own timing."""
    normalize: bool = True
    """Scale each sentence to full range, as piper does by default."""
    volume: float = 1.0
    """Gain applied after normalization."""
    sample_rate: int = 22050
    """Rate announced before ``load()``; replaced by the voice's real rate once loaded."""


def load_espeak_bridge(bridge: Path, data_dir: Path) -> ModuleType:
    """Import ``espeakbridge`` from a file path and initialize it with its data (once per process)."""
    key = (Path(bridge).resolve(), Path(data_dir).resolve())
    with _ESPEAK_LOCK:
        module = _BRIDGES.get(key)
        if module is not None:
            return module
        if not key[0].is_file():
            raise FileNotFoundError(f"espeak bridge not found: {bridge}")
        if not (key[1] / "phontab").is_file():
            raise FileNotFoundError(f"espeak-ng data not found (no phontab): {data_dir}")
        # The module's init function is PyInit_espeakbridge, so it must be
        # imported under exactly that name, whatever the file is called.
        loader = importlib.machinery.ExtensionFileLoader("espeakbridge", str(key[0]))
        spec = importlib.util.spec_from_file_location("espeakbridge", str(key[0]), loader=loader)
        if spec is None:
            raise ImportError(f"cannot load espeak bridge from {bridge}")
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        module.initialize(str(key[1]))
        _BRIDGES[key] = module
        return module


def clean_text(text: str) -> str:
    """Drop what should not be read aloud: emoji and pictographs, joiners, variation selectors.

    espeak-ng reads an emoji as its name ("smiling face with smiling eyes"),
    which a model's cheerful reply should not turn into.  The degree sign is a
    symbol too but is kept: "21°C" must be read as a temperature.
    """
    text = text.replace("\u2103", "°C").replace("\u2109", "°F")
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch == "°" or not (category in ("So", "Cf", "Cs", "Co", "Cn") or "\ufe00" <= ch <= "\ufe0f"):
            kept.append(ch)
    return "".join(kept)


def phonemize(bridge: ModuleType, voice: str, text: str) -> list[str]:
    """Text to one phoneme string per sentence, as piper 1.8 builds them.

    Each clause's phonemes get their terminator appended (and a space after
    ``,;:`` which do not end a sentence), espeak's ``(lang)`` switch flags are
    removed, and the result is NFD-decomposed so accents become separate
    codepoints, as in the voice's phoneme map.
    """
    with _ESPEAK_LOCK:
        bridge.set_voice(voice)
        clauses = bridge.get_phonemes(text)
    sentences: list[str] = []
    current = ""
    for phonemes, terminator, end_of_sentence in clauses:
        piece = _LANG_FLAG.sub("", phonemes) + terminator
        if terminator in _CLAUSE_PAUSE:
            piece += " "
        current += unicodedata.normalize("NFD", piece)
        if end_of_sentence:
            sentences.append(current)
            current = ""
    if current:
        sentences.append(current)
    return sentences


class PiperSynthesizer:
    """A piper voice behind the :class:`~audio.protocols.Synthesizer` contract.

    Construct, then ``await load()`` (reads the model, about a second) and
    ``await warm()`` (one short synthesis, so the first real sentence does not
    pay for ONNX Runtime's first-run allocations).
    """

    def __init__(self, settings: PiperSettings) -> None:
        self.settings = settings
        self.language = settings.language
        self.sample_rate = settings.sample_rate
        self._tts: Any = None
        self._bridge: ModuleType | None = None
        self._espeak_voice = ""
        self._symbols: frozenset[int] = frozenset()
        # One sherpa-onnx OfflineTts runs one generation at a time.
        self._generate_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._tts is not None

    async def load(self) -> None:
        """Load the voice and the phonemizer (blocking work runs in a worker thread)."""
        if self._tts is None:
            await asyncio.to_thread(self._load)

    async def warm(self) -> None:
        """Synthesize a short sentence and throw it away."""
        async for _ in self.synthesize("Hello there."):
            pass

    def _load(self) -> None:
        import sherpa_onnx  # imported here: only a loaded synthesizer needs it

        s = self.settings
        voice_dir = Path(s.voice_dir)
        model, tokens, config_path = (voice_dir / n for n in ("model.onnx", "tokens.txt", "model.onnx.json"))
        for path in (model, tokens, config_path):
            if not path.is_file():
                raise FileNotFoundError(f"piper voice incomplete, missing {path}")
        config = json.loads(config_path.read_text(encoding="utf-8"))
        self._espeak_voice = str(config["espeak"]["voice"])
        inference = config.get("inference", {})
        data_dir = Path(s.espeak_data) if s.espeak_data is not None else Path(s.espeak_bridge).parent / "espeak-ng-data"
        self._bridge = load_espeak_bridge(Path(s.espeak_bridge), data_dir)
        self._symbols = frozenset(_read_token_codepoints(tokens))

        # Speed goes into length_scale here rather than GenerationConfig.speed:
        # sherpa-onnx replaces the voice's own length_scale by 1/speed, which
        # would be wrong for a voice whose length_scale is not 1.
        vits = sherpa_onnx.OfflineTtsVitsModelConfig(
            model=str(model),
            tokens=str(tokens),
            noise_scale=float(inference.get("noise_scale", 0.667)),
            noise_scale_w=float(inference.get("noise_w", 0.8)),
            length_scale=float(inference.get("length_scale", 1.0)) / s.speed,
        )
        tts_config = sherpa_onnx.OfflineTtsConfig(
            model=sherpa_onnx.OfflineTtsModelConfig(vits=vits, num_threads=s.num_threads, provider="cpu"),
            max_num_sentences=1,
        )
        if not tts_config.validate():
            raise ValueError(f"sherpa-onnx rejected the voice configuration for {voice_dir}")
        tts = sherpa_onnx.OfflineTts(tts_config)
        if tts.sample_rate != self.sample_rate:
            log.info("voice %s speaks at %d Hz", voice_dir.name, tts.sample_rate)
        self.sample_rate = int(tts.sample_rate)
        self._tts = tts
        log.info("loaded piper voice %s (espeak voice %s)", voice_dir, self._espeak_voice)

    def phonemes(self, text: str) -> list[list[int]]:
        """The codepoints sent to the model, one list per sentence; sentences without phonemes are left out."""
        if self._bridge is None:
            raise RuntimeError("PiperSynthesizer.load() has not been called")
        cleaned = clean_text(text)
        if not any(ch.isalnum() for ch in cleaned):
            return []
        result: list[list[int]] = []
        for sentence in phonemize(self._bridge, self._espeak_voice, cleaned):
            known = [ord(ch) for ch in sentence if ord(ch) in self._symbols]
            if len(known) != len(sentence):
                # sherpa-onnx would skip them too, but log one line per symbol to stderr.
                unknown = {ch for ch in sentence if ord(ch) not in self._symbols}
                log.debug("phonemes not in the voice, skipped: %r", unknown)
            # Punctuation and spaces alone would synthesize a breath or a click.
            if any(unicodedata.category(chr(cp)).startswith("L") for cp in known):
                result.append(known)
        return result

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        """Yield one chunk per sentence as soon as it is synthesized.

        Cancelling the consumer (or closing the generator) sets a flag the
        worker checks after every sentence, so synthesis stops after the
        sentence in progress.
        """
        if self._tts is None:
            raise RuntimeError("PiperSynthesizer.load() has not been called")
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[np.ndarray | BaseException | None] = asyncio.Queue()
        cancel = threading.Event()

        def post(item: np.ndarray | BaseException | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop closed while the worker ran: nobody is listening
                cancel.set()

        def on_sentence(samples: np.ndarray, progress: float) -> int:
            if cancel.is_set():
                return 0
            # sherpa-onnx frees the buffer when the callback returns.
            post(self._finish(np.array(samples, dtype=np.float32, copy=True)))
            return 0 if cancel.is_set() else 1

        def work() -> None:
            import sherpa_onnx

            try:
                sentences = self.phonemes(text)
                if not sentences or cancel.is_set():
                    return
                config = sherpa_onnx.GenerationConfig()
                config.sid = 0
                config.speed = 1.0
                config.silence_scale = self.settings.silence_scale
                config.phoneme_codepoints = sentences
                with self._generate_lock:
                    if not cancel.is_set():
                        self._tts.generate("", config, on_sentence)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                post(exc)
            finally:
                post(None)

        worker = loop.run_in_executor(None, work)
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                if len(item):
                    yield AudioChunk(item, self.sample_rate)
        finally:
            cancel.set()
            # Not awaited on purpose: a cancelled consumer must not wait for the
            # sentence in progress; the worker stops after it on its own.
            worker.add_done_callback(_ignore_result)

    def _finish(self, audio: np.ndarray) -> np.ndarray:
        if self.settings.normalize:
            peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
            if peak > 1e-8:
                audio = audio / peak
        if self.settings.volume != 1.0:
            audio = audio * self.settings.volume
        return np.clip(audio, -1.0, 1.0).astype(np.float32, copy=False)


def _read_token_codepoints(tokens: Path) -> set[int]:
    """The codepoints ``tokens.txt`` knows, read the way sherpa-onnx reads them (a bare id is the space)."""
    codepoints: set[int] = set()
    for line in tokens.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 1:
            codepoints.add(ord(" "))
        elif len(fields) == 2 and len(fields[0]) == 1:
            codepoints.add(ord(fields[0]))
    return codepoints


def _ignore_result(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
