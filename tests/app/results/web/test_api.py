"""/api/v1/results and friends, on the demo data, for every filter."""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient

from app.results.services.accuracy import AccuracyParams
from app.results.services.compare import CompareParams
from app.results.services.plan import PlanParams
from app.results.services.query import ResultsParams

# PostgreSQL too: the results query's filters, order and aggregates are SQL.
pytestmark = pytest.mark.postgresql


def systems(client: TestClient, **params: str | float | list[str]) -> set[str]:
    response = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", **params})
    assert response.status_code == 200, response.text
    return {c["system"] for c in response.json()["curves"]}


def test_cohorts_and_benchmarks(client: TestClient) -> None:
    cohorts = client.get("/api/v1/cohorts").json()["data"]
    latest = {k: v for k, v in cohorts[0].items() if k != "published_at"}
    assert latest == {"id": "2026-11-C1", "date": "2026-11-18", "publications": 3}
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
    # The latest cohort by default; RDI results (Fjord) only when asked for (rules §11.10).
    assert len(systems(client)) == 4
    assert len(systems(client, availability=["Available", "Preview", "RDI"])) == 5


def test_system_filters(client: TestClient) -> None:
    assert systems(client, division="RDI") == {"Fjord L40S x8"}
    assert systems(client, availability="available") >= {"Acme H200 x8"}
    assert "Fjord L40S x8" not in systems(client, availability="Available")
    assert systems(client, organization="Cumulus Cloud") == {"Cumulus B200 x8"}
    assert systems(client, accelerator="h200") == {"Acme H200 x8"}
    assert systems(client, accelerator_count=4) == {"Ember GB200 x4"}


def test_sla_parameters_change_the_ranking(client: TestClient) -> None:
    def ranking(**params: str | float) -> list[tuple[str, int]]:
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


def test_a_csv_says_which_view_it_is_and_its_name_differs_per_view(client: TestClient) -> None:
    """A file opened a week later must still say what it shows: cohort, dataset, SLA and
    normalisation on every row, and in the file name."""
    params: dict[str, str | int] = {
        "benchmark": "llama3_1-8b",
        "format": "csv",
        "ttft_p90_max_ms": 150,
    }
    per_kw = client.get("/api/v1/results", params={**params, "normalize": "kw"})
    per_system = client.get("/api/v1/results", params=params)
    rows = list(csv.DictReader(io.StringIO(per_kw.text)))
    assert rows and {r["dataset"] for r in rows} == {"cnn_dailymail"}
    assert {r["cohort"] for r in rows} == {"current (2026-11-C1)"}
    assert {r["normalize"] for r in rows} == {"kw"} and {
        r["sla_ttft_p90_max_ms"] for r in rows
    } == {"150.0"}
    assert all(float(r["provisioned_power_kw"]) > 0 for r in rows)  # the per-kW denominator
    names = {r.headers["content-disposition"].split("filename=")[1] for r in (per_kw, per_system)}
    assert names == {
        '"llama3_1-8b-cnn_dailymail-current-kw-ttft_p90_max_ms-150-ranking.csv"',
        '"llama3_1-8b-cnn_dailymail-current-system-ttft_p90_max_ms-150-ranking.csv"',
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"status": "published"}, "unknown status"),
        ({"normalize": "watts"}, "normalize"),
        ({"region": "everywhere"}, "region"),
        ({"ttft_p90_max_ms": -1}, "ttft_p90_max_ms must be a number of at least 0"),
        ({"ttft_p90_max_ms": "abc"}, "ttft_p90_max_ms must be a number, not 'abc'"),
        ({"ttft_p90_max_ms": "nan"}, "ttft_p90_max_ms must be a number of at least 0"),
        ({"concurrency_min": str(10**20)}, "concurrency_min must be a whole number from 1"),
        ({"concurrency_min": -5}, "concurrency_min must be a whole number from 1"),
        ({"cohort": "2099-01-C0"}, "no cohort '2099-01-C0' has been published"),
        ({"benchmark": "no-such-model"}, "no published curves for benchmark 'no-such-model'"),
        ({"dataset": "other_set"}, "has no published curves on dataset 'other_set'"),
    ],
)
def test_bad_parameters_are_422_with_a_reason(
    client: TestClient, params: dict[str, str], message: str
) -> None:
    """The page parses with the same function (tests/app/web/test_pages_browser.py shows
    its inline message)."""
    response = client.get("/api/v1/results", params=params)
    assert response.status_code == 422 and message in response.json()["error"]["message"]
    assert response.json()["error"]["field"] == next(iter(params))


@pytest.mark.parametrize(
    ("path", "params", "own"),
    [
        ("/api/v1/results", ResultsParams, {"format", "export"}),
        ("/api/v1/plan", PlanParams, set()),
        ("/api/v1/compare", CompareParams, {"format"}),
        ("/api/v1/accuracy", AccuracyParams, set()),
    ],
)
def test_openapi_documents_every_parameter_the_query_reads(
    client: TestClient, path: str, params: type[ResultsParams], own: set[str]
) -> None:
    # One model is both what OpenAPI says and what the parser reads: a parameter the
    # service reads cannot go undocumented, nor a documented one go unread.
    spec = client.get("/openapi.json").json()["paths"][path]["get"]
    documented = {p["name"]: p for p in spec["parameters"]}
    assert set(documented) == set(params.model_fields) | own
    assert documented["status"]["schema"]["anyOf"][0]["type"] == "array"
    assert "a number" in documented["ttft_p90_max_ms"]["description"]


