"""The reports table (issue 49, item 4): every result of the explorer's view, columns
chosen, sorted, and picked for the chart (`limit=0` with `curve=`)."""

from __future__ import annotations

import html
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.results.services.reports import COLUMNS, DEFAULT_COLUMNS
from tests.support.refusals import refused_alike

LLAMA = {"benchmark": "llama3_1-8b"}


def table(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/api/v1/reports", params={**LLAMA, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_every_result_of_the_view_is_a_row_with_the_explorers_figures(
    client: TestClient,
) -> None:
    body = table(client, ttft_p90_max_ms="500")
    explorer = client.get(
        "/api/v1/results", params={**LLAMA, "limit": "all", "ttft_p90_max_ms": "500"}
    ).json()
    assert body["total"] == explorer["curves_total"] == len(body["rows"])
    assert body["columns"] == list(DEFAULT_COLUMNS) and set(body["all_columns"]) == set(COLUMNS)
    ranked = {r["curve"]: r["throughput"] for r in explorer["ranking"]}
    for row in body["rows"]:
        curve = next(c for c in explorer["curves"] if c["id"] == row["curve"])
        values = row["values"]
        assert row["ref"] == (curve["result_id"] or str(curve["id"]))
        assert values["best_throughput"] == ranked.get(curve["id"])  # the ranking's figure
        online = [p for p in curve["points"] if p["offline"] != "dedicated"]
        assert values["peak_throughput"] == max(p["system_tps"] for p in online)
        assert values["lowest_ttft_ms"] == min(p["ttft_p90_ms"] for p in online)
        assert values["points"] == len(curve["points"])
    # The default order is the ranking's: best in the SLA first, the unranked last.
    order = [r["values"]["best_throughput"] for r in body["rows"]]
    present = [v for v in order if v is not None]
    assert present == sorted(present, reverse=True) and order[: len(present)] == present


@pytest.mark.parametrize(
    "column", ["system", "accelerator_count", "lowest_ttft_ms", "published_in"]
)
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_any_column_sorts_either_way(client: TestClient, column: str, order: str) -> None:
    rows = table(client, sort=column, order=order)["rows"]
    values = [r["values"][column] for r in rows if r["values"][column] is not None]
    keyed = [v.lower() if isinstance(v, str) else v for v in values]
    assert keyed == sorted(keyed, reverse=order == "desc")


def test_the_columns_asked_for_are_shown_in_their_order(client: TestClient) -> None:
    body = table(client, columns="tags,system", sort="system")
    assert body["columns"] == ["tags", "system"]
    page = client.get("/reports", params={**LLAMA, "columns": ["tags", "system"]}).text
    heads = [h.split('"')[0] for h in page.split('data-column="')[1:]]
    assert heads == ["tags", "system"]


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"columns": "system,price"}, "columns", "unknown column 'price'"),
        ({"sort": "speed"}, "sort", "sort must be one of"),
        ({"order": "up"}, "order", "order must be asc or desc, not 'up'"),
        ({"start": "0"}, "start", "start must be from 1 to"),
        ({"start": "x"}, "start", "start must be a whole number from 1, not 'x'"),
        ({"status": "bogus"}, "status", "unknown status 'bogus'"),  # the explorer's parser
    ],
)
def test_a_table_choice_that_cannot_be_made_is_refused_with_why(
    client: TestClient, params: dict[str, str], field: str, message: str
) -> None:
    refused_alike(client, "/api/v1/reports", "/reports", {**LLAMA, **params}, field, message)


def test_the_picked_results_alone_are_drawn(client: TestClient) -> None:
    """ "Compare on the chart": the explorer with limit=0 draws the pinned curves only."""
    rows = table(client)["rows"]
    picked = [rows[0]["curve"], rows[-1]["curve"]]
    body = client.get(
        "/api/v1/results", params={**LLAMA, "limit": "0", "curve": [str(c) for c in picked]}
    ).json()
    assert sorted(c["id"] for c in body["curves"]) == sorted(picked)
    assert body["more_total"] == body["curves_total"] - len(
        [r for r in body["ranking"] if r["curve"] in picked]
    )


def test_the_explorer_chips_take_a_curve_off_and_lead_to_the_table(client: TestClient) -> None:
    explorer = client.get("/api/v1/results", params=LLAMA).json()
    page = html.unescape(client.get("/results", params=LLAMA).text)
    shown = [c["id"] for c in explorer["curves"]]
    assert page.count('<li class="chip" data-curve=') == len(shown)
    gone = shown[0]
    kept = "".join(f"&curve={c}" for c in shown if c != gone)
    remove = f"/results?benchmark=llama3_1-8b&limit=0{kept}"
    assert remove in page
    after = client.get(remove).text
    assert f'data-curve="{gone}"' not in after.split('id="chart-chips"')[1].split("</ul>")[0]
    assert '/reports?benchmark=llama3_1-8b" id="browse-all"' in page
