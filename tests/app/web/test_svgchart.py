"""The charts' first view, drawn on the server (app/web/svgchart.py)."""

from __future__ import annotations

import re
from xml.etree import ElementTree

from app.web.svgchart import NARROW, WIDE, FirstView, Series, draw, nice_ticks, render

SVG = "{http://www.w3.org/2000/svg}"


def _view(*series: Series, keys: tuple[tuple[str, str, str], ...] = ()) -> FirstView:
    return FirstView(
        title="Pareto", x_title="tok/s per user", y_title="tok/s", series=series, keys=keys
    )


def test_ticks_are_round_and_reach_past_the_largest_value() -> None:
    assert nice_ticks(23_000) == [0, 5000, 10000, 15000, 20000, 25000]
    assert nice_ticks(187) == [0, 50, 100, 150, 200]
    assert nice_ticks(0.73) == [0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(0) == [0, 1] and nice_ticks(float("nan")) == [0, 1]


def test_each_curve_is_a_line_with_its_points_in_its_colour_and_dash() -> None:
    steady = Series(
        "A (Org, verified)",
        "#0072b2",
        [[0, 100], [10, 100], [10, 50], [20, 50]],
        [(10, 100), (20, 50)],
    )
    rdi = Series(
        "B (Org, RDI)", "#d55e00", [[0, 80], [30, 80]], [(30, 80)], dash="dashdot", symbol="diamond"
    )
    svg = ElementTree.fromstring(str(draw(_view(steady, rdi), WIDE)))
    lines = svg.findall(f".//{SVG}polyline")
    assert [line.get("stroke") for line in lines] == ["#0072b2", "#d55e00"]
    assert (
        lines[0].get("stroke-dasharray") is None and lines[1].get("stroke-dasharray") == "9,5,3,5"
    )
    # The axes run to 30 and 100: the first point (10, 100) sits a third across, at the top.
    circle = svg.find(f".//{SVG}circle")
    assert circle is not None
    left, width = WIDE.left, WIDE.width - WIDE.left - WIDE.right
    assert abs(float(circle.get("cx", 0)) - (left + width / 3)) < 0.1
    assert abs(float(circle.get("cy", 0)) - WIDE.top) < 0.1
    # RDI points are diamonds, and the legend names both curves in order.
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts.index("A (Org, verified)") < texts.index("B (Org, RDI)")
    assert len(svg.findall(f".//{SVG}path")) == 2  # the point and its legend sample


def test_names_from_bundles_are_text_never_markup() -> None:
    hostile = Series('<script>alert(1)</script>" onload="x', "#000", [[0, 1], [1, 1]])
    markup = str(render(_view(hostile)))
    assert "<script>" not in markup and 'onload="x' not in markup
    for svg in re.findall(r"<svg.*?</svg>", markup):
        ElementTree.fromstring(svg)  # well formed


def test_the_phone_picture_breaks_legend_names_and_keeps_the_plot_inside() -> None:
    many = [
        Series(f"System {n} (Organisation {n}, provisional)", "#333", [[0, n], [n, n]])
        for n in range(1, 9)
    ]
    svg = ElementTree.fromstring(
        str(draw(_view(*many, keys=(("RDI result", "dashdot", "diamond"),)), NARROW))
    )
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "System 8" in texts and "(Organisation 8, provisional)" in texts
    # The plot area shrinks to leave the legend its rows: no point below the x axis.
    ys = [
        float(v.split(",")[1])
        for line in svg.findall(f".//{SVG}polyline")
        for v in line.get("points", "").split()
    ]
    legend_top = NARROW.height - NARROW.font * 1.5 * 17
    assert max(ys) < legend_top


def test_a_place_without_both_figures_finite_is_left_out_of_both_pictures() -> None:
    """A point without a figure (a dedicated Offline run on the per-user axis, a NaN, an
    infinity) is neither a marker nor a vertex, nor does it stretch the axes."""
    nan, inf = float("nan"), float("inf")
    gappy = Series(
        "A (Org, verified)",
        "#0072b2",
        [[0, 100], [nan, 100], [10, 100], [10, inf], [10, 50]],
        [(10, 100), (nan, 70), (12, inf)],
    )
    markup = str(render(_view(gappy)))
    for svg in (ElementTree.fromstring(s) for s in re.findall(r"<svg.*?</svg>", markup)):
        (line,) = svg.findall(f".//{SVG}polyline")
        assert len((line.get("points") or "").split()) == 3
        assert len(svg.findall(f".//{SVG}circle")) == 2  # the one point and its legend sample
        ticks = [t.text for t in svg.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
        assert ticks[-1] == "100"  # the y axis ends at the largest finite figure
