"""Compare: two to four systems' curves, points and differing disclosures."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def _top_two(client: TestClient, status: str = "verified") -> list[dict]:  # type: ignore[type-arg]
    ranking = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "status": status}
    ).json()["ranking"]
    rows: list[dict] = ranking[:2]  # type: ignore[type-arg]
    return rows


def test_two_systems_side_by_side_with_what_differs(client: TestClient) -> None:
    a, b = _top_two(client)
    body = client.get(
        "/api/v1/compare",
        params=[("submission", a["submission"]), ("submission", b["submission"])],
    ).json()
    assert body["benchmark"] == "llama3_1-8b"
    assert [s["submission"] for s in body["submissions"]] == [a["submission"], b["submission"]]
    assert [s["system"] for s in body["submissions"]] == [a["system"], b["system"]]
    # Every concurrency either ran, each with its own numbers at it.
    ran = [{p["concurrency"] for p in s["curve"]["points"] if p["offline"] != "dedicated"}
           for s in body["submissions"]]  # fmt: skip
    assert [r["concurrency"] for r in body["points"]] == sorted(ran[0] | ran[1])
    for row in body["points"]:
        for i, concurrencies in enumerate(ran):
            assert (row["system_tps"][i] is not None) == (row["concurrency"] in concurrencies)
    fields = {d["field"]: d["values"] for d in body["differences"]}
    assert fields["Accelerator"] == [a["accelerator_model"], b["accelerator_model"]]
    assert all(len(set(v)) > 1 for v in fields.values())
    assert all(len(set(d["values"])) == 1 for d in body["same"])


def test_the_page_draws_the_same_comparison(client: TestClient) -> None:
    a, b = _top_two(client)
    query = f"submission={a['submission']}&submission={b['submission']}"
    page = client.get(f"/compare?{query}")
    api = client.get(f"/api/v1/compare?{query}").json()
    assert page.status_code == 200 and 'id="curves-data"' in page.text
    assert page.text.count('<tr><th scope="row">') == len(api["differences"])
    results = client.get("/results", params={"benchmark": "llama3_1-8b"}).text
    assert 'form="compare-form"' in results and 'action="/compare"' in results


@pytest.mark.parametrize(("count", "field"), [(1, "submission"), (5, "submission")])
def test_too_few_or_too_many_are_refused(client: TestClient, count: int, field: str) -> None:
    ranking = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()["ranking"]
    ids = [r["submission"] for r in ranking][:count]
    ids += ids[:1] * (count - len(ids))
    response = client.get("/api/v1/compare", params=[("submission", i) for i in ids])
    assert response.status_code == 422 and response.json()["error"]["field"] == field
    page = client.get("/compare", params=[("submission", i) for i in ids])
    assert page.status_code == 422 and 'id="compare-error"' in page.text


def test_submissions_without_a_common_benchmark_and_unknown_ones(client: TestClient) -> None:
    def submission_of(benchmark: str, system: str) -> str:
        curves = client.get(
            "/api/v1/results",
            params=[("benchmark", benchmark), ("status", "verified"), ("status", "provisional"),
                    ("status", "unverified")],
        ).json()["curves"]  # fmt: skip
        found: str = next(c["submission"] for c in curves if c["system"] == system)
        return found

    dune = submission_of("gpt-oss-120b", "Dune Gaudi 3 x8")  # gpt-oss only
    cumulus = submission_of("kimi-k3", "Cumulus B200 x8")  # llama and kimi
    acme = submission_of("gpt-oss-120b", "Acme H200 x8")  # llama and gpt-oss
    none = client.get("/api/v1/compare", params=[("submission", dune), ("submission", cumulus)])
    assert none.status_code == 422 and "share no benchmark" in none.json()["error"]["message"]
    wrong = client.get(
        "/api/v1/compare",
        params=[("submission", acme), ("submission", cumulus), ("benchmark", "kimi-k3")],
    )
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "benchmark"
    assert "llama3_1-8b" in wrong.json()["error"]["message"]
    missing = client.get("/api/v1/compare", params=[("submission", "nope"), ("submission", "x")])
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "submission"
    assert "'nope'" in missing.json()["error"]["message"]


def test_peer_review_pending_results_are_marked_and_their_disclosures_withheld(
    client: TestClient,
) -> None:
    """As on the submission page (rules §11.9): a provisional result's disclosures are not
    the public's during review; its curve says it is preliminary."""
    verified = _top_two(client)[0]
    pending = _top_two(client, "provisional")[0]
    body = client.get(
        "/api/v1/compare",
        params=[("submission", verified["submission"]), ("submission", pending["submission"])],
    ).json()
    assert body["withheld"] == [pending["submission"]]
    assert [s["peer_review_pending"] for s in body["submissions"]] == [False, True]
    # What only its bundle discloses waits; what the record says of it is everyone's.
    rows = body["differences"] + body["same"]
    assert all(d["values"][1] is None for d in rows if d["field"] not in PUBLIC)
    assert all(d["values"][1] is not None for d in rows if d["field"] in PUBLIC)
    assert body["footnotes"] and "peer review pending" in body["footnotes"][0]
    page = client.get(
        "/compare",
        params=[("submission", verified["submission"]), ("submission", pending["submission"])],
    ).text
    assert 'id="withheld"' in page and 'id="compare-footnote"' in page


def test_the_sla_set_on_the_results_goes_along_to_compare(client: TestClient) -> None:
    """Issue 48: "Compare the selected systems" dropped the buyer's SLA."""
    import re

    sla = {"benchmark": "llama3_1-8b", "ttft_p90_max_ms": "2000", "tps_per_user_min": "30"}
    page = client.get("/results", params=sla).text
    form = page.split('<form id="compare-form"')[1].split("</form>")[0]
    carried = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form))
    assert carried == sla
    ticked = re.findall(r'name="submission" value="(\w+)" form="compare-form"[^>]*checked', page)
    compare = client.get("/compare", params={**carried, "submission": ticked}).text
    assert 'id="c-ttft" value="2000"' in compare and 'id="c-tpu" value="30"' in compare


def test_what_the_record_says_of_each_system_is_compared_while_review_withholds_the_rest(
    client: TestClient,
) -> None:
    """Issue 48: for provisional systems "What differs" was all dashes, while the ranking
    showed their accelerators, power and division."""
    pending = _top_two(client, "provisional")
    answer = client.get(
        "/api/v1/compare", params={"submission": [r["submission"] for r in pending]}
    ).json()
    assert set(answer["withheld"]) == {r["submission"] for r in pending}
    rows = {d["field"]: d["values"] for d in answer["differences"] + answer["same"]}
    for field in ("Accelerator", "Accelerators", "Provisioned power (kW)", "Division"):
        assert field in rows and all(v is not None for v in rows[field]), (field, rows)
    # Written as the ranking writes kW (8.9, not 8.88).
    assert all(
        v.count(".") == 1 and len(v.split(".")[1]) == 1 for v in rows["Provisioned power (kW)"]
    )
    # What only the bundle discloses still waits for the end of peer review.
    assert all(v is None for f, vs in rows.items() if f not in PUBLIC for v in vs)


PUBLIC = {"Accelerator", "Accelerators", "Provisioned power (kW)", "Division", "Availability"}
