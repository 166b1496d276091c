"""Figures against SNR, a line per kind of sound, with the rooms without sound as dashed lines."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

Series = dict[str, list[tuple[float, float]]]
"""Per kind of sound: (SNR dB, value) points."""


def draw_against_snr(panels: list[tuple[str, Series, dict[str, float]]], path: Path, title: str) -> bool:
    """One panel per (label, series, references) side by side, written as PNG; False when there is
    nothing to draw (no sound at any SNR)."""
    if not any(series for _, series, _ in panels):
        return False
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2), squeeze=False)
    for ax, (label, series, refs) in zip(axes[0], panels):
        for kind, points in sorted(series.items()):
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", label=kind)
        for (name, value), style in zip(sorted(refs.items()), (":", "--", "-.")):
            ax.axhline(value, color="grey", linestyle=style, linewidth=1, label=name)
        ax.set_xlabel("speech over the sound (dB)")
        ax.set_ylabel(label)
        ax.invert_xaxis()  # louder sound to the right
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True
