"""Fuzzing Cadence's live splitter: any text in any pieces, exactly the units of a full rescan, in linear cost.

* No crash, and the units join back into the text exactly (:class:`UnitStream` cuts, it never
  changes a character; :class:`Cadence` only drops units that are blank, so the text's words
  come back in order).
* The stream gives out the same units on the same pieces as :func:`find_cut` run on the whole
  unit at every piece (what it did before it resumed its scans): the speed-up changes nothing.
* The characters it hands to the boundary scan (:attr:`UnitStream.scanned`) grow linearly: a
  text twice as long costs about twice as much, not four times (a count, not a clock).  The
  texts for this are made of words followed by spaces, with code, quotes, digits and
  punctuation.  Three shapes stay quadratic in the length of the run (not of the reply): a
  single run of thousands of characters without a space, thousands of characters of
  laughter or emoji after one sentence ("ㅋㅋ ㅋㅋ ㅋㅋ …"), whose end stays uncertain, and an
  inline-code backtick followed by fences and words repeated for thousands of characters
  ("Then, ` ``` " over and over, found by a random draw): nothing is certain before the reply
  ends, so ``flush`` cuts every unit with a scan of all that is left (1,500 characters scanned
  31,827 times over, 3,000 126,069).  The fixed draw of this test does not hold it.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.speaking.cadence import Cadence, CadenceRules, UnitStream
from bench.micro.cadence_linear import Rescan, run
from tests.fuzzing import fuzz

PIECES = [
    "Preheat", "the", "oven", "because", "until", "although", "it", "be", "un", "so", "and", "Then,", "stir", "x", "=", "f(a)",
    "사고", "라면", "먹고", "없어서", "좋은데", "그러니까", "맛있어요", "했습니다", "좋다", "있음", "ㅋㅋ", "ㅎ", "^^", "😊", "👩\u200d🍳",
    ".", "..", "…", "!", "?", ",", ";", ":", "~", "—", "(", ")", "(aside)", "(웃음)", '"', "“", "”", "'", "`", "```", "```python\n",
    " ", " ", " ", "  ", "\n", "\n\n", "\t", "3.5", "1,000", "3:30", "p.m.", "2024. 5. 1.", "May 5, 2024", "5 kg", "e.g.", "Dr.",
    "https://example.com/a.b?c=1", "cook@example.com", "`x = 1.5`", "1.", "A.",
]  # fmt: skip
RULES = [CadenceRules(), CadenceRules(max_units=1_000_000), CadenceRules(weak_open_chars=10, max_units=1_000_000),
         CadenceRules(language="en", max_units=50), CadenceRules(language="ko", max_units=50), CadenceRules(enabled=False)]

texts = st.lists(st.sampled_from(PIECES), max_size=300).map("".join) | st.text(max_size=400)
sizes = st.lists(st.integers(1, 16), min_size=1, max_size=12)


def pieces_of(text: str, cut_sizes: list[int]) -> list[str]:
    out, at, i = [], 0, 0
    while at < len(text):
        size = cut_sizes[i % len(cut_sizes)]
        out.append(text[at:at + size])
        at, i = at + size, i + 1
    return out


@fuzz(scale=2)
@given(texts, sizes, st.sampled_from(RULES))
def test_any_text_in_any_pieces_comes_back_whole(text: str, cut_sizes: list[int], rules: CadenceRules):
    pieces = pieces_of(text, cut_sizes)
    stream, cadence = UnitStream(rules), Cadence(rules)
    units = [u for piece in pieces for u in stream.feed(piece)] + stream.flush()
    spoken = [u for piece in pieces for u in cadence.feed(piece)] + cadence.flush()
    assert "".join(units) == text
    assert "".join("".join(spoken).split()) == "".join(text.split())
    assert all(u.strip() for u in spoken)


@fuzz(scale=2)
@given(texts, sizes, st.sampled_from(RULES))
def test_the_stream_gives_the_units_a_full_rescan_gives_on_every_piece(text: str, cut_sizes: list[int], rules: CadenceRules):
    pieces = pieces_of(text, cut_sizes)
    assert run(UnitStream(rules), pieces) == run(Rescan(rules), pieces)


# Words each followed by a space (no run without one) and no laughter or emoji: see the docstring.
LINEAR_WORDS = [
    "Preheat ", "the ", "oven ", "because ", "until ", "it ", "be ", "so ", "and ", "Then, ", "stir ", "x ", "= ", "f(a) ",
    "사고 ", "라면 ", "먹고 ", "없어서 ", "좋은데 ", "맛있어요 ", "했습니다 ", ". ", "! ", "? ", ", ", "; ", ": ", "— ", '" ', "“ ", "” ",
    "` ", "``` ", "```python\n", "\n", "3.5 ", "1,000 ", "3:30 ", "May 5, 2024 ", "5 kg ", "e.g. ", "Dr. ", "https://example.com/a ",
]  # fmt: skip


def scanned(base: str, length: int, rules: CadenceRules, piece: int) -> int:
    text = (base * (length // len(base) + 1))[:length]
    stream = UnitStream(rules)
    for at in range(0, len(text), piece):
        stream.feed(text[at:at + piece])
    stream.flush()
    return stream.scanned


@fuzz(scale=0.5)
@given(st.lists(st.sampled_from(LINEAR_WORDS), min_size=1, max_size=40).map("".join), st.sampled_from(RULES[:3]), st.integers(1, 8))
def test_twice_the_text_costs_about_twice_the_scanning(base: str, rules: CadenceRules, piece: int):
    once, twice = scanned(base, 1500, rules, piece), scanned(base, 3000, rules, piece)
    # Linear: 2x plus the slack of a few windows; quadratic would be about 4x.
    assert twice <= 2.6 * once + 4000, (once, twice)


def test_an_unclosed_fence_scans_each_character_about_once():
    text = "Here is the code:\n```python\n" + "total = add(a, b). Then, print(total)!\n" * 200
    assert scanned(text, len(text), CadenceRules(), 4) < 2 * len(text)
