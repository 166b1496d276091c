"""One turn as a Gantt chart: where the time went, from the button press to the last sample heard.

    python -m firmware_py.web.timeline_view out/demo-timeline.json --png out/demo-timeline.png --html out/demo-timeline.html
    python -m firmware_py.web.timeline_view out/bench-latency.json --turn 3 --png turn3.png

Reads ``Timeline.to_dict()`` (optionally with ``transcript``, ``reply`` and ``outcome``
beside the marks) or a latency-benchmark report, whose ``turns`` each carry marks.

``build_layout`` turns the marks into lanes of spans and ticks, and ``_scene`` turns
that layout into rectangles, lines and text in pixels.  The PNG and the HTML draw
the same scene, so the two pictures cannot disagree.
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from firmware_py.web.timeline_layout import (  # noqa: F401 - re-exported: the layout is part of this module's API
    BAR_PX, BRACKET_ROW_PX, CHAR_PX, COLOURS, FONT_PX, HEADER_LINE_PX, LABEL_PX, LANE_PAD_PX, LEFT_PX,
    MAX_LABEL_ROWS, RIGHT_PX, ROW_PX, TITLE_PX, AXIS_PX, WIDTH_PX, _FALLBACK_FONTS,
    Bracket, Lane, Layout, Span, Tick, build_layout,
)

log = logging.getLogger(__name__)


# -- layout to pixels -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rect:
    """A filled box in pixels (y down); ``title`` is its hover text."""

    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str = "none"
    dashed: bool = False
    opacity: float = 1.0
    title: str = ""


@dataclass(frozen=True)
class _Line:
    """A straight line in pixels."""

    x1: float
    y1: float
    x2: float
    y2: float
    colour: str
    width: float = 1.0
    dashed: bool = False
    title: str = ""


@dataclass(frozen=True)
class _Text:
    """Text centred vertically on ``y``; ``anchor`` is start, middle or end."""

    x: float
    y: float
    text: str
    colour: str = "#1a1a1a"
    size: float = FONT_PX
    anchor: str = "start"
    bold: bool = False
    title: str = ""


_Shape = _Rect | _Line | _Text


def _scene(layout: Layout) -> tuple[int, list[_Shape]]:
    """The picture both renderers draw: its height in pixels and its shapes, back to front."""
    width = layout.width_px
    plot_w = width - LEFT_PX - RIGHT_PX

    def x(t: float) -> float:
        return LEFT_PX + t / layout.t_end * plot_w

    back: list[_Shape] = []  # lane backgrounds and grid, under everything else
    shapes: list[_Shape] = []
    y = 10.0
    shapes.append(_Text(12, y + TITLE_PX / 2, layout.title, size=TITLE_PX, bold=True))
    y += TITLE_PX + 6
    for line in layout.header:
        shapes.append(_Text(12, y + HEADER_LINE_PX / 2, line, colour="#333333"))
        y += HEADER_LINE_PX
    y += 6

    lanes_top = y
    for i, lane in enumerate(layout.lanes):
        labels_h = lane.rows * ROW_PX
        bars_top = y + LANE_PAD_PX + labels_h
        bars_bottom = bars_top + lane.tracks * BAR_PX
        height = bars_bottom + LANE_PAD_PX - y
        back.append(_Rect(0, y, width, height, "#f6f6f6" if i % 2 else "#ffffff"))
        texts: list[_Shape] = [_Text(12, (bars_top + bars_bottom) / 2, lane.title, bold=True)]
        for s in lane.spans:
            fill, ink = COLOURS.get(s.kind, COLOURS["other"])
            top = bars_top + s.track * BAR_PX + 2
            # One pixel short, so that back-to-back units stay two bars.
            box = _Rect(x(s.start), top, max(x(s.end) - x(s.start) - 1, 1.5), BAR_PX - 4, fill,
                        stroke="#555555" if s.open else "none", dashed=s.open, opacity=0.55 if s.open else 1.0, title=s.detail)
            shapes.append(box)
            if s.label:
                texts.append(_Text(box.x + 4, top + (BAR_PX - 4) / 2, s.label, colour=ink if not s.open else "#1a1a1a",
                                   size=LABEL_PX, title=s.detail))
        for tick in lane.ticks:
            colour = COLOURS.get(tick.kind, COLOURS["other"])[0]
            row_y = bars_top - tick.row * ROW_PX - ROW_PX / 2
            tx = x(tick.t)
            shapes.append(_Line(tx, bars_bottom - 2, tx, bars_top + 2, colour, width=2.5, title=tick.detail))
            if tick.label:
                shapes.append(_Line(tx, bars_top + 2, tx, row_y - ROW_PX / 2 + 3, colour, width=1.0, title=tick.detail))
                texts.append(_Text(tx - 3 if tick.left else tx + 3, row_y, tick.label, colour="#1a1a1a", size=LABEL_PX,
                                   anchor="end" if tick.left else "start", title=tick.detail))
        shapes += texts
        y += height
    lanes_bottom = y

    step = _axis_step(layout.t_end, plot_w)
    ticks = [k * step for k in range(int(layout.t_end / step + 1e-9) + 1)]
    for t in ticks:
        back.append(_Line(x(t), lanes_top, x(t), lanes_bottom, "#dddddd"))
    for marker in layout.markers:
        colour = COLOURS.get(marker.kind, COLOURS["other"])[0]
        shapes.append(_Line(x(marker.t), lanes_top, x(marker.t), lanes_bottom, colour, width=2.0, title=marker.detail))
        shapes.append(_Text(x(marker.t) - 4, lanes_top + 8, marker.label, colour=colour, size=LABEL_PX, anchor="end",
                            bold=True, title=marker.detail))

    y = lanes_bottom + 8
    guides: set[float] = set()
    for b in layout.brackets:
        by = y + b.row * BRACKET_ROW_PX + BRACKET_ROW_PX / 2
        x0, x1 = x(b.start), x(b.end)
        for gx in (x0, x1):
            if gx not in guides:
                guides.add(gx)
                back.append(_Line(gx, lanes_top, gx, by, "#9a9a9a", dashed=True))
        shapes += [
            _Line(x0, by, x1, by, "#222222", width=1.5, title=b.label),
            _Line(x0, by - 5, x0, by + 5, "#222222", width=1.5),
            _Line(x1, by - 5, x1, by + 5, "#222222", width=1.5),
        ]
        room_right = width - RIGHT_PX - x1
        right = room_right >= len(b.label) * CHAR_PX * 1.25 + 8  # bold and a size up
        shapes.append(_Text(x1 + 6 if right else x0 - 6, by, b.label, anchor="start" if right else "end", bold=True, title=b.label))
    y += len(layout.brackets) * BRACKET_ROW_PX + (8 if layout.brackets else 0)

    shapes.append(_Line(LEFT_PX, y, width - RIGHT_PX, y, "#333333"))
    for t in ticks:
        shapes.append(_Line(x(t), y, x(t), y + 5, "#333333"))
        shapes.append(_Text(x(t), y + 14, f"{t:g}", size=LABEL_PX, anchor="middle"))
    shapes.append(_Text(LEFT_PX + plot_w / 2, y + 31, layout.axis, size=LABEL_PX, anchor="middle", colour="#555555"))
    height = int(math.ceil(y + AXIS_PX - 10))
    return height, back + shapes


def _axis_step(t_end: float, plot_w: float) -> float:
    """The finest round step that leaves room for each number (about 45 px)."""
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300):
        if plot_w / (t_end / step) >= 45:
            return step
    return 600.0


# -- renderers --------------------------------------------------------------------------------


def render_png(timeline: dict[str, Any], path: Path, title: str) -> None:
    """Draw the turn as a PNG, ``WIDTH_PX`` wide and as tall as its lanes need (about 600 px)."""
    # Imported here: the layout and the HTML need no matplotlib. A figure on its own Agg
    # canvas leaves the process-wide backend alone.
    from matplotlib import font_manager
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    layout = build_layout(timeline, title)
    height, shapes = _scene(layout)
    dpi = 100
    fig = Figure(figsize=(layout.width_px / dpi, height / dpi), dpi=dpi, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, layout.width_px)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    pt = 72 / dpi  # matplotlib sizes text in points, the scene in pixels
    # Korean transcripts need a Hangul font behind DejaVu Sans; use one if installed.
    installed = {f.name for f in font_manager.fontManager.ttflist}
    family = ["DejaVu Sans", *(f for f in _FALLBACK_FONTS if f in installed)]
    # The scene is back to front; matplotlib would otherwise put every line above every box.
    for z, s in enumerate(shapes):
        if isinstance(s, _Rect):
            ax.add_patch(Rectangle((s.x, s.y), s.w, s.h, facecolor=s.fill, alpha=s.opacity, linewidth=0 if s.stroke == "none" else 1,
                                   edgecolor=None if s.stroke == "none" else s.stroke, linestyle="--" if s.dashed else "-", zorder=z))
        elif isinstance(s, _Line):
            ax.plot([s.x1, s.x2], [s.y1, s.y2], color=s.colour, linewidth=s.width * pt, linestyle=(0, (4, 3)) if s.dashed else "-",
                    solid_capstyle="butt", zorder=z)
        else:
            ax.text(s.x, s.y, s.text, color=s.colour, fontsize=s.size * pt, ha={"start": "left", "middle": "center", "end": "right"}[s.anchor],
                    va="center", fontweight="bold" if s.bold else "normal", family=family, parse_math=False, zorder=z)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, facecolor="white")
    log.info("wrote %s (%d×%d px)", path, layout.width_px, height)


def render_html(timeline: dict[str, Any], path: Path, title: str) -> None:
    """Write one self-contained HTML file: inline SVG and CSS, hover a bar or label for its detail."""
    layout = build_layout(timeline, title)
    height, shapes = _scene(layout)
    body = "\n".join(_svg(s) for s in shapes)
    page = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
  body {{ margin: 16px; background: #ffffff; font-family: "DejaVu Sans", Verdana, sans-serif; }}
  svg {{ display: block; }}
  svg text {{ font-family: "DejaVu Sans", Verdana, sans-serif; dominant-baseline: central; }}
  svg rect[data-hover]:hover {{ stroke: #000000; stroke-width: 2; }}
  svg line[data-hover]:hover {{ stroke-width: 4; }}
</style>
</head>
<body>
<svg xmlns="http://www.w3.org/2000/svg" width="{layout.width_px}" height="{height}" viewBox="0 0 {layout.width_px} {height}">
{body}
</svg>
</body>
</html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    log.info("wrote %s", path)


SVG_FONTS = '"DejaVu Sans", "Noto Sans CJK KR", "Noto Sans KR", "NanumGothic", "Apple SD Gothic Neo", Verdana, sans-serif'
"""The chart's fonts, with Korean ones behind the Latin one so a Korean transcript is legible."""


