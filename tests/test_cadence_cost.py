"""bench.micro.cadence_cost's measuring, on pieces given directly (no tokenizer, no wall-clock limits)."""

from __future__ import annotations

import json

from agent.speaking.cadence import CadenceRules
from bench.micro import cadence_cost

TEXT = "Preheat the oven to 180 degrees. Beat the eggs with the sugar, then fold in the flour gently. 우산은 펼쳐서 말려. "
PIECES = [TEXT[i:i + 3] for i in range(0, len(TEXT), 3)]


def test_measure_reports_every_figure_and_they_are_positive():
    result = cadence_cost.measure("tiny", PIECES, rounds=2, tokens=len(PIECES) + 4)
    report = json.loads(json.dumps(cadence_cost.report([result], rounds=2)))
    assert report["rounds"] == 2
    assert {"platform", "python", "cpu_count"} <= set(report["machine"])
    (row,) = report["texts"]
    assert row["text"] == "tiny"
    assert row["tokens"] == len(PIECES) + 4
    assert row["pieces"] == len(PIECES)
    assert row["chars"] == len(TEXT)
    assert row["units"] >= 2
    for key in ("us_per_token", "p99_feed_us"):
        assert row[key] > 0, key
    assert isinstance(row["within_target"], bool)
    assert "tiny" in cadence_cost.table([result])


def test_the_check_accepts_pieces_that_stream_to_split_units_and_refuses_pieces_that_lose_text():
    good = cadence_cost.Case("tiny", TEXT, tuple(PIECES), len(PIECES))
    assert cadence_cost.check(good) is None
    lossy = cadence_cost.Case("lossy", TEXT, tuple(PIECES[:-1]), len(PIECES))
    assert "do not join" in cadence_cost.check(lossy)
    uncapped = cadence_cost.Case("uncapped", TEXT, tuple(PIECES), len(PIECES), CadenceRules(max_units=100))
    assert cadence_cost.check(uncapped) is None


class _ByteTokenizer:
    """A stand-in tokenizer with one token per byte, so every Korean syllable spans three tokens."""

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return list(data)

    def detokenize(self, tokens: list[int]) -> bytes:
        return bytes(tokens)


def test_token_pieces_hold_back_bytes_until_a_character_is_whole():
    pieces, tokens = cadence_cost.token_pieces(_ByteTokenizer(), "우산 ok")
    assert tokens == len("우산 ok".encode("utf-8"))
    assert pieces == ["우", "산", " ", "o", "k"]
