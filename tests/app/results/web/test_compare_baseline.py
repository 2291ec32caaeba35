"""A baseline in compare: every other submission's points, and its best point at the
buyer's SLA, as a % change against the baseline's (API, page and chart)."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from app.results.services.compare import delta_pct

# A query as httpx takes it, in order, keys repeated.
Params = list[tuple[str, str | int | float | bool | None]]


@pytest.fixture(scope="module")
def pair(client: TestClient) -> list[str]:
    ranking = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()["ranking"]
    return [ranking[0]["submission"], ranking[1]["submission"]]


def test_delta_is_the_change_in_percent() -> None:
    assert delta_pct(110.0, 100.0) == 10.0
    assert delta_pct(90.0, 120.0) == -25.0
    assert delta_pct(None, 100.0) is None and delta_pct(5.0, None) is None
    assert delta_pct(5.0, 0.0) is None


def test_every_point_and_the_best_at_the_sla_against_the_baseline(
    client: TestClient, pair: list[str]
) -> None:
    params: Params = [("submission", pair[0]), ("submission", pair[1]), ("baseline", pair[1]),
              ("benchmark", "llama3_1-8b"), ("tps_per_user_min", "30")]  # fmt: skip
    body = client.get("/api/v1/compare", params=params).json()
    assert body["baseline"] == pair[1] and body["sla"]["tps_per_user_min"] == 30
    checked = 0
    for row in body["points"]:
        other, base = row["system_tps"]
        assert row["system_tps_delta_pct"][1] is None  # the baseline itself
        if other is not None and base is not None:
            assert row["system_tps_delta_pct"][0] == round((other - base) / base * 100, 1)
            checked += 1
        else:
            assert row["system_tps_delta_pct"][0] is None
    assert checked >= 5
    first, baseline = body["submissions"]
    # The best point at the SLA is the explorer's ranking point for that SLA.
    explorer = client.get(
        "/api/v1/results",
        params={"benchmark": "llama3_1-8b", "tps_per_user_min": "30", "limit": "all"},
    ).json()
    best = {r["submission"]: r["point"] for r in explorer["ranking"]}
    assert first["at_sla"]["point"] == best[pair[0]]
    assert baseline["at_sla"]["point"] == best[pair[1]]
    assert baseline["at_sla"]["system_tps_delta_pct"] is None
    expected = delta_pct(first["at_sla"]["system_tps"], baseline["at_sla"]["system_tps"])
    assert first["at_sla"]["system_tps_delta_pct"] == expected
    # The page shows the same changes, and the chart's hover carries them.
    page = client.get("/compare", params=params)
    assert page.status_code == 200
    shown = re.search(rf'<tr data-submission="{pair[0]}">(.*?)</tr>', page.text, re.S)
    assert shown is not None and f"{expected:+.1f} %" in shown.group(1)
    assert "selected>" in page.text.split('id="c-baseline"')[1].split("</select>")[0]
    found = re.search(r'id="curves-data">(.*?)</script>', page.text, re.S)
    assert found is not None
    notes = [p.get("note") for c in json.loads(found.group(1))["curves"] for p in c["points"]]
    assert any(n and n.endswith("% system tok/s vs the baseline") for n in notes)


def test_without_a_baseline_there_are_no_deltas_and_a_stranger_is_refused(
    client: TestClient, pair: list[str]
) -> None:
    params: Params = [
        ("submission", pair[0]),
        ("submission", pair[1]),
    ]
    body = client.get("/api/v1/compare", params=params).json()
    assert body["baseline"] is None
    assert all(row["system_tps_delta_pct"] == [] for row in body["points"])
    assert all(s["at_sla"]["system_tps_delta_pct"] is None for s in body["submissions"])
    refused = client.get("/api/v1/compare", params=[*params, ("baseline", "f" * 32)])
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "baseline"
    bad_sla = client.get("/api/v1/compare", params=[*params, ("ttft_p90_max_ms", "soon")])
    assert bad_sla.status_code == 422 and bad_sla.json()["error"]["field"] == "ttft_p90_max_ms"


def test_the_export_is_the_table_with_its_deltas_and_runs(
    client: TestClient, pair: list[str]
) -> None:
    import csv
    import io

    acme = next(
        r["submission"]
        for r in client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()[
            "ranking"
        ]
        if r["system"].startswith("Acme")
    )
    other = next(p for p in pair if p != acme)
    params: Params = [("submission", other), ("submission", acme), ("baseline", acme),
              ("benchmark", "llama3_1-8b")]  # fmt: skip
    body = client.get("/api/v1/compare", params=params).json()
    answer = client.get("/api/v1/compare", params=[*params, ("format", "csv")])
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert 'filename="compare-llama3_1-8b.csv"' in answer.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    expected = [(row["concurrency"], s["submission"], row["system_tps_delta_pct"][n])
                for row in body["points"] for n, s in enumerate(body["submissions"])
                if row["system_tps"][n] is not None]  # fmt: skip
    assert [(int(r["concurrency"]), r["submission"], r["system_tps_delta_pct"]) for r in rows] == [
        (c, s, "" if d is None else str(d)) for c, s, d in expected
    ]
    assert {r["baseline"] for r in rows if r["submission"] == acme} == {"True"}
    # The demo reproduced Acme's r64 three times: four runs, with their spread.
    (r64,) = [r for r in rows if r["submission"] == acme and r["point"] == "r64"]
    assert r64["runs"] == "4" and float(r64["cv"]) > 0
    page = client.get("/compare", params=params).text
    assert 'id="compare-csv"' in page and "format=csv" in page
    # The table says so too, beside the point's throughput.
    cell = re.search(r'class="muted small runs"[^>]*>([^<]+)</a>', page)
    assert cell is not None and cell.group(1).startswith("4 runs · CV ")
