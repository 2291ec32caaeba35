"""A view with more curves than a chart can show apart: the best-ranked ones drawn, the
rest listed (`more`) and drawn on demand (`curve=`), every one in the exports."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient

LLAMA = {"benchmark": "llama3_1-8b"}
SLA = {"ttft_p90_max_ms": "400", "tps_per_user_min": "20"}


def results(client: TestClient, params: Any) -> dict[str, Any]:
    response = client.get("/api/v1/results", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_chart_draws_the_best_ranked_and_lists_the_rest_by_rank(client: TestClient) -> None:
    every = results(client, {**LLAMA, **SLA})
    assert every["limit"] == 10 and every["more"] == []  # a small view is drawn whole
    order = [row["curve"] for row in every["ranking"]]
    assert len(order) >= 3
    two = results(client, {**LLAMA, **SLA, "limit": "2"})
    assert two["curves_total"] == every["curves_total"] and two["limit"] == 2
    drawn = {c["id"] for c in two["curves"]}
    assert drawn == set(order[:2])
    assert [r["curve"] for r in two["ranking"]] == order[:2]
    # The others, by rank, with what the ranking would have said of them.
    assert [m["curve"] for m in two["more"]] == order[2:]
    assert [m["rank"] for m in two["more"]] == list(range(3, len(order) + 1))
    assert two["more_total"] == len(order) - 2 and two["more_from"] == 1
    # The list pages on by rank.
    later = results(client, {**LLAMA, **SLA, "limit": "2", "more_from": "4"})
    assert [m["curve"] for m in later["more"]] == order[3:] and later["more_total"] == len(
        order
    ) - 2
    full = {row["curve"]: row for row in every["ranking"]}
    for m in two["more"]:
        assert m["throughput"] == full[m["curve"]]["throughput"]
        assert m["point"] == full[m["curve"]]["point"]
        assert m["concurrency"] == full[m["curve"]]["concurrency"]
    # Systems with no admissible point say whether they are drawn.
    unranked = {u["curve"]: u["on_chart"] for u in two["no_admissible_point"]}
    assert all(on == (curve in drawn) for curve, on in unranked.items())


def test_a_listed_curve_is_drawn_when_pinned_and_keeps_its_rank(client: TestClient) -> None:
    order = [row["curve"] for row in results(client, {**LLAMA, **SLA})["ranking"]]
    last = order[-1]
    pinned = results(client, [*LLAMA.items(), *SLA.items(), ("limit", "1"), ("curve", str(last))])
    assert {c["id"] for c in pinned["curves"]} == {order[0], last}
    assert pinned["pinned"] == [last]
    assert [r["rank"] for r in pinned["ranking"]] == [1, len(order)]
    assert last not in [m["curve"] for m in pinned["more"]]
    # An id that is not in the view draws nothing more (and is not echoed).
    stray = results(client, [*LLAMA.items(), ("limit", "1"), ("curve", "999999")])
    assert stray["pinned"] == [] and len(stray["curves"]) == 1


def test_limit_all_and_the_exports_hold_every_system(client: TestClient) -> None:
    order = [row["curve"] for row in results(client, {**LLAMA, **SLA})["ranking"]]
    assert len(results(client, {**LLAMA, **SLA, "limit": "all"})["ranking"]) == len(order)
    exported = client.get("/api/v1/results", params={**LLAMA, **SLA, "limit": "1", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [int(r["rank"]) for r in rows] == list(range(1, len(order) + 1))
    points = client.get(
        "/api/v1/results",
        params={**LLAMA, **SLA, "limit": "1", "format": "csv", "export": "points"},
    )
    everything = results(client, {**LLAMA, **SLA, "limit": "all"})
    assert len(list(csv.DictReader(io.StringIO(points.text)))) == sum(
        len(c["points"]) for c in everything["curves"]
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": "0"}, "limit=0 draws only the results picked with curve=: pick at least one"),
        ({"limit": "-1"}, "limit must be a whole number from 1"),
        ({"limit": "501"}, "limit must be at most 500"),
        ({"limit": "some"}, "limit must be a whole number"),
        ({"curve": "r64"}, "curve must be a curve id"),
        ({"limit": "²"}, "limit must be a whole number"),
        ({"curve": "9" * 5000}, "curve must be a curve id"),
    ],
)
def test_bad_limits_are_refused_with_the_parameter_named(
    client: TestClient, params: dict[str, str], message: str
) -> None:
    response = client.get("/api/v1/results", params={**LLAMA, **params})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == next(iter(params)) and message in error["message"]


def test_the_page_lists_the_rest_and_adds_one_to_the_chart(client: TestClient) -> None:
    page = client.get("/results", params={**LLAMA, **SLA, "limit": "2"})
    assert page.status_code == 200
    listed = re.search(r'<ol class="more" id="more-list">(.*?)</ol>', page.text, re.S)
    assert listed is not None
    links = re.findall(r'<a href="([^"]+)" class="add-curve">', listed.group(1))
    assert links, "every listed system can be added to the chart"
    added = client.get("/results" + unescape(links[0]))  # relative to the page
    assert added.status_code == 200, added.text[-2000:]
    assert 'id="query-error"' not in added.text, unescape(links[0])
    data = re.search(
        r'<script type="application/json" id="results-data">(.*?)</script>', added.text, re.S
    )
    assert data is not None
    body = json.loads(data.group(1))
    assert len(body["curves"]) == 3 and len(body["pinned"]) == 1
    assert 'id="draw-more"' in page.text


def test_systems_with_no_admissible_point_are_listed_a_page_and_counted_in_all(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A strict SLA over a large record leaves thousands without a point: the answer and
    the page list the first by name and say how many there are, the table has them all;
    the capacity plan the same."""
    strict = {**LLAMA, "tps_per_user_min": "100000"}
    every = results(client, strict)
    names = [u["system"] for u in every["no_admissible_point"]]
    assert every["ranking"] == [] and len(names) >= 3
    assert every["no_admissible_total"] == len(names) == every["curves_total"]
    monkeypatch.setattr("app.results.services.results.LISTED", 2)
    listed = results(client, strict)
    assert [u["system"] for u in listed["no_admissible_point"]] == names[:2]
    assert listed["no_admissible_total"] == len(names)
    page = client.get("/results", params=strict).text
    more = re.search(r'<p[^>]*id="no-admissible-more">(.*?)</p>', page, re.S)
    assert more is not None and f"and {len(names) - 2} more" in more.group(1)
    assert 'href="/reports?benchmark=llama3_1-8b&amp;tps_per_user_min=100000"' in more.group(1)
    plan = client.get("/api/v1/plan", params={**strict, "users": "100"}).json()
    assert len(plan["no_admissible_point"]) == 2
    assert plan["no_admissible_total"] == len(names)
