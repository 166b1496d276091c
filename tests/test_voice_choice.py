"""Which voice speaks each language, and Korean's fall back to espeak-ng when Kokoro is not installed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from audio.espeak_tts import EspeakSynthesizer
from audio.kokoro_tts import KokoroSynthesizer
from firmware_py.config import parse_config
from firmware_py.wiring import StartupError, check_roles, make_synthesizer, required_models, voice_models
from models.store import ModelStore


def test_english_speaks_with_piper_and_its_phonemes() -> None:
    assert voice_models(parse_config({})) == ["piper-en-joe", "espeak-ng"]


def test_korean_speaks_with_kokoro_by_default() -> None:
    config = parse_config({"language": "ko"})
    assert voice_models(config) == ["kokoro-82m-ja"]
    assert "kokoro-82m-ja" in required_models(config)


def test_korean_on_espeak_needs_no_model() -> None:
    config = parse_config({"language": "ko", "tts": {"voice_ko": "espeak-ng"}})
    assert voice_models(config) == []
    assert isinstance(make_synthesizer(config, ModelStore(Path("/nonexistent"))), EspeakSynthesizer)


def test_a_missing_kokoro_model_falls_back_to_espeak_and_says_how_to_install_it(tmp_path: Path, caplog) -> None:
    config = parse_config({"language": "ko", "models_dir": str(tmp_path)})
    store = ModelStore(tmp_path)
    with caplog.at_level(logging.WARNING, logger="firmware_py.wiring"):
        synth = make_synthesizer(config, store)
    assert isinstance(synth, EspeakSynthesizer)
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "espeak-ng" in warning and "hearth models install kokoro-82m-ja" in warning


def test_an_installed_kokoro_model_speaks_korean_in_the_configured_voice(tmp_path: Path, monkeypatch) -> None:
    config = parse_config({"language": "ko", "tts": {"kokoro_voice_ko": "jm_kumo", "n_threads_ko": 1, "speed": 0.9}})
    store = ModelStore(tmp_path)
    monkeypatch.setattr(store, "check", lambda names=None: [])  # as if installed and whole
    synth = make_synthesizer(config, store)
    assert isinstance(synth, KokoroSynthesizer)
    assert synth.settings.model_dir == tmp_path / "kokoro-82m-ja"
    assert (synth.settings.voice, synth.settings.num_threads, synth.settings.speed) == ("jm_kumo", 1, 0.9)


def test_a_korean_voice_that_is_not_a_voice_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = parse_config({"language": "ko", "tts": {"voice_ko": "whisper-base"}})
    with pytest.raises(StartupError, match=r"tts.voice_ko = 'whisper-base' is a asr model, not a tts model"):
        check_roles(config, ModelStore(tmp_path))
