"""Fuzzing the voice detector on the real Silero model: any chunks, offsets in order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from audio.vad import SileroVad, VadSettings
from tests.fuzzing import fuzz
from tests.test_fuzz_audio import chunks

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def vad(model_path) -> SileroVad:
    detector = SileroVad(VadSettings(model_path("silero-vad/silero_vad.onnx")))
    detector.load()
    return detector


def test_the_detector_takes_any_chunks_and_its_offsets_stay_in_order(vad: SileroVad):
    @fuzz()
    @given(chunks)
    def run(pieces: list[np.ndarray]) -> None:
        vad.reset()
        events = []
        for piece in pieces:
            events += vad.accept(piece)
        events += vad.flush()
        assert vad.position == sum(len(p.reshape(-1)) for p in pieces)
        offsets = [e.sample for e in events]
        assert offsets == sorted(offsets) and all(0 <= o <= vad.position for o in offsets)
        assert [e.speech for e in events] == [i % 2 == 0 for i in range(len(events))]  # start, stop, start, ...

    run()
