"""A chart's first view, drawn on the server as inline SVG.

The pages with a chart send it in their HTML, so that a phone on a slow network shows the
curves as soon as the page arrives; Plotly (deferred) replaces the picture with the
interactive chart when its script has come. The picture is drawn from the same answer the
script draws from, so the two show the same lines: linear axes from zero, each curve in
its system's colour and its status's dash, its points as markers, a legend beneath.

Pure: numbers in, markup out (escaped here, since every name comes from a bundle).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from markupsafe import Markup, escape

# Dash patterns as Plotly draws its named dashes (in units of the line width, 2 px).
DASHES = {"solid": "", "dash": "9,9", "dot": "3,3", "dashdot": "9,5,3,5"}


@dataclass(frozen=True)
class Series:
    """One curve: a step line, and its measured points as markers."""

    name: str
    colour: str
    line: Sequence[Sequence[float]]
    points: Sequence[tuple[float, float]] = ()
    dash: str = "solid"
    symbol: str = "circle"  # or "diamond"
    opacity: float = 1.0
    ceiling: float | None = None  # a dedicated Offline run's throughput, drawn across


@dataclass(frozen=True)
class Frame:
    """A picture's size and the room around its plot area, in its own units: the page
    shows the wide frame on a screen and the narrow one on a phone, each scaled to the
    chart's box, so that its text stays legible at either width."""

    width: float
    height: float
    left: float
    right: float = 16.0
    top: float = 40.0
    bottom: float = 58.0
    font: float = 12.0
    name: str = "wide"


WIDE = Frame(width=1000, height=560, left=78)
NARROW = Frame(width=380, height=480, left=52, right=8, font=11, name="narrow")


@dataclass(frozen=True)
class FirstView:
    title: str
    x_title: str
    y_title: str
    series: Sequence[Series]
    # Entries for the legend alone (the RDI style, say): (label, dash, symbol).
    keys: Sequence[tuple[str, str, str]] = field(default_factory=tuple)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Ticks from 0 at a round step (1, 2 or 5 times a power of ten) up to at least *top*."""
    if not math.isfinite(top) or top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    ticks = [0.0]
    while ticks[-1] < top * (1 - 1e-9):
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def tick_label(value: float) -> str:
    if value >= 1000 and value == int(value):
        return f"{int(value):,}"
    return f"{value:g}"


def _finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _pairs(values: Iterable[Sequence[float]]) -> list[tuple[float, float]]:
    """The (x, y) pairs of *values* with both figures finite: what a chart can place."""
    return [
        (float(v[0]), float(v[1]))
        for v in values
        if len(v) >= 2 and v[0] is not None and v[1] is not None
        if math.isfinite(v[0]) and math.isfinite(v[1])
    ]


def _drawable(view: FirstView) -> FirstView:
    """*view* with only the lines' and points' places a chart can draw: found once, for
    both frames."""
    series = [replace(s, line=_pairs(s.line), points=_pairs(s.points)) for s in view.series]
    return replace(view, series=series)


def _marker(symbol: str, x: float, y: float, colour: str) -> str:
    """A point's marker; *colour* already escaped."""
    if symbol == "diamond":
        r = 5.0
        shape = f"M{x:.1f},{y - r:.1f}L{x + r:.1f},{y:.1f}L{x:.1f},{y + r:.1f}L{x - r:.1f},{y:.1f}Z"
        return f'<path d="{shape}" fill="{colour}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'


def _legend_entry(
    x: float, y: float, row: float, lines: Sequence[str], colour: str, dash: str, symbol: str
) -> str:
    pattern = DASHES.get(dash, "")
    text = "".join(
        f'<text x="34" y="{4 + row * n:g}">{escape(line)}</text>' for n, line in enumerate(lines)
    )
    return (
        f'<g transform="translate({x:.0f},{y:.1f})">'
        f'<line x1="0" y1="0" x2="26" y2="0" stroke="{escape(colour)}" stroke-width="2"'
        + (f' stroke-dasharray="{pattern}"' if pattern else "")
        + f"/>{_marker(symbol, 13, 0, escape(colour))}{text}</g>"
    )


def _lines(name: str, frame: Frame) -> list[str]:
    """A legend name on a phone breaks before its parenthesis, as Plotly's does."""
    if frame is WIDE or " (" not in name:
        return [name]
    head, rest = name.split(" (", 1)
    return [head, "(" + rest]