def render_svg(timeline: dict[str, Any], title: str) -> str:
    """The chart as one standalone SVG document (the companion page shows it as an image)."""
    layout = build_layout(timeline, title)
    height, shapes = _scene(layout)
    body = "\n".join(_svg(s) for s in shapes)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{layout.width_px}" height="{height}" '
        f'viewBox="0 0 {layout.width_px} {height}">\n'
        f"<style>text {{ font-family: {SVG_FONTS}; dominant-baseline: central; }}</style>\n"
        f'<rect x="0" y="0" width="{layout.width_px}" height="{height}" fill="#ffffff"/>\n'
        f"{body}\n</svg>\n"
    )


def _svg(s: _Shape) -> str:
    def num(v: float) -> str:
        return f"{v:.1f}".rstrip("0").rstrip(".")

    tip = f"<title>{html.escape(s.title)}</title>" if s.title else ""
    hover = ' data-hover=""' if s.title else ""
    if isinstance(s, _Rect):
        stroke = f' stroke="{s.stroke}"' + (' stroke-dasharray="4 3"' if s.dashed else "") if s.stroke != "none" else ""
        opacity = f' fill-opacity="{s.opacity:g}"' if s.opacity < 1 else ""
        return f'<rect x="{num(s.x)}" y="{num(s.y)}" width="{num(s.w)}" height="{num(s.h)}" fill="{s.fill}"{stroke}{opacity}{hover}>{tip}</rect>'
    if isinstance(s, _Line):
        dash = ' stroke-dasharray="4 3"' if s.dashed else ""
        return (f'<line x1="{num(s.x1)}" y1="{num(s.y1)}" x2="{num(s.x2)}" y2="{num(s.y2)}" stroke="{s.colour}" '
                f'stroke-width="{s.width:g}"{dash}{hover}>{tip}</line>')
    weight = ' font-weight="bold"' if s.bold else ""
    return (f'<text x="{num(s.x)}" y="{num(s.y)}" font-size="{s.size:g}" fill="{s.colour}" text-anchor="{s.anchor}"{weight}>'
            f"{tip}{html.escape(s.text)}</text>")


