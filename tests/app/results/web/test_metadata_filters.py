"""Filters on what the results disclose (issue 49, item 5): precision, accelerator memory,
interconnect, serving software, nodes and the publication date, parsed by the one results
query parser, their values listed from the record."""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.cohorts import Cohort
from tests.support.refusals import refused_alike

LLAMA = {"benchmark": "llama3_1-8b", "limit": "all", "superseded": "include"}


def results(client: TestClient, **params: str) -> dict[str, Any]:
    response = client.get("/api/v1/results", params={**LLAMA, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_each_facet_lists_the_values_the_record_holds(client: TestClient) -> None:
    facets = results(client)["facets"]
    assert set(facets) == {
        "precision",
        "accelerator_memory",
        "interconnect",
        "serving_software",
        "nodes",
    }
    # The demo's systems disclose different stacks (app/demo/load.py).
    assert facets["precision"] == ["bf16", "fp8"]
    assert {"141 GB", "288 GB", "180 GB", "186 GB"} <= set(facets["accelerator_memory"])
    assert {"NVLink", "NVLink 5", "Infinity Fabric"} <= set(facets["interconnect"])
    assert {"vLLM 0.11", "TensorRT-LLM 1.0", "SGLang 0.5"} <= set(facets["serving_software"])
    assert facets["nodes"] == ["1"]


@pytest.mark.parametrize(
    ("params", "systems"),
    [
        ({"precision": "fp8"}, {"Cumulus B200 x8", "Ember GB200 x4"}),
        ({"precision": "bf16"}, {"Acme H200 x8", "Borealis MI355X x8"}),
        ({"interconnect": "NVLink 5"}, {"Cumulus B200 x8", "Ember GB200 x4"}),
        ({"accelerator_memory": "288 GB"}, {"Borealis MI355X x8"}),
        ({"serving_software": "SGLang 0.5"}, {"Ember GB200 x4"}),
        ({"precision": "fp8", "serving_software": "TensorRT-LLM 1.0"}, {"Cumulus B200 x8"}),
        (
            {"nodes": "1"},
            {"Acme H200 x8", "Borealis MI355X x8", "Cumulus B200 x8", "Ember GB200 x4"},
        ),
    ],
)
def test_a_facet_keeps_the_results_that_disclose_it(
    client: TestClient, params: dict[str, str], systems: set[str]
) -> None:
    assert {c["system"] for c in results(client, **params)["curves"]} == systems


def test_the_publication_dates_keep_the_cohorts_between_them(client: TestClient) -> None:
    every = results(client)["curves"]
    days = sorted({Cohort.parse(c["published_in"]).date for c in every})  # type: ignore[union-attr]
    assert len(days) >= 2, "the demo's results were first published in several cohorts"
    middle = days[1]
    later = results(client, published_from=middle.isoformat())["curves"]
    earlier = results(client, published_to=(middle - dt.timedelta(days=1)).isoformat())["curves"]
    assert {c["id"] for c in later} | {c["id"] for c in earlier} == {c["id"] for c in every}
    assert all(Cohort.parse(c["published_in"]).date >= middle for c in later)  # type: ignore[union-attr]
    assert all(Cohort.parse(c["published_in"]).date < middle for c in earlier)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        (
            {"precision": "fp3"},
            "precision",
            "no llama3_1-8b result discloses precision 'fp3' (bf16, fp8)",
        ),
        ({"nodes": "two"}, "nodes", "no llama3_1-8b result discloses nodes 'two' (1)"),
        (
            {"published_from": "yesterday"},
            "published_from",
            "published_from must be a date, YYYY-MM-DD",
        ),
        (
            {"published_from": "2026-12-01", "published_to": "2026-11-01"},
            "published_to",
            "published_to (2026-11-01) is before published_from",
        ),
    ],
)
def test_a_value_the_record_does_not_hold_is_refused_with_the_ones_it_does(
    client: TestClient, params: dict[str, str], field: str, message: str
) -> None:
    refused_alike(client, "/api/v1/results", "/results", {**LLAMA, **params}, field, message)


def test_the_form_offers_the_listed_values(client: TestClient) -> None:
    page = html.unescape(client.get("/results", params={**LLAMA, "precision": "fp8"}).text)
    select = page.split('id="f-precision"')[1].split("</select>")[0]
    assert "<option selected>fp8</option>" in select and "<option >bf16</option>" in select
    assert 'id="f-published-from"' in page
