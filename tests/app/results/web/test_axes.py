"""The chart's axes (`x=`, `y=`): each answer names its axes and their directions, and
every curve's step line is the one step-curve function's for those directions."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.pareto import step_curve
from tests.support.refusals import refused_alike

LLAMA = {"benchmark": "llama3_1-8b", "limit": "all"}


def results(client: TestClient, **params: str) -> dict[str, Any]:
    response = client.get("/api/v1/results", params={**LLAMA, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["curves"], "the demo has llama curves"
    return body


def expected_line(
    curve: dict[str, Any], x: str, y: str, x_higher: bool, y_higher: bool
) -> list[list[float]]:
    plotted = [
        (p[x], p[y])
        for p in curve["points"]
        if p["offline"] != "dedicated" and p.get(x) is not None and p.get(y) is not None
    ]
    line = step_curve(plotted, x_higher, y_higher).line
    return [[round(a, 3), round(b, 3)] for a, b in line]


def test_the_default_axes_are_named_with_their_directions(client: TestClient) -> None:
    body = results(client)
    axes = body["axes"]
    assert (axes["x"]["id"], axes["x"]["field"], axes["x"]["direction"]) == (
        "per_user",
        "tps_per_user",
        "higher",
    )
    assert (axes["y"]["id"], axes["y"]["field"], axes["y"]["direction"]) == (
        "throughput",
        "system_tps",
        "higher",
    )
    assert axes["x"]["title"].endswith("higher is better") and axes["better"] == "↗"
    for curve in body["curves"]:
        assert curve["step_line"] == expected_line(curve, "tps_per_user", "system_tps", True, True)


@pytest.mark.parametrize(
    ("params", "fields", "directions", "better"),
    [
        ({"x": "ttft"}, ("ttft_p90_ms", "system_tps"), ("lower", "higher"), "↖"),
        ({"y": "ttft"}, ("tps_per_user", "ttft_p90_ms"), ("higher", "lower"), "↘"),
        ({"x": "ttft", "y": "per_user"}, ("ttft_p90_ms", "tps_per_user"), ("lower", "higher"), "↖"),
        ({"x": "concurrency"}, ("concurrency", "system_tps"), ("none", "higher"), None),
        ({"y": "concurrency"}, ("tps_per_user", "concurrency"), ("higher", "none"), None),
    ],
)
def test_each_pair_of_axes_steps_by_its_directions(
    client: TestClient,
    params: dict[str, str],
    fields: tuple[str, str],
    directions: tuple[str, str],
    better: str | None,
) -> None:
    body = results(client, **params)
    axes = body["axes"]
    assert (axes["x"]["field"], axes["y"]["field"]) == fields
    assert (axes["x"]["direction"], axes["y"]["direction"]) == directions
    assert axes["better"] == better
    for which, direction in zip(("x", "y"), directions, strict=True):
        if direction == "none":
            assert "better" not in axes[which]["title"]
        else:
            assert axes[which]["title"].endswith(f"{direction} is better")
    # A concurrency axis steps as the official visualiser steps it: as if more were better.
    x_higher, y_higher = (d != "lower" for d in directions)
    for curve in body["curves"]:
        assert curve["step_line"] == expected_line(curve, *fields, x_higher, y_higher)
        if axes["y"]["id"] != "throughput":  # the Offline ceiling is a throughput
            assert curve["offline_ceiling"] is None
    # The ranking is the buyer's question, not the chart's: it does not move with the axes.
    assert [r["system"] for r in body["ranking"]] == [
        r["system"] for r in results(client)["ranking"]
    ]


def test_a_lower_is_better_x_turns_the_steps(client: TestClient) -> None:
    """With TTFT on x the step line ends after its last vertex, rising at each one."""
    body = results(client, x="ttft")
    curve = next(c for c in body["curves"] if len(c["step_line"]) > 3)
    line = curve["step_line"]
    assert line[-1][0] > line[-2][0] and line[-1][1] == line[-2][1]  # the trail-out
    ys = [y for _, y in line]
    assert ys == sorted(ys), "throughput never falls as the TTFT allowed grows"


def test_throughput_on_an_axis_keeps_the_normalisation(client: TestClient) -> None:
    body = results(client, x="ttft", normalize="kw")
    assert body["axes"]["y"]["field"] == "y"
    assert body["axes"]["y"]["title"].startswith("tokens/s per kW (derived)")
    for curve in body["curves"]:
        assert curve["step_line"] == expected_line(curve, "ttft_p90_ms", "y", False, True)


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"x": "throughput"}, "x", "x must be one of per_user, ttft, concurrency, not 'throu"),
        ({"y": "latency"}, "y", "y must be one of throughput, per_user, ttft, concurrency"),
        ({"x": "ttft", "y": "ttft"}, "y", "x and y both show ttft: choose two different axes"),
    ],
)
def test_an_axis_that_cannot_be_drawn_is_refused_with_why(
    client: TestClient, params: dict[str, str], field: str, message: str
) -> None:
    refused_alike(client, "/api/v1/results", "/results", {**LLAMA, **params}, field, message)


def test_the_page_and_the_embed_draw_the_axes_asked_for(client: TestClient) -> None:
    page = client.get("/results", params={**LLAMA, "x": "ttft", "y": "per_user"})
    assert page.status_code == 200
    assert '<option value="ttft" selected>' in page.text.replace("  ", " ")
    # The first view (inline SVG) is titled as the chart Plotly draws over it.
    assert "TTFT P90 (ms) · lower is better" in page.text
    embed = client.get("/embed/results", params={**LLAMA, "x": "concurrency"})
    assert embed.status_code == 200 and "concurrency (users)" in embed.text
