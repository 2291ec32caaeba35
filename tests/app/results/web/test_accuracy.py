"""Accuracy at speed: each published point's accuracy as the gate compared it, against
its throughput, on the shared demo (Fjord's accuracy slips as it is pushed; Dune's
bundle was made by an older client)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

LLAMA = {"benchmark": "llama3_1-8b"}


# Fjord is the demo's RDI system: shown only when RDI results are asked for (§11.10).
EVERY_STATUS = [("availability", a) for a in ("Available", "Preview", "RDI")]


def _accuracy(client: TestClient, *statuses: str, **params: str) -> dict[str, Any]:
    answer = client.get(
        "/api/v1/accuracy",
        params=[*params.items(), *(("status", s) for s in statuses), *EVERY_STATUS],
    )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_each_point_with_an_accuracy_run_is_listed_with_what_the_gate_compared(
    client: TestClient,
) -> None:
    view = _accuracy(client, **LLAMA)
    assert view["metrics"] == ["rouge1", "rouge2", "rougel", "rougelsum", "gen_len"]
    assert view["metric"] == "rouge1"
    assert view["threshold"]["lower"] == pytest.approx(38.7792 * 0.99)
    results = client.get(
        "/api/v1/results", params=[*LLAMA.items(), ("limit", "all"), *EVERY_STATUS]
    ).json()
    with_runs = {
        (c["submission"], p["dir"])
        for c in results["curves"]
        for p in c["points"]
        if p.get("accuracy") == "passed"
    }
    # Exactly the points the explorer shows that carry their own accuracy run.
    assert {(r["submission"], r["point"]) for r in view["rows"]} == with_runs
    for row in view["rows"]:
        assert [d["dataset_name"] for d in row["datasets"]] == ["cnn_dailymail", "performance"]
        assert row["meets"] and row["value"] == next(
            g["value"] for g in row["gate"] if g["metric"] == "rouge1"
        )
    # Fjord loses accuracy as it is pushed; the others hold it.
    fjord = sorted(
        (r["concurrency"], r["value"]) for r in view["rows"] if r["system"].startswith("Fjord")
    )
    assert len(fjord) >= 3 and [v for _, v in fjord] == sorted((v for _, v in fjord), reverse=True)
    assert fjord[0][1] > fjord[-1][1] >= view["threshold"]["lower"]


def test_a_metric_with_a_range_and_a_metric_that_is_not_there(client: TestClient) -> None:
    gen_len = _accuracy(client, **LLAMA, metric="gen_len")
    assert gen_len["threshold"]["upper"] == pytest.approx(8167644 * 1.1)
    assert all(r["value"] == pytest.approx(r["value"]) and r["meets"] for r in gen_len["rows"])
    refused = client.get("/api/v1/accuracy", params={**LLAMA, "metric": "bleu"})
    assert refused.status_code == 422
    assert "'bleu' is not a metric of these points (rouge1, rouge2" in refused.text
    page = client.get("/accuracy", params={**LLAMA, "metric": "bleu"})
    assert page.status_code == 422 and 'data-field="metric"' in page.text
    assert 'value="llama3_1-8b" selected' in page.text  # the other inputs stay


def test_the_sla_marks_points_outside_it_and_the_page_shows_the_apis_rows(
    client: TestClient,
) -> None:
    params = {**LLAMA, "tps_per_user_min": "60"}
    view = _accuracy(client, **params)
    assert {r["admissible"] for r in view["rows"]} == {True, False}
    page = client.get("/accuracy", params=[*params.items(), *EVERY_STATUS])
    assert page.status_code == 200
    shown = re.findall(r'<tr data-submission="([0-9a-f]+)" data-point="(r\d+)"', page.text)
    assert shown == [(r["submission"], r["point"]) for r in view["rows"]]
    assert page.text.count('class="outside-sla"') == sum(not r["admissible"] for r in view["rows"])


def test_an_older_clients_bundle_has_accuracy_but_none_of_the_newer_fields(
    client: TestClient,
) -> None:
    # Dune's result is unverified: shown when asked for, as in the explorer.
    gpt = _accuracy(client, "verified", "provisional", "unverified", benchmark="gpt-oss-120b")
    assert gpt["metrics"] == ["exact_match"]
    systems = {r["system"].split()[0] for r in gpt["rows"]}
    assert {"Acme", "Dune"} <= systems
    for row in gpt["rows"]:
        names = [d["dataset_name"] for d in row["datasets"]]
        assert names == ["aime25", "gpqa", "livecodebench", "math500", "performance"]
    dune = next(r for r in gpt["rows"] if r["system"].startswith("Dune"))
    acme = next(r for r in gpt["rows"] if r["system"].startswith("Acme"))
    older = client.get(f"/api/v1/submissions/{dune['submission']}").json()
    newer = client.get(f"/api/v1/submissions/{acme['submission']}").json()
    older_points = [p for c in older["curves"] for p in c["points"]]
    newer_points = [p for c in newer["curves"] for p in c["points"]]
    # What the older client did not write is left out of its points, as published.
    assert older_points and not any("summary_fields" in p for p in older_points)
    assert not any("finish_reasons" in p for p in older_points)
    for point in newer_points:
        fields = point["summary_fields"]
        assert fields["run_config"]["load_pattern"]["target_concurrency"] == point["concurrency"]
        assert fields["input_sequence_lengths"]["avg"] > 0
        assert fields["early_stopping_percentiles"]["tpot_ms"]["90"] >= point["tpot_p90_ms"]


def test_the_submission_page_shows_each_points_fields_by_the_clients_names(
    client: TestClient,
) -> None:
    view = _accuracy(client, **LLAMA)
    page = client.get(view["rows"][0]["link"]).text
    names = ("input_sequence_lengths", "early_stopping_percentiles", "run_config",
             "load_pattern.target_concurrency", "accuracy_scores", "cnn_dailymail",
             "e2e_avg_interactivity")  # fmt: skip
    for name in names:
        assert name in page, name
    assert "gate compared" in page and ": meets" in page
    # The checker's end-to-end interactivity, beside each point's fields.
    assert re.search(r'<td class="num interactivity">[\d,]+\.\d\d</td>', page)