def render(view: FirstView) -> Markup:
    """The chart as two inline <svg> pictures, one for a screen and one for a phone
    (app.css shows the one that fits)."""
    drawable = _drawable(view)
    return Markup("").join(_draw(drawable, frame) for frame in (WIDE, NARROW))


def draw(view: FirstView, frame: Frame) -> Markup:
    """The chart in one *frame*."""
    return _draw(_drawable(view), frame)


def _draw(view: FirstView, frame: Frame) -> Markup:
    xs = [v[0] for s in view.series for v in [*s.line, *s.points]]
    ys = [v[1] for s in view.series for v in [*s.line, *s.points]]
    ys += _finite(s.ceiling for s in view.series)
    x_ticks = nice_ticks(max(xs, default=1.0), 5 if frame is WIDE else 3)
    y_ticks = nice_ticks(max(ys, default=1.0))
    x_top, y_top = x_ticks[-1], y_ticks[-1]
    legend = [(_lines(s.name, frame), s.colour, s.dash, s.symbol) for s in view.series]
    legend += [(_lines(key, frame), "#555", dash, symbol) for key, dash, symbol in view.keys]
    row = frame.font * 1.5
    rows = sum(len(entry[0]) for entry in legend)
    left, top = frame.left, frame.top
    plot_w = frame.width - left - frame.right
    plot_h = frame.height - top - frame.bottom - row * rows

    def px(x: float) -> float:
        return left + plot_w * x / x_top

    def py(y: float) -> float:
        return top + plot_h * (1 - y / y_top)

    out = [
        f'<svg class="first-view {frame.name}-view" xmlns="http://www.w3.org/2000/svg" '
        f'role="img" viewBox="0 0 {frame.width:.0f} {frame.height:.0f}" width="100%" '
        f'height="100%" font-family="sans-serif" font-size="{frame.font:g}" fill="currentColor">',
        f"<title>{escape(view.title)}</title>",
        f'<text x="{frame.width / 2:.0f}" y="22" text-anchor="middle" '
        f'font-size="{frame.font * 1.25:g}">{escape(view.title)}</text>',
    ]
    for t in x_ticks:
        x = px(t)
        out.append(
            f'<line x1="{x:.1f}" y1="{top:.0f}" x2="{x:.1f}" y2="{top + plot_h:.1f}" '
            f'class="grid" stroke="#eee"/><text x="{x:.1f}" y="{top + plot_h + 16:.1f}" '
            f'text-anchor="middle">{tick_label(t)}</text>'
        )
    for t in y_ticks:
        y = py(t)
        out.append(
            f'<line x1="{left:.0f}" y1="{y:.1f}" x2="{left + plot_w:.0f}" y2="{y:.1f}" '
            f'class="grid" stroke="#eee"/><text x="{left - 6:.0f}" y="{y + 4:.1f}" '
            f'text-anchor="end">{tick_label(t)}</text>'
        )
    out.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 40:.1f}" '
        f'text-anchor="middle">{escape(view.x_title)}</text>'
        f'<text transform="translate({frame.font + 2:g},{top + plot_h / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{escape(view.y_title)}</text>'
    )
    for s in view.series:
        out.append(_series(s, px, py, left, left + plot_w))
    y = frame.height - row * (rows - 0.5)
    for lines, key_colour, dash, symbol in legend:
        out.append(_legend_entry(min(left, 8), y, row, lines, key_colour, dash, symbol))
        y += row * len(lines)
    out.append("</svg>")
    return Markup("".join(out))


def _series(
    s: Series, px: Callable[[float], float], py: Callable[[float], float], left: float, right: float
) -> str:
    """One curve: its step line and markers (in its opacity), and its Offline ceiling."""
    colour = escape(s.colour)
    line = s.line  # finite places only (_drawable)
    pattern = DASHES.get(s.dash, "")
    dashed = f' stroke-dasharray="{pattern}"' if pattern else ""
    group = [f'<g opacity="{s.opacity:g}">']
    if line:
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line)
        group.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dashed}/>'
        )
    group += [_marker(s.symbol, px(x), py(y), colour) for x, y in s.points]
    group.append("</g>")
    # The ceiling outside the series' opacity: "lighten" fades the curves, not it.
    if s.ceiling is not None and math.isfinite(s.ceiling):
        y = py(s.ceiling)
        group.append(
            f'<line x1="{left:.0f}" y1="{y:.1f}" x2="{right:.0f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="1.5" stroke-dasharray="{DASHES["dot"]}"/>'
        )
    return "".join(group)
