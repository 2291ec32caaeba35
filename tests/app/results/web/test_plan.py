"""The capacity planner's API on the demo's published curves: each row rests on the
explorer's own point that meets the SLA with the highest concurrency."""

from __future__ import annotations

import math

import pytest
from fastapi.testclient import TestClient

SLA = {"benchmark": "llama3_1-8b", "ttft_p90_max_ms": "500", "tps_per_user_min": "30"}


def test_a_buyer_sizes_two_thousand_users_at_their_sla_and_price(client: TestClient) -> None:
    plan = client.get(
        "/api/v1/plan", params={**SLA, "users": "2000", "price_per_accelerator_hour": "2.50"}
    ).json()
    explorer = client.get("/api/v1/results", params={**SLA, "limit": "all"}).json()
    assert plan["users"] == 2000 and plan["ranked_by"] == "usd_per_hour"
    assert plan["derived"] == "derived, not an MLPerf figure" and "linearly" in plan["method"]
    rows = plan["rows"]
    assert len(rows) >= 3
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    costs = [r["usd_per_hour"] for r in rows]
    assert costs == sorted(costs)
    curves = {c["submission"]: c for c in explorer["curves"]}
    for row in rows:
        curve = curves[row["submission"]]
        met = [p for p in curve["points"] if p["admissible"] and p["offline"] != "dedicated"]
        # The explorer's own admissible point with the most users, never one past the SLA.
        assert row["concurrency"] == max(p["concurrency"] for p in met)
        point = next(p for p in met if p["dir"] == row["point"])
        assert point["ttft_p90_ms"] <= 500 and point["tps_per_user"] >= 30
        assert row["systems_needed"] == math.ceil(2000 / row["concurrency"])
        assert row["accelerators"] == row["systems_needed"] * curve["accelerator_count"]
        assert row["usd_per_hour"] == pytest.approx(row["accelerators"] * 2.5)
        expected_kw = row["systems_needed"] * curve["provisioned_power_kw"]
        assert row["provisioned_kw"] == pytest.approx(expected_kw, abs=1e-3)
        assert row["link"] == f"/submissions/{row['submission']}"
    # A curve with no point meeting the SLA is named, not sized.
    sized = {r["submission"] for r in rows}
    unmet = {u["curve"] for u in plan["no_admissible_point"]}
    assert sized.isdisjoint({c["submission"] for c in explorer["curves"] if c["id"] in unmet})


def test_without_a_price_the_fewest_accelerators_rank_first(client: TestClient) -> None:
    rows = client.get("/api/v1/plan", params={**SLA, "users": "500"}).json()["rows"]
    assert rows and all(r["usd_per_hour"] is None for r in rows)
    accelerators = [r["accelerators"] for r in rows]
    assert accelerators == sorted(accelerators)
    # A stricter SLA never needs fewer systems.
    strict = client.get(
        "/api/v1/plan", params={**SLA, "users": "500", "tps_per_user_min": "100"}
    ).json()["rows"]
    loose = {r["submission"]: r["systems_needed"] for r in rows}
    assert all(r["systems_needed"] >= loose[r["submission"]] for r in strict)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"benchmark": "llama3_1-8b"}, "users"),
        ({"benchmark": "llama3_1-8b", "users": "0"}, "users"),
        ({"benchmark": "llama3_1-8b", "users": "lots"}, "users"),
        ({"benchmark": "no-such-model", "users": "10"}, "benchmark"),
        ({"users": "10", "ttft_p90_max_ms": "fast"}, "ttft_p90_max_ms"),
        ({"users": "10", "price_per_accelerator_hour": "-1"}, "price_per_accelerator_hour"),
        ({"users": "10", "cohort": "2099-01-C0"}, "cohort"),
    ],
)
def test_bad_inputs_are_refused_by_name(
    client: TestClient, params: dict[str, str], field: str
) -> None:
    answer = client.get("/api/v1/plan", params=params)
    assert answer.status_code in (404, 422), answer.text
    assert answer.json()["error"]["field"] == field


def test_a_request_rate_is_sized_on_each_curves_fastest_point_at_the_sla(
    client: TestClient,
) -> None:
    params = {**SLA, "requests_per_s": "40", "output_tokens_per_request": "250"}
    plan = client.get("/api/v1/plan", params=params).json()
    explorer = client.get("/api/v1/results", params={**SLA, "limit": "all"}).json()
    assert plan["users"] is None and plan["requests_per_s"] == 40
    assert "highest throughput" in plan["method"]
    curves = {c["submission"]: c for c in explorer["curves"]}
    assert plan["rows"]
    for row in plan["rows"]:
        met = [p for p in curves[row["submission"]]["points"]
               if p["admissible"] and p["offline"] != "dedicated"]  # fmt: skip
        assert row["system_tps"] == max(p["system_tps"] for p in met)
        assert row["requests_per_s"] == pytest.approx(row["system_tps"] / 250, abs=1e-3)
        assert row["systems_needed"] == math.ceil(40 / (row["system_tps"] / 250))
    # One load at a time, and a rate needs its output length.
    both = client.get("/api/v1/plan", params={**params, "users": "10"})
    assert both.status_code == 422 and both.json()["error"]["field"] == "requests_per_s"
    bare = client.get("/api/v1/plan", params={**SLA, "requests_per_s": "40"})
    assert bare.json()["error"]["field"] == "output_tokens_per_request"
    page = client.get("/plan", params=params)
    assert page.status_code == 200 and "40 requests/s of 250 output tokens" in page.text


def test_the_benchmark_menu_shows_the_benchmark_planned_for(client: TestClient) -> None:
    """Issue 48: with no benchmark in the address the plan was for the default one while
    the menu showed its first option, and "Size it" then planned another benchmark."""
    import re

    page = client.get("/plan", params={"users": "200"}).text
    planned = re.search(r"<h1>Capacity plan · ([\w.-]+)", page)
    selected = re.findall(
        r'<option value="([^"]+)" selected>',
        page.split('id="p-benchmark"')[1].split("</select>")[0],
    )
    assert planned and selected == [planned.group(1)]
    # Before any load is asked about, the menu offers the benchmark a plan would take.
    empty = client.get("/plan").text.split('id="p-benchmark"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]+)" selected>', empty) == [planned.group(1)]
