"""Where the time to first audio goes: each step's share, per turn kind, and a stacked bar of them.

A turn's timeline is cut at five checkpoints after the end of speech (after the button's release,
when a held press ended the utterance), each no earlier than the one before, so the steps add up
to the first audio:

1. ``listening``: the end of speech until the listener decides the user has finished;
2. ``final decode``: until the final transcript;
3. ``decision``: until the call (or no call) is known: the answer's decision ends, or the
   Thinker's decision on the same words is taken;
4. ``wait and tool``: until the first unit's synthesis starts (the wait for a sure end, the tool);
5. ``voice``: until its first sample reaches the speaker.

Turns are told apart by what the reference asks for: an ``act`` (a timer, the list, a note), a
``look-up`` (the weather, a conversion, the timers read out), or ``no tool``.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

STEPS = ("listening", "final decode", "decision", "wait and tool", "voice")


def first_audio_steps(tl: Any) -> dict[str, float] | None:
    """The five steps of one turn in seconds, or None when a checkpoint is missing."""
    # A held press is timed from its release (the user's own end); a tap from the end of speech.
    end, heard = tl.last("released") or tl.last("speech_end"), tl.last("first_audio_out")
    if end is None or heard is None:
        return None
    endpoint, final = tl.last("endpoint"), tl.last("final_transcript")
    decided = tl.last("heartbeat_decision_reused") or tl.last("llm_end") or final
    voice = next((m for m in tl.all("tts_start") if m.t >= end.t), None)
    marks = [endpoint, final, decided, voice, heard]
    if any(m is None for m in marks):
        return None
    at, steps = end.t, {}
    for name, mark in zip(STEPS, marks):
        t = min(max(at, mark.t), heard.t)
        steps[name] = round(t - at, 4)
        at = t
    return steps


def turn_kind(expected_tools: list[str], acting: set[str]) -> str:
    if not expected_tools:
        return "no tool"
    return "act" if any(t in acting for t in expected_tools) else "look-up"


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per turn kind: the mean of each step over its turns (means, so that the bar's steps add up
    to the mean first audio), and how many turns."""
    kinds: dict[str, list[dict[str, float]]] = {}
    for row in rows:
        if row.get("first_audio_steps"):
            kinds.setdefault(row["turn_kind"], []).append(row["first_audio_steps"])
    return {
        kind: {"n": len(steps), **{name: round(statistics.mean(s[name] for s in steps), 4) for name in STEPS}}
        for kind, steps in sorted(kinds.items())
    }


def table(per_variant: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Markdown lines: a row per variant and turn kind, a column per step (means, s)."""
    lines = ["| variant | turns | " + " | ".join(STEPS) + " | sum |", "| --- | --- | " + " | ".join("---" for _ in STEPS) + " | --- |"]
    for variant, kinds in per_variant.items():
        for kind, figures in kinds.items():
            total = sum(figures[name] for name in STEPS)
            lines.append(f"| {variant} | {kind} ({figures['n']}) | " + " | ".join(f"{figures[n]:.2f}" for n in STEPS) + f" | {total:.2f} |")
    return lines


def draw(per_variant: dict[str, dict[str, dict[str, Any]]], path: Path, title: str) -> bool:
    """A stacked bar per variant and turn kind; False when there is nothing to draw."""
    bars = [(f"{variant}\n{kind}", figures) for variant, kinds in per_variant.items() for kind, figures in kinds.items()]
    if not bars:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(bars)), 4.5))
    bottoms = [0.0] * len(bars)
    for name in STEPS:
        heights = [figures[name] for _, figures in bars]
        ax.bar(range(len(bars)), heights, bottom=bottoms, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(range(len(bars)), [label for label, _ in bars], fontsize=7)
    ax.set_ylabel("end of speech → first audio, mean of each step (s)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
