"""What the documentation states about the program matches the program."""

from __future__ import annotations

import re
from pathlib import Path

from firmware_py.wyoming import WyomingLimits
from firmware_py.wyoming.wire import MAX_DEPTH, PIECE_BYTES

ROOT = Path(__file__).resolve().parent.parent


def _doc(name: str) -> str:
    # One line per paragraph, so a sentence split over lines is matched whole.
    return re.sub(r"\s*\n\s*", " ", (ROOT / "docs" / name).read_text(encoding="utf-8"))


def test_home_md_states_the_wyoming_size_limits_the_server_applies():
    home, limits = _doc("home.md"), WyomingLimits()
    data = re.search(r"JSON data is over (\d+) KiB", home)
    payload = re.search(r"binary payload \(the audio\) is over (\d+) MiB", home)
    assert data and payload, "home.md no longer says how large an event may be"
    assert int(data.group(1)) * 1024 == limits.max_data_bytes
    assert int(payload.group(1)) * 1024 * 1024 == limits.max_payload_bytes
    assert f"nested more than {MAX_DEPTH} deep" in home
    assert f"nor {PIECE_BYTES // 1024} KiB of a larger one" in home
    assert "larger than 4 MiB" not in home  # the old claim, which the data part never met
