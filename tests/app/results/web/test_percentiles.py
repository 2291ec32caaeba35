"""P50/P90/P95/P99 of TTFT, TPOT and latency: as the summary has them, P90 the official."""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient


def test_points_carry_the_summarys_tail_and_its_p90_is_the_official_one(
    client: TestClient,
) -> None:
    body = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    points = [p for c in body["curves"] for p in c["points"]]
    assert points and all("percentiles" in p for p in points)
    for p in points:
        tail = p["percentiles"]
        assert set(tail["ttft_ms"]) == {"50", "90", "95", "99"}
        if p["ttft_p90_ms"] is not None:
            assert tail["ttft_ms"]["90"] == pytest.approx(p["ttft_p90_ms"], abs=1e-3)
        assert tail["ttft_ms"]["50"] <= tail["ttft_ms"]["90"] <= tail["ttft_ms"]["99"]
        assert tail["tpot_ms"]["90"] == pytest.approx(p["tpot_p90_ms"], abs=1e-3)
        assert tail["latency_ms"]["99"] >= tail["latency_ms"]["50"] > 0


def test_the_points_export_has_a_column_per_percentile(client: TestClient) -> None:
    response = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "format": "csv", "export": "points"}
    )
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert {"ttft_p50_ms", "ttft_p99_ms", "tpot_p95_ms", "latency_p90_ms"} <= set(rows[0])
    assert "ttft_p90_ms" in rows[0] and "ttft_p90_ms_1" not in rows[0]
    assert all(float(r["ttft_p99_ms"]) >= float(r["ttft_p50_ms"]) for r in rows)


def test_the_submission_page_shows_the_tail_beside_the_p90(client: TestClient) -> None:
    body = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    sid = body["curves"][0]["submission"]
    page = client.get(f"/submissions/{sid}")
    assert page.status_code == 200
    assert "Tail ms: P50 · P95 · P99" in page.text and 'class="tail-line">TTFT' in page.text
