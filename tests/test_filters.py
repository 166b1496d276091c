"""Stream filters: what they drop, what they hold, and the flush at a tool boundary."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.speaking.filters import FilterChain, RoleMarkerFilter, ThinkingFilter, default_chain


def run(chain: FilterChain, pieces: list[str]) -> str:
    return "".join(chain.feed(p) for p in pieces) + chain.flush()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello <think>plan it</think>there.", "Hello there."),
        ("<thinking>a\nb</thinking>Ten minutes.", "Ten minutes."),
        ("Assistant: It is noon.", "It is noon."),
        ("model\nIt is noon.", "It is noon."),
        ("  assistant : Sure.", "Sure."),
        ("Assistants can help.", "Assistants can help."),
        ("Modelling clay is fun.", "Modelling clay is fun."),
        ("<think>hidden</think>Assistant: Shown.", "Shown."),
        ("1 < 2 and 3 > 2.", "1 < 2 and 3 > 2."),
        ("Unfinished <think>never closed", "Unfinished "),
    ],
)
@pytest.mark.parametrize("step", [1, 3, 100])
def test_filtered_text(text: str, expected: str, step: int):
    pieces = [text[i : i + step] for i in range(0, len(text), step)]
    assert run(default_chain(), pieces) == expected


def test_only_a_possible_tag_start_is_held():
    f = ThinkingFilter()
    assert f.feed("Ten minutes. <th") == "Ten minutes. "
    assert f.feed("ere") == "<there"
    assert f.feed(" it is<") == " it is"
    assert f.flush() == "<"


def test_role_filter_releases_as_soon_as_no_marker_is_possible():
    f = RoleMarkerFilter()
    assert f.feed("Ass") == ""
    assert f.feed("ume nothing.") == "Assume nothing."
    assert f.feed(" More.") == " More."


@given(st.text(alphabet="ab <>/thinkgAsstan:\n", max_size=40), st.lists(st.integers(1, 5), max_size=20))
def test_chunking_never_changes_the_output(text: str, cuts: list[int]):
    whole = run(default_chain(), [text])
    pieces, i = [], 0
    for n in cuts:
        pieces.append(text[i : i + n])
        i += n
    pieces.append(text[i:])
    assert run(default_chain(), pieces) == whole


# -- the seed's scenario: a line before a tool, the tool, the answer -----------------------------

LINE = "잠깐, 일산 미세먼지 확인해볼게. "
EVENTS = [(2.9, "text", LINE), (3.35, "tool_use", ""), (12.8, "text", "지금은 보통이야. 산책해도 괜찮아."), (13.1, "done", "")]


def arrivals(chain: FilterChain, boundary: str) -> list[tuple[float, str]]:
    """When each piece of text leaves the chain for the speaker."""
    thinking, role = chain.filters
    out: list[tuple[float, str]] = []
    for t, kind, text in EVENTS:
        if kind == "text":
            released = chain.feed(text)
        elif kind == "tool_use":
            if boundary == "in order":
                released = chain.flush()
            elif boundary == "reversed":
                released = role.flush()
                released += role.feed(thinking.flush())
            else:
                released = ""
        else:
            released = chain.flush()
        if released:
            out.append((t, released))
    return out


def line_heard_by(out: list[tuple[float, str]]) -> float:
    """When the last character of the line left the chain."""
    sent = ""
    for t, text in out:
        sent += text
        if sent.startswith(LINE.strip()) or LINE.strip() in sent:
            return t
    raise AssertionError(f"the line never left: {out}")


def seed_chain() -> FilterChain:
    # The seed's fixed holds: the last 9 characters, and the first 600 of every reply.
    return FilterChain([ThinkingFilter(fixed_tail=9), RoleMarkerFilter(fixed_head=600)])


def test_the_whole_line_leaves_before_the_tool_when_flushed_in_order():
    out = arrivals(seed_chain(), "in order")
    assert line_heard_by(out) <= 3.35
    assert out[0] == (3.35, LINE)  # the whole line, its last nine characters included


@pytest.mark.parametrize("boundary", ["reversed", "none"])
def test_reversed_or_missing_flush_traps_the_end_of_the_line_until_the_answer(boundary: str):
    out = arrivals(seed_chain(), boundary)
    assert line_heard_by(out) > 3.35


def test_holding_only_what_could_be_a_marker_releases_the_line_as_it_is_written():
    out = arrivals(default_chain(), "in order")
    assert out[0] == (2.9, LINE)