def test_the_page_renders_the_same_ranking(client: TestClient) -> None:
    api = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "tps_per_user_min": 100}
    ).json()
    page = client.get("/results", params={"benchmark": "llama3_1-8b", "tps_per_user_min": 100})
    assert page.status_code == 200
    for row in api["ranking"]:
        assert row["system"] in page.text
    assert "peer review pending" in page.text and "preliminary" in page.text
    assert "Best admissible point per system" in page.text and 'id="no-sla"' not in page.text


def test_the_page_refuses_what_the_api_refuses_inline(client: TestClient) -> None:
    for params in ({"tps_per_user_min": "fast"}, {"cohort": "2099-01-C0"}, {"concurrency_min": -5}):
        api = client.get("/api/v1/results", params=params).json()["error"]
        page = client.get("/results", params=params)
        assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
        assert 'id="query-error"' in page.text and api["message"] in page.text.replace("&#39;", "'")
        assert 'id="results-data"' not in page.text  # nothing drawn from a refused query
        assert f'value="{next(iter(params.values()))}"' in page.text or "cohort" in params


def test_with_no_sla_the_ranking_says_it_ignores_latency(client: TestClient) -> None:
    page = client.get("/results", params={"benchmark": "llama3_1-8b"})
    assert "Highest throughput per system, at any latency" in page.text
    assert 'id="no-sla"' in page.text
    assert client.get("/api/v1/results").json()["sla_set"] is False


def test_csv_file_names_from_the_query_are_safe_header_values(client: TestClient) -> None:
    """Found by schemathesis: a benchmark name outside latin-1 broke the header (500).
    Names are now checked against what is published; the file name stays sanitised for
    what a submitter typed (a dataset name)."""
    from app.results.services.results import ResultsPage, SlaView
    from app.results.web.api import export_name

    hostile = 'Āb"\r\nSet-Cookie: x=1'
    response = client.get("/api/v1/results", params={"benchmark": hostile, "format": "csv"})
    assert response.status_code == 422 and "set-cookie" not in response.headers
    sla = SlaView(ttft_p90_max_ms=500.0, tps_per_user_min=None, concurrency_min=None, region=None,
                  regions=[], suggested=[])  # fmt: skip
    result = ResultsPage.model_construct(
        benchmark="m", dataset=hostile, cohort="2026-12-C0", current=True, normalize="system",
        sla=sla, workload=None, price=None, rank_by="throughput", goodput=False,
    )  # fmt: skip
    assert (
        export_name(result, "points")
        == "m-_b___Set-Cookie__x_1-current-system-ttft_p90_max_ms-500-points.csv"
    )


def test_peer_review_pending_is_said_on_every_surface(client: TestClient) -> None:
    # 2026-10-C1 showed Acme's result while it was provisional.
    params = {"benchmark": "llama3_1-8b", "cohort": "2026-10-C1"}
    body = client.get("/api/v1/results", params=params).json()
    assert any(c["status"] == "provisional" for c in body["curves"])
    for curve in body["curves"]:
        assert curve["peer_review_pending"] == (curve["status"] == "provisional")
    for row in body["ranking"]:
        assert row["peer_review_pending"] == (row["status"] == "provisional")
    assert body["footnote"] and "peer review pending" in body["footnote"]
    for export in ("points", "ranking"):
        text = client.get(
            "/api/v1/results", params={**params, "format": "csv", "export": export}
        ).text
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows and all(
            r["peer_review_pending"] == str(r["status"] == "provisional") for r in rows
        )
    embed = client.get("/embed/results", params=params).text
    assert "peer review pending" in embed and '"peer_review_pending":true' in embed


def test_each_system_on_a_chart_has_a_colour_of_its_own(client: TestClient) -> None:
    from app.results.domain.colours import PALETTE

    body = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    shown = [c["colour"] for c in body["curves"]]
    assert shown and set(shown) <= set(PALETTE)
    assert len(set(shown)) == min(len(shown), len(PALETTE))
    # The same view asked again colours the same way.
    again = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    assert [c["colour"] for c in again["curves"]] == shown


def test_a_refused_choice_keeps_the_others(client: TestClient) -> None:
    # Cost before a price: refused, and the benchmark, the cohort and the cost choice
    # itself stay as the visitor set them.
    benchmarks = client.get("/api/v1/benchmarks").json()["data"]
    other = next(b for b in benchmarks if b["id"] != "llama3_1-8b")
    params = {"benchmark": other["id"], "cohort": "2026-11-C0", "normalize": "usd_per_mtok"}
    page = client.get("/results", params=params)
    assert page.status_code == 422 and "Cost is worked out from your price" in page.text
    kind = "yes" if other["agentic"] else "no"
    assert f'<option value="{other["id"]}" data-agentic="{kind}" selected>' in page.text
    assert '<option value="2026-11-C0" selected>' in page.text
    assert '<option value="usd_per_mtok" selected>' in page.text
