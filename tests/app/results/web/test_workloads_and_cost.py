"""The buyer's workload and price on /api/v1/results and the page, on the demo data."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.results.domain.workloads import workloads


def results(client: TestClient, **params: str | int | float | list[str]) -> dict[str, Any]:
    response = client.get("/api/v1/results", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_workload_selects_its_regions_and_suggests_its_sla(client: TestClient) -> None:
    body = results(client, benchmark="llama3_1-8b", workload="interactive")
    interactive = workloads()["interactive"]
    assert body["workload"]["id"] == "interactive"
    assert body["workload"]["regions_clause"].startswith("R §5.4")
    assert body["sla"]["regions"] == list(interactive.regions)
    assert body["sla"]["ttft_p90_max_ms"] == interactive.ttft_p90_max_ms
    assert body["sla"]["tps_per_user_min"] == interactive.tps_per_user_min
    assert body["sla"]["suggested"] == ["ttft_p90_max_ms", "tps_per_user_min"]
    points = [p for c in body["curves"] for p in c["points"]]
    assert any(p["admissible"] for p in points)
    for p in points:
        if p["admissible"]:
            assert p["region"] in interactive.regions
            assert p["ttft_p90_ms"] <= interactive.ttft_p90_max_ms
    for row in body["ranking"]:
        assert row["region"] in interactive.regions


def test_the_buyer_overrides_every_suggestion(client: TestClient) -> None:
    own = results(client, benchmark="llama3_1-8b", workload="interactive", ttft_p90_max_ms="900")
    assert own["sla"]["ttft_p90_max_ms"] == 900 and own["sla"]["suggested"] == ["tps_per_user_min"]
    # Present but empty: the buyer removed the limit.
    none = results(
        client, benchmark="llama3_1-8b", workload="interactive", ttft_p90_max_ms="",
        tps_per_user_min="", region="any",
    )  # fmt: skip
    assert none["sla"]["ttft_p90_max_ms"] is None and none["sla"]["tps_per_user_min"] is None
    assert none["sla"]["regions"] == [] and none["sla"]["suggested"] == []
    one = results(client, benchmark="llama3_1-8b", workload="batch", region="high_concurrency")
    assert one["sla"]["regions"] == ["high_concurrency"]


def test_the_batch_workload_ranks_throughput_where_latency_hardly_matters(
    client: TestClient,
) -> None:
    batch = results(client, benchmark="llama3_1-8b", workload="batch")
    assert batch["sla"]["ttft_p90_max_ms"] is None and batch["sla"]["suggested"] == []
    assert {r["region"] for r in batch["ranking"]} <= {"med_concurrency", "high_concurrency"}
    anywhere = results(client, benchmark="llama3_1-8b")
    # Restricting the regions never finds more throughput than the whole curve.
    best = {r["system"]: r["throughput"] for r in anywhere["ranking"]}
    for row in batch["ranking"]:
        assert row["throughput"] <= best[row["system"]]


def test_the_agentic_workload_opens_an_agentic_benchmark(client: TestClient) -> None:
    body = results(client, workload="agentic")
    assert body["benchmark"] == "kimi-k3"
    assert all(c["is_agentic"] for c in body["curves"])


def test_an_unknown_workload_is_refused_with_its_field(client: TestClient) -> None:
    response = client.get("/api/v1/results", params={"workload": "chatbot"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == "workload" and "interactive, batch, agentic" in error["message"]


def test_cost_at_the_buyers_price_ranks_the_cheapest_first(client: TestClient) -> None:
    body = results(
        client, benchmark="llama3_1-8b", normalize="usd_per_mtok", price_per_accelerator_hour="3"
    )
    assert body["derived"] is True and body["derived_label"] == "derived, not an MLPerf figure"
    assert body["price"] == {
        "price_per_accelerator_hour": 3.0,
        "price_per_system_hour": None,
        "preset": None,
    }
    for curve in body["curves"]:
        hourly = 3.0 * curve["accelerator_count"]
        for p in curve["points"]:
            expected = hourly / (p["system_tps"] * 3600 / 1e6)
            assert p["usd_per_million_tokens"] == pytest.approx(expected, abs=1e-3)
    costs = [r["usd_per_million_tokens"] for r in body["ranking"]]
    assert costs and costs == sorted(costs)  # the lowest cost first
    # The best point of each curve is its cheapest admissible one.
    for curve in body["curves"]:
        cheapest = min(curve["points"], key=lambda p: p["usd_per_million_tokens"])
        if curve["best"] is not None:
            assert curve["best"] == cheapest["dir"] or cheapest["offline"] == "dedicated"


def test_a_system_price_is_per_system_and_both_prices_are_refused(client: TestClient) -> None:
    body = results(client, benchmark="llama3_1-8b", normalize="usd_per_mtok",
                   price_per_system_hour="20")  # fmt: skip
    point = body["curves"][0]["points"][0]
    assert point["usd_per_million_tokens"] == pytest.approx(
        20 / (point["system_tps"] * 3600 / 1e6), abs=1e-3
    )
    for params, field in (
        ({"normalize": "usd_per_mtok"}, "normalize"),
        (
            {"price_per_system_hour": "1", "price_per_accelerator_hour": "1"},
            "price_per_system_hour",
        ),
        ({"price_per_accelerator_hour": "0"}, "price_per_accelerator_hour"),
    ):
        response = client.get("/api/v1/results", params=params)
        assert response.status_code == 422 and response.json()["error"]["field"] == field


def test_the_cost_export_carries_the_price_and_the_derived_label(client: TestClient) -> None:
    params = {"benchmark": "llama3_1-8b", "normalize": "usd_per_mtok", "workload": "interactive",
              "price_per_accelerator_hour": "3", "format": "csv"}  # fmt: skip
    response = client.get("/api/v1/results", params=params)
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert rows and all(r["derived"] == "derived, not an MLPerf figure" for r in rows)
    assert all(r["price_per_accelerator_hour"] == "3.0" and r["workload"] == "interactive"
               for r in rows)  # fmt: skip
    assert all(float(r["usd_per_million_tokens"]) > 0 for r in rows)
    name = response.headers["content-disposition"]
    assert (
        "usd_per_mtok" in name and "interactive" in name and "price_per_accelerator_hour-3" in name
    )


def test_the_page_states_the_workload_and_the_derived_cost(client: TestClient) -> None:
    page = client.get(
        "/results",
        params={"workload": "interactive", "normalize": "usd_per_mtok",
                "price_per_accelerator_hour": "3"},
    )  # fmt: skip
    assert page.status_code == 200
    assert 'id="workload-note"' in page.text and "R §5.4" in page.text
    assert "not a rule" in page.text
    assert 'id="derived-cost"' in page.text and "derived, not an MLPerf figure" in page.text
    assert 'name="ttft_p90_max_ms" id="f-ttft" value="300"' in page.text
    assert "$/M tokens (derived)" in page.text


def test_ranking_by_goodput_without_events_says_why_nothing_is_ranked(client: TestClient) -> None:
    # The demo's events are on the concurrency-8 points; batch looks at Medium and High.
    params = {"workload": "batch", "rank_by": "goodput", "ttft_p90_max_ms": "2000"}
    page = client.get("/results", params=params)
    assert page.status_code == 200
    assert 'id="no-goodput"' not in page.text  # some point of the view has events …
    assert "no point in this view's regions and concurrency has re-counted events" in page.text
    assert "No point with re-counted events in this view" in page.text
    assert "No system has a point that meets this SLA" not in page.text  # … not the SLA
    every = ["Available", "Preview", "RDI"]
    ranked = client.get("/results", params={"workload": "interactive", "rank_by": "goodput",
                                            "availability": every})  # fmt: skip
    assert "Nothing to rank" not in ranked.text
    assert ranked.text.count('class="num attainment') == 5


def test_the_demo_ranks_by_goodput_from_its_re_counted_events(client: TestClient) -> None:
    """Every demo curve has one point with events; a tight SLA orders systems by the
    requests that met it, not by their throughput."""
    body = results(
        client,
        benchmark="llama3_1-8b",
        workload="interactive",
        rank_by="goodput",
        tps_per_user_min=200,
        availability=["Available", "Preview", "RDI"],
    )
    ranking = body["ranking"]
    assert len(ranking) == 5  # the demo's five llama systems, its RDI one asked for
    assert {row["point"] for row in ranking} == {"r8"}
    goodputs = [row["goodput_tps"] for row in ranking]
    assert goodputs == sorted(goodputs, reverse=True)
    for row in ranking:
        assert 0 <= row["slo_attainment"] <= 1
        assert row["goodput_tps"] <= row["system_tps"] + 1e-6
    shares = [row["slo_attainment"] for row in ranking]
    assert shares[0] > 0.9 and min(shares) < 0.5  # the SLA separates the systems
    assert any(0 < share < 1 for share in shares)
    loose = results(client, benchmark="llama3_1-8b", workload="interactive", rank_by="goodput")
    assert all(row["slo_attainment"] == 1 for row in loose["ranking"])


def test_a_cost_beside_measured_throughput_is_marked_derived(client: TestClient) -> None:
    # normalize=system keeps the throughput measured, yet the price fills a cost column:
    # the view says a derived figure is in it, in the body and in every exported row.
    body = results(client, benchmark="llama3_1-8b", price_per_system_hour="20")
    assert body["normalize"] == "system"
    assert any(p["usd_per_million_tokens"] for c in body["curves"] for p in c["points"])
    assert body["derived"] is True and body["derived_label"] == "derived, not an MLPerf figure"
    params = {"benchmark": "llama3_1-8b", "price_per_system_hour": "20", "format": "csv"}
    rows = list(csv.DictReader(io.StringIO(client.get("/api/v1/results", params=params).text)))
    assert rows and all(r["derived"] == "derived, not an MLPerf figure" for r in rows)
    page = client.get("/results", params={k: v for k, v in params.items() if k != "format"})
    assert 'id="derived-cost"' in page.text and "derived, not an MLPerf figure" in page.text
