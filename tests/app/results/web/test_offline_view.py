"""The Offline views (issue 49, item 2): each system ranked by its Offline throughput,
elected points marked; the ceiling shown, hidden or over lightened curves."""

from __future__ import annotations

import html
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.refusals import refused_alike

LLAMA = {"benchmark": "llama3_1-8b", "limit": "all"}


def results(client: TestClient, **params: str) -> dict[str, Any]:
    response = client.get("/api/v1/results", params={**LLAMA, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize(("normalize", "figure"), [("system", "system_tps"), ("kw", "y")])
def test_each_system_is_ranked_by_its_best_offline_point(
    client: TestClient, normalize: str, figure: str
) -> None:
    body = results(client, view="offline", normalize=normalize)
    rows = body["offline"]
    assert body["view"] == "offline" and rows, "the demo has Offline results"
    assert [r["throughput"] for r in rows] == sorted((r["throughput"] for r in rows), reverse=True)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    curves = {c["id"]: c for c in body["curves"]}
    offline_curves = {
        c["id"] for c in body["curves"] if any(p["offline"] != "none" for p in c["points"])
    }
    assert {r["curve"] for r in rows} == offline_curves  # every one, and only those
    for row in rows:
        points = [p for p in curves[row["curve"]]["points"] if p["offline"] != "none"]
        best = max(points, key=lambda p: p[figure])
        assert row["throughput"] == pytest.approx(best[figure], abs=1e-3)
        assert (row["point"], row["elected"]) == (best["dir"], best["offline"] == "elected")
        assert row["availability"] in ("Available", "Preview") and row["result_name"]
    assert any(r["elected"] for r in rows) and not all(r["elected"] for r in rows)
    # The Pareto view's answer carries no Offline list.
    assert results(client)["offline"] is None


def test_the_offline_page_draws_the_bars_without_script(client: TestClient) -> None:
    page = client.get("/results", params={**LLAMA, "view": "offline"})
    assert page.status_code == 200
    rows = results(client, view="offline")["offline"]
    text = page.text
    assert 'id="offline-bars"' in text and 'id="chart-pareto"' not in text
    assert text.count('<li data-curve="') == len(rows)
    first = text.index(f'data-curve="{rows[0]["curve"]}"')
    assert all(text.index(f'data-curve="{r["curve"]}"') >= first for r in rows)
    assert "★ elected" in text
    # Each system links to its curve in the Pareto view of the same query.
    assert f"curve={rows[0]['curve']}" in html.unescape(text)


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"view": "bars"}, "view", "view must be one of pareto, offline, not 'bars'"),
        ({"offline_ceiling": "dim"}, "offline_ceiling", "offline_ceiling must be one of show"),
        (
            {"view": "offline", "rank_by": "goodput", "ttft_p90_max_ms": "500"},
            "view",
            "the Offline view ranks Offline throughput, which no SLA limits",
        ),
    ],
)
def test_an_offline_choice_that_cannot_be_drawn_is_refused(
    client: TestClient, params: dict[str, str], field: str, message: str
) -> None:
    refused_alike(client, "/api/v1/results", "/results", {**LLAMA, **params}, field, message)


def test_the_ceiling_choice_travels_with_the_answer(client: TestClient) -> None:
    assert results(client)["offline_ceiling"] == "show"
    for choice in ("off", "lighten"):
        body = results(client, offline_ceiling=choice)
        assert body["offline_ceiling"] == choice
        # The curves keep their ceilings: the choice is how the chart draws them.
        assert any(c["offline_ceiling"] for c in body["curves"])
    shown = client.get("/results", params=LLAMA).text
    hidden = client.get("/results", params={**LLAMA, "offline_ceiling": "off"}).text
    dotted = 'stroke-width="1.5" stroke-dasharray'
    assert shown.count(dotted) > 0 and hidden.count(dotted) == 0  # the first view (SVG)
