"""A report per result (issue 49, item 3): `/results/{ref}` and its JSON, from the same
computation the explorer serves."""

from __future__ import annotations

import html
from typing import Any

import pytest
from fastapi.testclient import TestClient

LLAMA = {"benchmark": "llama3_1-8b"}


def explorer(client: TestClient, **params: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(
        "/api/v1/results", params={**LLAMA, "limit": "all", **params}
    ).json()
    return body


def report(client: TestClient, ref: str, **params: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/results/{ref}", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_each_result_reports_what_the_explorer_shows(client: TestClient) -> None:
    shown = explorer(client)
    for curve in shown["curves"]:
        body = report(client, curve["result_id"], **LLAMA)
        assert body["ref"] == curve["result_id"]
        # The same computation: the same points, step line, status and tags.
        for key in ("points", "step_line", "status", "tags", "availability", "result_name"):
            assert body["curve"][key] == curve[key], key
        online = [p for p in curve["points"] if p["offline"] != "dedicated"]
        peak = max(online, key=lambda p: p["system_tps"])
        assert f"{peak['system_tps']:,.1f} output tokens/s" in body["statement"]
        assert f"at concurrency {peak['concurrency']:,}" in body["statement"]
        assert body["statement"].endswith(f"{curve['result_name']}, {curve['status']}.")
        cards = body["cards"]
        assert list(cards) == ["Submission", "Model", "System", "Hardware", "Software"]
        assert cards["Submission"]["Result id"] == curve["result_id"]
        assert cards["Model"] == {"Benchmark": "llama3_1-8b", "Dataset": curve["dataset"]}
        assert curve["result_id"] in body["citation"] and curve["result_name"] in body["citation"]
        assert f"cohort {curve['published_in']}" in body["citation"]


def test_previous_and_next_walk_the_view_in_its_order(client: TestClient) -> None:
    """From the first result, next visits every result the view shows, each once, in the
    order its tables list them, and previous walks back."""
    names = sorted(
        (c["organization"].lower(), c["system"].lower()) for c in explorer(client)["curves"]
    )
    first = next(
        c
        for c in explorer(client)["curves"]
        if (c["organization"].lower(), c["system"].lower()) == names[0]
    )
    ref: str | None = first["result_id"]
    seen: list[str] = []
    while ref is not None:
        body = report(client, ref, **LLAMA)
        seen.append(body["curve"]["system"].lower())
        assert body["position"] == len(seen) and body["of"] == len(names)
        ref = body["next"]["ref"] if body["next"] else None
    assert seen == [system for _org, system in names]
    back = report(client, body["ref"], **LLAMA)["previous"]
    assert back is not None and back["system"].lower() == seen[-2]
    # A filter changes the view, so the neighbours: one organisation, no neighbours.
    alone = report(client, first["result_id"], **LLAMA, organization=first["organization"])
    assert (alone["position"], alone["of"], alone["previous"], alone["next"]) == (1, 1, None, None)


def test_a_result_without_an_id_is_reported_by_its_curve(client: TestClient) -> None:
    """Dune's Preview result is unverified: no result id, so its curve's id; the citation
    names it as the rules name a Preview, with its date."""
    every = explorer(
        client,
        benchmark="gpt-oss-120b",
        status=["verified", "provisional", "unverified"],  # type: ignore[arg-type]
    )
    dune = next(c for c in every["curves"] if c["system"].startswith("Dune"))
    assert dune["result_id"] is None
    body = report(client, str(dune["id"]), status="unverified")
    assert body["ref"] == str(dune["id"])
    assert body["cards"]["Submission"]["Result id"] == "none (not verified)"
    assert "MLPerf Endpoints Preview" in body["citation"]
    assert f"Preview — Available by {dune['available_by']}" in body["citation"]
    assert f"unverified curve {dune['id']}" in body["citation"]


def test_disclosures_wait_for_the_end_of_peer_review(client: TestClient) -> None:
    cumulus = next(c for c in explorer(client)["curves"] if c["system"].startswith("Cumulus"))
    assert cumulus["peer_review_pending"]
    body = report(client, cumulus["result_id"])
    assert body["disclosures_withheld"] is True
    assert "Serving framework" not in body["cards"]["Software"]
    assert body["cards"]["Hardware"]["Accelerator"] == cumulus["accelerator_model"]  # the record's


@pytest.mark.parametrize("ref", ["9.9.9.nothing.here.1", "999999", "%3Cb%3Ebold"])
def test_an_unknown_result_is_404_with_why(client: TestClient, ref: str) -> None:
    response = client.get(f"/api/v1/results/{ref}")
    assert response.status_code == 404
    assert "no published result" in response.json()["error"]["message"]
    page = client.get(f"/results/{ref}")
    assert page.status_code == 404 and "no published result" in html.unescape(page.text)
    assert "<b>bold" not in page.text  # what the address says is shown as text


def test_the_report_page_and_the_explorer_lead_to_each_other(client: TestClient) -> None:
    shown = explorer(client)
    curve = shown["curves"][0]
    ranking = client.get("/results", params=LLAMA).text
    assert f'href="/results/{curve["result_id"]}?benchmark=llama3_1-8b"' in ranking
    page = client.get(f"/results/{curve['result_id']}", params=LLAMA)
    assert page.status_code == 200
    text = html.unescape(page.text)
    body = report(client, curve["result_id"], **LLAMA)
    assert body["statement"] in text and body["citation"] in text
    for title in body["cards"]:
        assert f'data-card="{title}"' in text
    assert text.count("<tr data-point=") == len(curve["points"])
    assert 'id="chart-report-pareto"' in text and "<svg" in text  # the first view
    if body["next"]:  # the neighbours' links keep the view
        assert f'href="/results/{body["next"]["ref"]}?benchmark=llama3_1-8b"' in text
    assert "MLPerf_Results_Messaging_Guidelines" in text


def test_the_explorer_cites_every_result_it_draws(client: TestClient) -> None:
    """The view's citation names each drawn result as the rules do, with its id, and a
    Preview with its date."""
    params = {"benchmark": "gpt-oss-120b", "status": ["verified", "unverified"]}
    shown = client.get("/api/v1/results", params=params).json()
    page = html.unescape(client.get("/results", params=params).text)
    cited = page.split('id="view-citation">')[1].split("</blockquote>")[0]
    assert cited.startswith("MLPerf Endpoints results for gpt-oss-120b")
    for curve in shown["curves"]:
        assert f"{curve['organization']}, {curve['system']}: {curve['result_name']}" in cited
        assert (curve["result_id"] or f"unverified curve {curve['id']}") in cited
    assert "MLPerf Endpoints Preview unverified curve" in cited and "Available by" in cited
    # A link that leaves the portal is on its public address, never the request's Host.
    assert "testserver" not in cited and "/results?benchmark=gpt-oss-120b" in cited
