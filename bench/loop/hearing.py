"""What each request really held, to score what the loop heard: its words and where its speech ends.

For every turn's recording the bench computes, offline and before any timing starts:

* a **reference transcript**: the same recognizer model decoding the whole recording once, with
  no prompt (Whisper in its full 30 s window, the way it was trained; Moonshine as it is).  A word of it missing
  from the loop's final transcript is a *dropped word*; one missing at the end is the worst
  kind, since the end of a request is where its argument is ("… for pancakes");
* the **end of the speech** in the recording, as the voice detector sees it run over the whole
  recording at once, to tell whether the loop stopped listening before the user had finished
  (a *cut-off*).  The detector rather than the signal's energy: a human recording's breaths and
  room noise are not speech, and a synthetic one's silence is exact either way.

Both are cached by the recording's content and the model, so a second run costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.vad import SileroVad, VadSettings
from audio.wav import read_wav

log = logging.getLogger(__name__)

CUT_OFF_MARGIN_S = 0.05
"""Speech in the recording this far past the moment the loop stopped listening counts as cut off."""


@dataclass(frozen=True)
class HeardReference:
    """What one recording holds."""

    text: str
    """The full-window decode of the whole recording, without a prompt."""
    speech_end_s: float
    """Where the voice detector says its last speech ends, from the start of the recording."""


def speech_end_s(samples: np.ndarray, vad_model: Path, rate: int = 16000) -> float:
    """Where Silero VAD, fed the whole recording and a second of silence, ends the last speech."""
    vad = SileroVad(VadSettings(model_path=vad_model, min_silence_duration_s=0.1, min_speech_duration_s=0.15))
    events = vad.accept(np.concatenate([samples, np.zeros(rate, np.float32)]))
    ends = [e.sample for e in events if not e.speech]
    return ends[-1] / rate if ends else 0.0


def _reference_recognizer(model_dir: Path, language: str) -> Any:
    """The ear's own whole-recording decode: Whisper's in the full window, or Moonshine's."""
    if (model_dir / "decoder.onnx").is_file() and (model_dir / "tokenizer.bin").is_file():
        from audio.moonshine_asr import MoonshineRecognizer, MoonshineSettings

        return MoonshineRecognizer(MoonshineSettings(model_dir=model_dir))
    from audio.whisper_asr import WhisperRecognizer, WhisperSettings

    return WhisperRecognizer(WhisperSettings(model_dir=model_dir, language=language, final_window="full"))


class ReferenceDecoder:
    """Decodes recordings in the full window with ``model`` (loaded on first need) and caches the results."""

    def __init__(self, model_dir: Path, language: str, cache_dir: Path, vad_model: Path) -> None:
        self.model_dir = Path(model_dir)
        self.vad_model = vad_model
        self.language = language
        self.cache_dir = cache_dir / "bench-reference"
        self._recognizer: Any = None

    def _path(self, audio: bytes) -> Path:
        key = hashlib.sha256(audio + f"{self.model_dir.name}|vad-end".encode()).hexdigest()[:16]
        return self.cache_dir / f"{key}.json"

    def reference(self, recording: Path) -> HeardReference:
        raw = recording.read_bytes()
        cached = self._path(raw)
        if cached.is_file():
            return HeardReference(**json.loads(cached.read_text(encoding="utf-8")))
        samples = read_wav(raw, 16000).samples
        if self._recognizer is None:
            self._recognizer = _reference_recognizer(self.model_dir, self.language)
            self._recognizer.load()
        found = HeardReference(self._recognizer.decode(samples), round(speech_end_s(samples, self.vad_model), 3))
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(asdict(found), ensure_ascii=False), encoding="utf-8")
        return found

    def close(self) -> None:
        """Let the model go before the timed run, so it weighs on neither memory nor the figures."""
        self._recognizer = None


def hearing_figures(transcript: str, reference: HeardReference | None, endpoint_audio_s: float | None,
                    ended_by: str | None, language: str) -> dict[str, Any]:
    """Per-turn figures: the words dropped against the reference, and whether the user was cut off."""
    from bench.suites.scoring import dropped_words

    if reference is None:
        return {"dropped_words": None, "dropped_tail": None, "cut_off": None, "reference": None}
    dropped, at_end = dropped_words(reference.text, transcript, language)
    cut = None
    if endpoint_audio_s is not None and ended_by != "button":
        cut = reference.speech_end_s > endpoint_audio_s + CUT_OFF_MARGIN_S
    return {"dropped_words": dropped, "dropped_tail": at_end > 0, "cut_off": cut, "reference": reference.text}
