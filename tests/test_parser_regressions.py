"""One test per crash or blow-up the parser fuzzing found (tests/test_fuzz_*.py), named for the bug.

The configuration loader's and the tools' own regressions live with their tests
(tests/test_config.py, tests/test_tool_bounds.py).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from agent.speaking.cadence import CadenceRules, UnitStream, split_units
from audio.levels import finite_samples
from audio.wav import AudioFileError, read_wav, resample
from bench.micro.cadence_linear import Rescan, run
from bench.suites.scenarios import suite_from_yaml
from bench.suites.schema import SuiteError

# -- audio ---------------------------------------------------------------------------------------


def _wav(rate: int, width: int, data: bytes, channels: int = 1) -> bytes:
    block = channels * width
    fmt = struct.pack("<HHIIHH", 1, channels, rate, (rate * block) & 0xFFFFFFFF, block, width * 8)
    return b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data


def test_a_wav_cut_inside_a_sample_is_read_without_the_partial_sample():
    # Was: ValueError "buffer size must be a multiple of element size" from numpy.
    chunk = read_wav(_wav(16000, 2, b"\x00\x40" * 3 + b"\x01"))
    assert chunk.samples.tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("rate", [1, 7, 3999, 384_001, 2**32 - 1])
def test_a_wav_claiming_a_rate_no_sound_card_has_is_refused_not_resampled_to_gigabytes(rate: int):
    # Was: 1 Hz resampled to 16 kHz asks for 16,000 times the samples (and more for a longer file).
    with pytest.raises(AudioFileError, match=f"a sample rate of {rate} Hz is outside"):
        read_wav(_wav(rate, 2, b"\x00\x00" * 100), 16000)


def test_resampling_from_or_to_a_rate_out_of_range_is_one_clear_error():
    with pytest.raises(ValueError, match="sample rate 0 Hz is outside"):
        resample(np.zeros(10, np.float32), 0, 16000)


def test_nan_infinity_and_far_past_full_scale_become_silence_and_full_scale():
    raw = np.array([np.nan, np.inf, -np.inf, 1e30, -3.0, 0.25], np.float32)
    assert finite_samples(raw).tolist() == [0.0, 1.0, -1.0, 1.0, -1.0, 0.25]
    clean = np.array([0.5, -0.5], np.float32)
    assert np.shares_memory(finite_samples(clean), clean)  # the usual case costs no copy


def test_float64_beyond_float32_is_clipped_without_an_overflow_warning():
    with np.errstate(all="raise"):
        assert finite_samples(np.array([3.5e38, -1e300])).tolist() == [1.0, -1.0]


# -- scenario files --------------------------------------------------------------------------------


@pytest.mark.parametrize("content, expected", [
    (b"suite: s\nlanguage: \xe9n\n", "line 2: not UTF-8 text (byte 0xe9)"),
    (b"suite: " + b"[" * 5000 + b"]" * 5000, "not valid YAML (nested too deeply)"),
    (b"suite: 2001-13-45\n", "not valid YAML (month must be in 1..12)"),
    (b"suite: " + b"9" * 5000 + b"\n", "not valid YAML (Exceeds the limit (4300 digits)"),
    (b"suite: 0x" + b"f" * 5000 + b"\n", "suite: Input should be a valid string (got <int too long to show>)"),
    (b"a: &a [x, x]\nb: [*a, *a]\n", "anchors and aliases (*name) are not used in suites"),
])
def test_a_suite_file_python_chokes_on_is_one_line_naming_the_file(tmp_path: Path, content: bytes, expected: str):
    # Was: UnicodeDecodeError, RecursionError or ValueError with a traceback.
    path = tmp_path / "s.yaml"
    path.write_bytes(content)
    with pytest.raises(SuiteError) as info:
        suite_from_yaml(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)) and expected in message, message


def test_billion_laughs_in_a_suite_is_refused_at_once(tmp_path: Path):
    # Was: every alias expanded in the error message, seconds for 9^8 strings and minutes for 9^9.
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(lines) + "\nsuite: s\ndescription: *i\n")
    with pytest.raises(SuiteError, match="anchors and aliases"):  # refused while composing, before anything expands
        suite_from_yaml(path)


def test_a_fifo_given_as_a_suite_is_refused_without_waiting_for_a_writer(tmp_path: Path):
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    with pytest.raises(SuiteError, match="not a regular file"):
        suite_from_yaml(fifo)


# -- Cadence ----------------------------------------------------------------------------------------


def _same_as_rescan(text: str, rules: CadenceRules = CadenceRules(), piece: int = 1) -> UnitStream:
    pieces = [text[i:i + piece] for i in range(0, len(text), piece)]
    stream = UnitStream(rules)
    assert run(stream, pieces) == run(Rescan(rules), pieces)
    return stream


def test_a_fence_closed_right_at_the_end_of_the_text_is_not_taken_for_an_open_one():
    # Found comparing the stream with a full rescan: the unit "```\n```\n" was held back at ",".
    stream = UnitStream(CadenceRules(language="ko", max_units=50))
    units = [u for c in "```\n```\n," for u in stream.feed(c)]
    assert units == ["```\n```\n"]
    assert split_units("```\n```\n,", CadenceRules(language="ko", max_units=50))[0] == "```\n```\n"


def test_backticks_that_can_never_close_do_not_make_the_stream_quadratic():
    # Found by the linear-cost fuzz test: "맛있어요 ` ``` " repeated scanned the whole unit on every piece.
    text = ("맛있어요 ` ``` " * 300)[:3000]
    assert _same_as_rescan(text).scanned < 10 * len(text)  # it was about len(text) ** 2 / 2


def test_a_unit_without_a_single_candidate_boundary_is_not_rescanned():
    # Found by the linear-cost fuzz test: "` ` ` …" (no punctuation at all) rescanned every piece.
    text = ("` " * 1500)[:3000]
    assert _same_as_rescan(text).scanned < 10 * len(text)  # it was about len(text) ** 2 / 2


def test_a_run_of_trailers_after_a_sentence_is_walked_once_per_scan():
    # Was: every "ㅋㅋ" walked every trailer after it, cubic over a stream; 400 characters took 0.6 s.
    text = "좋아요 " + "ㅋㅋ " * 120
    _same_as_rescan(text, CadenceRules(max_units=1_000_000), piece=4)
    assert split_units(text, CadenceRules(max_units=1_000_000)) == [text]
