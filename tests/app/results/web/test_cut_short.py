"""A point whose responses were cut short at the length limit says so on every surface:
the demo's Fjord system ends 12 % of its responses on the limit from concurrency 512 on."""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi.testclient import TestClient

# Fjord is the demo's RDI system: ranked only when RDI results are asked for (§11.10).
BENCHMARK = {"benchmark": "llama3_1-8b", "availability": ["Available", "Preview", "RDI"]}


def _fjord(results: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in results["curves"] if c["system"].startswith("Fjord"))


def test_the_results_carry_the_counts_and_the_note(client: TestClient) -> None:
    results = client.get("/api/v1/results", params={**BENCHMARK, "limit": "all"}).json()
    fjord = _fjord(results)
    for point in fjord["points"]:
        reasons = point["finish_reasons"]
        busy = point["concurrency"] >= 512
        assert (reasons["cut_short"] is not None) == busy, point["dir"]
        assert reasons["length_share"] > 0.05 if busy else reasons["length_share"] < 0.05
    # Every other demo system cuts 2 %: no note anywhere else.
    others = [p for c in results["curves"] if c is not fjord for p in c["points"]]
    assert others and not any(p["finish_reasons"]["cut_short"] for p in others)
    # Without an SLA the ranking takes each system's fastest point: Fjord's busiest.
    [row] = [r for r in results["ranking"] if r["system"].startswith("Fjord")]
    assert row["concurrency"] >= 512 and "ended on the output length limit" in row["cut_short"]
    assert all(r["cut_short"] is None for r in results["ranking"] if r is not row)


def test_the_exports_the_plan_and_compare_carry_it(client: TestClient) -> None:
    points = client.get("/api/v1/results", params={**BENCHMARK, "format": "csv",
                                                   "export": "points"})  # fmt: skip
    rows = [r for r in csv.DictReader(io.StringIO(points.text)) if r["system"].startswith("Fjord")]
    assert rows and all(
        bool(r["cut_short"]) == (int(r["concurrency"]) >= 512) and float(r["length_limited_share"])
        for r in rows
    )
    plan = client.get("/api/v1/plan", params={**BENCHMARK, "users": "20000"}).json()
    [sized] = [r for r in plan["rows"] if r["system"].startswith("Fjord")]
    assert sized["concurrency"] >= 512 and sized["cut_short"]

    results = client.get("/api/v1/results", params=BENCHMARK).json()
    fjord = _fjord(results)["submission"]
    other = next(r["submission"] for r in results["ranking"] if r["submission"] != fjord)
    comparison = client.get(
        "/api/v1/compare",
        params=[("submission", fjord), ("submission", other), ("benchmark", "llama3_1-8b")],
    ).json()
    at_sla = {s["submission"]: s["at_sla"] for s in comparison["submissions"]}
    assert at_sla[fjord]["cut_short"] and at_sla[other]["cut_short"] is None
    busy = [row for row in comparison["points"] if row["concurrency"] >= 512]
    assert busy and all(row["cut_short"][0] for row in busy if row["system_tps"][0] is not None)


def test_the_pages_mark_the_point_and_say_why(client: TestClient) -> None:
    results = client.get("/api/v1/results", params=BENCHMARK).json()
    fjord = _fjord(results)["submission"]
    for path, params in (
        ("/results", BENCHMARK),
        ("/plan", {**BENCHMARK, "users": "20000"}),
        ("/compare", [("submission", fjord),
                      ("submission", results["ranking"][0]["submission"])]),
        (f"/submissions/{fjord}", {}),
    ):  # fmt: skip
        page = client.get(path, params=params)
        assert page.status_code == 200, path
        assert 'class="tag cut-short"' in page.text, path
        assert "ended on the output length limit" in page.text, path