# -- command line -----------------------------------------------------------------------------


def load_turn(path: Path, turn: int | None = None) -> tuple[dict[str, Any], str]:
    """A timeline and a title from a timeline file, or from one turn of a latency-benchmark report."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if "turns" in data:
        turns = data["turns"]
        index = turn or 0
        if not 0 <= index < len(turns):
            raise SystemExit(f"{path} has {len(turns)} turns; --turn {index} is not one of them")
        row = turns[index]
        return row, f"{path.name}: turn {index} ({row.get('id', '?')}, round {row.get('round', '?')})"
    return data, path.name


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("timeline", type=Path, help="a Timeline.to_dict() JSON file, or a latency-benchmark report")
    parser.add_argument("--png", type=Path)
    parser.add_argument("--html", type=Path)
    parser.add_argument("--turn", type=int, help="which turn of a benchmark report (default: the first)")
    parser.add_argument("--title", help="default: the file's name")
    args = parser.parse_args(None if argv is None else list(argv))
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    timeline, title = load_turn(args.timeline, args.turn)
    title = args.title or title
    if args.png is None and args.html is None:  # nothing asked for: draw both beside the input
        args.png, args.html = args.timeline.with_suffix(".png"), args.timeline.with_suffix(".html")
    if args.png is not None:
        render_png(timeline, args.png, title)
    if args.html is not None:
        render_html(timeline, args.html, title)


if __name__ == "__main__":
    main()
