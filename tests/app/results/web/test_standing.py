"""Every surface tells a result's standing (issue 46): the demo holds one Preview (Dune,
unverified), one RDI result (Fjord), one with MLC Estimated Power and points whose
steady-state window is short (Ember), and one superseded result (Borealis' first, by its
second on a newer stack). The API, the pages and the exports are walked for each."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from fastapi.testclient import TestClient

LLAMA = [("benchmark", "llama3_1-8b"), ("limit", "all")]
EVERY = [("availability", a) for a in ("Available", "Preview", "RDI")]
ALL_STATUSES = [("status", s) for s in ("verified", "provisional", "unverified")]
PREVIEW_TAG = "Preview \u2014 Available by 2027-03-31"


def _results(client: TestClient, *params: tuple[str, str]) -> dict[str, Any]:
    answer = client.get("/api/v1/results", params=list(params))
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _by_system(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["system"]: c for c in body["curves"]}


def test_the_api_names_each_results_status_division_and_tags(client: TestClient) -> None:
    curves = _by_system(_results(client, *LLAMA, *EVERY))
    fjord, ember = curves["Fjord L40S x8"], curves["Ember GB200 x4"]
    assert (fjord["availability"], fjord["division"]) == ("RDI", "RDI")
    assert fjord["result_name"] == "MLPerf Endpoints RDI"
    assert ember["availability"] == "Available" and ember["power_estimated"] is True
    assert ember["tags"] == ["peer review pending", "MLC Estimated Power"]
    assert curves["Acme H200 x8"]["tags"] == [] and curves["Acme H200 x8"]["scenario"] is None
    # Each point carries what its numbers rest on: Ember's busiest windows are short.
    bases = {p["concurrency"]: p["reporting_basis"] for p in ember["points"]
             if p["offline"] == "none"}  # fmt: skip
    assert bases[64]["steady"] is True and bases[64]["label"] == "steady state"
    assert bases[1024]["steady"] is False and "low confidence" in bases[1024]["label"]
    rows = {r["system"]: r for r in _results(client, *LLAMA, *EVERY)["ranking"]}
    assert rows["Fjord L40S x8"]["result_name"] == "MLPerf Endpoints RDI"
    assert rows["Ember GB200 x4"]["tags"] == ember["tags"]


def test_rdi_results_are_ranked_only_when_asked_for(client: TestClient) -> None:
    default = _by_system(_results(client, *LLAMA))
    assert "Fjord L40S x8" not in default and "Acme H200 x8" in default
    only_rdi = _by_system(_results(client, *LLAMA, ("availability", "rdi")))
    assert set(only_rdi) == {"Fjord L40S x8"}
    refused = client.get("/api/v1/results", params=[*LLAMA, ("availability", "Soon")])
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "availability"


def test_a_superseded_result_is_current_nowhere_and_labelled_where_asked(
    client: TestClient,
) -> None:
    current = [c for c in _results(client, *LLAMA)["curves"] if c["system"].startswith("Borealis")]
    assert len(current) == 1 and current[0]["superseded_by"] is None
    both = [c for c in _results(client, *LLAMA, ("superseded", "include"))["curves"]
            if c["system"].startswith("Borealis")]  # fmt: skip
    [old] = [c for c in both if c["superseded_by"]]
    assert old["superseded_by"] == "2026-11-C1" and "Superseded by 2026-11-C1" in old["tags"]
    assert old["published_in"] == "2026-10-C1"
    # The cohort before the newer result still shows the older one as it was.
    before = _by_system(_results(client, *LLAMA, ("cohort", "2026-11-C0")))
    assert before["Borealis MI355X x8"]["superseded_by"] is None


def test_a_preview_result_carries_its_date_and_the_tracker_follows_it(client: TestClient) -> None:
    gpt = _by_system(_results(client, ("benchmark", "gpt-oss-120b"), *ALL_STATUSES))
    dune = gpt["Dune Gaudi 3 x8"]
    assert dune["availability"] == "Preview" and dune["available_by"] == "2027-03-31"
    assert dune["result_name"] == "MLPerf Endpoints Preview" and PREVIEW_TAG in dune["tags"]
    tracker = client.get("/api/v1/preview-tracker").json()
    [row] = [p for p in tracker["previews"] if p["submission"] == dune["submission"]]
    # 2026-11-C0 (2026-11-04) + 180 days.
    assert (row["first_cohort"], row["expires"], row["outcome"]) == ("2026-11-C0", "2027-05-03",
                                                                     "pending")  # fmt: skip
    page = client.get("/preview-tracker")
    assert page.status_code == 200 and f'data-submission="{dune["submission"]}"' in page.text
    shown = client.get(f"/submissions/{dune['submission']}")
    assert "Available by <strong>2027-03-31</strong>" in shown.text and "2027-05-03" in shown.text
    api = client.get(f"/api/v1/submissions/{dune['submission']}").json()
    [standing] = api["standing"]
    assert standing["preview"]["expires"] == "2027-05-03" and PREVIEW_TAG in standing["tags"]


def test_the_pages_show_status_tags_and_the_rdi_style(client: TestClient) -> None:
    results = client.get("/results", params=[*LLAMA, *EVERY, ("normalize", "kw")])
    assert results.status_code == 200
    for shown in ('class="availability availability-rdi"', "MLC Estimated Power",
                  'class="tag estimated"', "low confidence"):  # fmt: skip
        assert shown in results.text, shown
    data = json.loads(results.text.split('id="results-data">')[1].split("</script>")[0])
    assert "MLPerf Endpoints RDI" in data["result_names"]
    curves = _by_system(_results(client, *LLAMA, *EVERY))
    compare = client.get("/compare", params=[("submission", curves["Fjord L40S x8"]["submission"]),
                                             ("submission", curves["Ember GB200 x4"]["submission"]),
                                             ("benchmark", "llama3_1-8b")])  # fmt: skip
    assert compare.status_code == 200 and "availability-rdi" in compare.text
    assert "MLPerf Endpoints RDI" in compare.text  # the chart's caption names the results
    borealis = {"organization": "Borealis AI", "system": "Borealis MI355X x8",
                "benchmark": "llama3_1-8b"}  # fmt: skip
    history = client.get("/history", params=borealis)
    assert history.text.count("<tr>") >= 2 and "Superseded by 2026-11-C1" in history.text
    plan = client.get("/plan", params=[*LLAMA, *EVERY, ("users", "20000")])
    assert "availability-rdi" in plan.text
    embed = client.get("/embed/results", params=[*LLAMA, *EVERY])
    assert "MLPerf Endpoints RDI" in embed.text


def test_the_exports_carry_the_standing(client: TestClient) -> None:
    for export in ("ranking", "points"):
        answer = client.get("/api/v1/results", params=[*LLAMA, *EVERY, ("format", "csv"),
                                                       ("export", export)])  # fmt: skip
        rows = list(csv.DictReader(io.StringIO(answer.text)))
        ember = [r for r in rows if r["system"] == "Ember GB200 x4"]
        assert ember and all(r["tags"] == "peer review pending; MLC Estimated Power" for r in ember)
        fjord = [r for r in rows if r["system"] == "Fjord L40S x8"]
        assert fjord and all(r["availability"] == "RDI" for r in fjord)
        assert {r["reporting_basis"] for r in rows} >= {"steady state"}


def test_steady_only_ranks_the_points_of_the_official_basis(client: TestClient) -> None:
    body = _results(client, *LLAMA, ("basis", "steady"))
    ember = _by_system(body)["Ember GB200 x4"]
    admitted = {
        p["concurrency"]: p["admissible"] for p in ember["points"] if p["offline"] == "none"
    }
    assert admitted[64] and not admitted[512] and not admitted[1024]
    row = next(r for r in body["ranking"] if r["system"] == "Ember GB200 x4")
    assert row["concurrency"] < 512 and row["reporting_basis"]["steady"]
