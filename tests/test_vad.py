"""Silero VAD: the constructor does no I/O, and a missing model file is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio.protocols import VoiceActivityDetector
from audio.vad import SileroVad, VadSettings



def test_constructor_does_no_io_and_load_names_the_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.onnx"
    detector = SileroVad(VadSettings(missing))
    assert not detector.loaded
    assert isinstance(detector, VoiceActivityDetector)
    with pytest.raises(FileNotFoundError, match=r"nowhere\.onnx"):
        detector.load()


