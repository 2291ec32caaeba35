"""Price presets on the demo's results, plan and page: each system at its accelerator
model's preset price, labelled as a preset (source and date), never an MLPerf figure."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.results.domain.presets import price_presets
from app.settings import Settings
from tests.support.fakes import RecordingQueue

SLA = {"benchmark": "llama3_1-8b", "ttft_p90_max_ms": "500", "tps_per_user_min": "30"}
DEMO = price_presets()["demo-list-prices"]


def _ok(client: TestClient, path: str, **params: str) -> dict:  # type: ignore[type-arg]
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    body: dict = response.json()  # type: ignore[type-arg]
    return body


def test_the_presets_are_listed_with_their_source_and_date(client: TestClient) -> None:
    [listed] = _ok(client, "/api/v1/price-presets")["data"]
    assert listed["id"] == DEMO.id and listed["as_of"] == "2026-11-01"
    assert listed["label"] == "preset: Demo list prices, as of 2026-11-01"
    assert listed["usd_per_accelerator_hour"]["NVIDIA H200"] == 3.5
    assert "replace them" in listed["source"]


def test_each_system_costs_its_own_accelerators_price(client: TestClient) -> None:
    body = _ok(client, "/api/v1/results", **SLA, normalize="usd_per_mtok",
               price_preset=DEMO.id)  # fmt: skip
    assert body["price"]["preset"]["id"] == DEMO.id and body["derived"]
    curves = {c["id"]: c for c in body["curves"]}
    models = set()
    for row in body["ranking"]:
        curve = curves[row["curve"]]
        rate = DEMO.price_of(curve["accelerator_model"])
        assert rate is not None
        models.add(curve["accelerator_model"])
        hourly = rate * row["accelerator_count"]
        assert row["usd_per_million_tokens"] == pytest.approx(
            hourly / (row["system_tps"] * 3600 / 1e6), rel=1e-3
        )
        assert row["tokens_per_usd"] == pytest.approx(1e6 / row["usd_per_million_tokens"], 1e-3)
    assert len(models) >= 2  # the systems differ in price, not only in throughput
    costs = [r["usd_per_million_tokens"] for r in body["ranking"]]
    assert costs == sorted(costs)


def test_the_plan_prices_each_system_from_the_preset(client: TestClient) -> None:
    plan = _ok(client, "/api/v1/plan", **SLA, users="2000", price_preset=DEMO.id)
    assert plan["ranked_by"] == "usd_per_hour" and plan["price"]["preset"]["id"] == DEMO.id
    rows = plan["rows"]
    assert rows and [r["usd_per_hour"] for r in rows] == sorted(r["usd_per_hour"] for r in rows)
    for row in rows:
        rate = DEMO.price_of(row["accelerator_model"])
        assert rate is not None and row["systems_needed"] == math.ceil(2000 / row["concurrency"])
        assert row["usd_per_hour"] == pytest.approx(row["accelerators"] * rate, abs=0.01)


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"price_preset": "cheapest"}, "price_preset", "must be one of demo-list-prices"),
        ({"price_preset": DEMO.id, "price_per_accelerator_hour": "2"}, "price_preset",
         "give one price, not price_per_accelerator_hour and price_preset"),
    ],
)  # fmt: skip
def test_an_unknown_preset_or_two_prices_are_refused_by_name(
    client: TestClient, params: dict[str, str], field: str, words: str
) -> None:
    for path in ("/api/v1/results", "/api/v1/plan"):
        answer = client.get(path, params={**params, "users": "10"})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["field"] == field and words in error["message"]


def test_the_export_and_the_pages_say_the_figures_are_a_presets(client: TestClient) -> None:
    params = {**SLA, "price_preset": DEMO.id}
    exported = client.get("/api/v1/results", params={**params, "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert rows and all(r["price_preset"] == DEMO.label for r in rows)
    assert all(float(r["tokens_per_usd"]) > 0 for r in rows)
    assert "price_preset-demo-list-prices" in exported.headers["content-disposition"]

    page = client.get("/results", params={**params, "cost_as": "tokens_per_usd"}).text
    assert 'id="preset-note"' in page and DEMO.label in page and "not a quote" in page
    assert "tokens per $ (derived)" in page and "$/M tokens (derived)" not in page
    plan = client.get("/plan", params={**params, "users": "2000"}).text
    assert 'id="preset-note"' in plan and f'<option value="{DEMO.id}" selected' in plan


@pytest.fixture
def one_model_client(demo_env: tuple[Settings, Database], tmp_path: Path) -> Iterator[TestClient]:
    """The operator's own list, pricing one model only."""
    presets = tmp_path / "presets.toml"
    presets.write_text(
        '[h200-only]\ntitle = "H200 only"\nsource = "our quote"\nas_of = 2026-12-01\n'
        '[h200-only.usd_per_accelerator_hour]\n"NVIDIA H200" = 4.0\n'
    )
    settings, _database = demo_env
    own = settings.model_copy(update={"price_presets_file": presets})
    with TestClient(create_app(own, queue=RecordingQueue())) as c:
        yield c


def test_a_system_the_list_does_not_price_has_no_cost_and_ranks_last(
    one_model_client: TestClient,
) -> None:
    plan = _ok(one_model_client, "/api/v1/plan", **SLA, users="2000", price_preset="h200-only")
    priced = [r for r in plan["rows"] if r["usd_per_hour"] is not None]
    unpriced = [r for r in plan["rows"] if r["usd_per_hour"] is None]
    assert priced and unpriced and plan["rows"] == priced + unpriced
    assert {r["accelerator_model"] for r in priced} == {"NVIDIA H200"}
    refused = one_model_client.get("/api/v1/results", params={"price_preset": DEMO.id})
    assert "must be one of h200-only" in refused.json()["error"]["message"]


def test_a_broken_presets_file_stops_the_portal_saying_where(
    demo_env: tuple[Settings, Database], tmp_path: Path
) -> None:
    broken = tmp_path / "presets.toml"
    broken.write_text("[Cheap]\n")
    settings, _database = demo_env
    with pytest.raises(ValueError, match=r"presets.toml \[Cheap\]: an id is"):
        create_app(settings.model_copy(update={"price_presets_file": broken}))
