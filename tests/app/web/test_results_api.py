"""/api/v1/results and friends, on the demo data, for every filter."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.settings import Settings
from app.web.main import create_app
from tests.conftest import RecordingQueue


@pytest.fixture(scope="module")
def client(demo_env: tuple[Settings, Database]) -> Iterator[TestClient]:
    settings, _database = demo_env
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c


def systems(client: TestClient, **params: object) -> set[str]:
    response = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", **params})
    assert response.status_code == 200, response.text
    return {c["system"] for c in response.json()["curves"]}


def test_cohorts_and_benchmarks(client: TestClient) -> None:
    cohorts = client.get("/api/v1/cohorts").json()["data"]
    latest = {k: v for k, v in cohorts[0].items() if k != "published_at"}
    assert latest == {"id": "2026-11-C1", "date": "2026-11-18", "publications": 2}
    assert cohorts[0]["published_at"].startswith("2026-11-18T16:00")
    older = client.get("/api/v1/benchmarks", params={"cohort": "2026-10-C1"}).json()["data"]
    assert {b["id"] for b in older} == {"llama3_1-8b", "gpt-oss-120b"}


def test_statuses_default_and_repeatable(client: TestClient) -> None:
    body = client.get("/api/v1/results", params={"benchmark": "gpt-oss-120b"}).json()
    assert body["statuses"] == ["verified", "provisional"]
    assert {c["status"] for c in body["curves"]} == {"verified"}
    both = client.get(
        "/api/v1/results",
        params=[("benchmark", "gpt-oss-120b"), ("status", "unverified"), ("status", "verified")],
    )
    assert {c["status"] for c in both.json()["curves"]} == {"verified", "unverified"}
    assert all(p.get("admissible") is not None for c in both.json()["curves"] for p in c["points"])


def test_cohort_filter(client: TestClient) -> None:
    assert systems(client, cohort="2026-10-C1") == {"Acme H200 x8", "Borealis MI355X x8"}
    assert len(systems(client)) == 5  # the latest cohort by default


def test_system_filters(client: TestClient) -> None:
    assert systems(client, division="RDI") == {"Fjord L40S x8"}
    assert systems(client, availability="available") >= {"Acme H200 x8"}
    assert "Fjord L40S x8" not in systems(client, availability="Available")
    assert systems(client, organization="Cumulus Cloud") == {"Cumulus B200 x8"}
    assert systems(client, accelerator="h200") == {"Acme H200 x8"}
    assert systems(client, accelerator_count=4) == {"Ember GB200 x4"}


def test_sla_parameters_change_the_ranking(client: TestClient) -> None:
    def ranking(**params: object) -> list[tuple[str, int]]:
        body = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", **params}).json()
        return [(r["system"], r["concurrency"]) for r in body["ranking"]]

    everything = ranking()
    strict = ranking(ttft_p90_max_ms=80, tps_per_user_min=150)
    assert everything != strict
    body = client.get(
        "/api/v1/results",
        params={"benchmark": "llama3_1-8b", "ttft_p90_max_ms": 80, "tps_per_user_min": 150},
    ).json()
    for row in body["ranking"]:
        assert row["ttft_p90_ms"] <= 80 and row["tps_per_user"] >= 150
    assert {r["system"] for r in body["no_admissible_point"]} | {
        r["system"] for r in body["ranking"]
    } == {c["system"] for c in body["curves"]}
    assert all(c >= 64 for _, c in ranking(concurrency_min=64))
    regional = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "region": "low_concurrency"}
    ).json()
    assert all(r["region"] == "low_concurrency" for r in regional["ranking"])


def test_normalisation_is_derived(client: TestClient) -> None:
    plain = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    per_kw = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "normalize": "kw"}
    ).json()
    per_acc = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "normalize": "accelerator"}
    ).json()
    assert (plain["derived"], per_kw["derived"], per_acc["derived"]) == (False, True, True)
    row = next(r for r in per_kw["ranking"] if r["system"] == "Acme H200 x8")
    assert row["throughput"] == pytest.approx(row["system_tps_per_kw"])
    acc = next(r for r in per_acc["ranking"] if r["system"] == "Ember GB200 x4")
    assert acc["throughput"] == pytest.approx(acc["system_tps"] / 4)


def test_agentic_benchmarks_use_interactivity(client: TestClient) -> None:
    body = client.get(
        "/api/v1/results", params={"benchmark": "kimi-k3", "tps_per_user_min": 1}
    ).json()
    assert body["curves"] and all(c["x_metric"] == "e2e_avg_interactivity" for c in body["curves"])
    assert body["ranking"] and body["ranking"][0]["e2e_avg_interactivity"] >= 1
    assert all(p["e2e_avg_interactivity"] > 0 for c in body["curves"] for p in c["points"])


def test_csv_exports_open_in_a_spreadsheet(client: TestClient) -> None:
    ranking = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", "format": "csv"})
    assert ranking.headers["content-type"].startswith("text/csv")
    assert "attachment" in ranking.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(ranking.text)))
    assert rows and rows[0]["rank"] == "1" and float(rows[0]["throughput"]) > 0
    # Rules §1.2 / SR §7.6: the results table names each result and its division.
    reviewed = [r for r in rows if r["status"] in ("verified", "provisional")]
    assert reviewed and all(r["result_id"].startswith("1.0.") and r["division"] for r in reviewed)
    points = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "format": "csv", "export": "points"}
    )
    point_rows = list(csv.DictReader(io.StringIO(points.text)))
    assert {"result_id", "division"} <= set(point_rows[0])
    assert len(point_rows) > len(rows) and {"concurrency", "admissible", "ttft_p90_ms"} <= set(
        point_rows[0]
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"status": "published"}, "unknown status"),
        ({"normalize": "watts"}, "normalize"),
        ({"region": "everywhere"}, "region"),
        ({"ttft_p90_max_ms": -1}, "greater than or equal"),
    ],
)
def test_bad_parameters_are_422_with_a_reason(
    client: TestClient, params: dict, message: str
) -> None:
    response = client.get("/api/v1/results", params=params)
    assert response.status_code == 422 and message in response.text


def test_openapi_documents_the_results_parameters(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()["paths"]["/api/v1/results"]["get"]
    names = {p["name"] for p in spec["parameters"]}
    assert {
        "benchmark",
        "cohort",
        "status",
        "ttft_p90_max_ms",
        "tps_per_user_min",
        "concurrency_min",
        "region",
        "division",
        "availability",
        "normalize",
    } <= names


def test_the_page_renders_the_same_ranking(client: TestClient) -> None:
    api = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "tps_per_user_min": 100}
    ).json()
    page = client.get("/results", params={"benchmark": "llama3_1-8b", "tps_per_user_min": 100})
    assert page.status_code == 200
    for row in api["ranking"]:
        assert row["system"] in page.text
    assert "peer review pending" in page.text and "preliminary" in page.text
    assert client.get("/results", params={"tps_per_user_min": "fast"}).status_code == 422


def test_csv_file_names_from_the_query_are_safe_header_values(client: TestClient) -> None:
    """Found by schemathesis: a benchmark name outside latin-1 broke the header (500)."""
    hostile = 'Āb"\r\nSet-Cookie: x=1'
    response = client.get("/api/v1/results", params={"benchmark": hostile, "format": "csv"})
    assert response.status_code == 200
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="_b___Set-Cookie__x_1-')
    assert "x=1" not in response.headers.get("set-cookie", "")


def test_csv_cells_cannot_become_spreadsheet_formulas() -> None:
    from app.web.api.results import _csv

    text = _csv(
        [{"system": '=HYPERLINK("x")', "organization": "+1", "rank": 1}],
        ("rank", "system", "organization"),
    )
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["system"].startswith("'=") and row["organization"] == "'+1" and row["rank"] == "1"
