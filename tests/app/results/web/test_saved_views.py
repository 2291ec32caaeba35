"""Saved views (issue 49, item 6): a signed-in user names a view of the results and keeps
it; anyone given its link opens it; only its owner deletes it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import bearer

ASKED = "benchmark=llama3_1-8b&x=ttft&precision=fp8&junk=1&cost_as=tokens_per_usd"


def test_a_view_is_kept_opened_by_anyone_and_deleted_by_its_owner(
    demo_portal: tuple[TestClient, dict[str, str]],
) -> None:
    client, tokens = demo_portal
    owner, other = bearer(tokens["submitter"]), bearer(tokens["rival"])
    made = client.post("/api/v1/saved-views", json={"name": "  fp8  on TTFT ", "query": ASKED},
                       headers=owner)  # fmt: skip
    assert made.status_code == 201, made.text
    view = made.json()
    # Only the explorer's own parameters are kept, in one order; the name is tidied.
    assert view["name"] == "fp8 on TTFT"
    assert view["query"] == "benchmark=llama3_1-8b&precision=fp8&x=ttft"
    assert view["link"] == f"/views/{view['id']}"
    listed = client.get("/api/v1/saved-views", headers=owner).json()["data"]
    assert [v["id"] for v in listed] == [view["id"]]
    assert client.get("/api/v1/saved-views", headers=other).json()["data"] == []
    # Anyone opens it, signed in or not: the explorer at the view's address.
    client.cookies.clear()
    opened = client.get(view["link"], follow_redirects=False)
    assert opened.status_code == 303
    assert opened.headers["location"] == f"/results?{view['query']}"
    page = client.get(opened.headers["location"])
    assert page.status_code == 200 and '<option value="ttft" selected>' in page.text
    assert client.get(f"/api/v1/saved-views/{view['id']}").json()["name"] == "fp8 on TTFT"
    # Only its owner deletes it.
    refused = client.delete(f"/api/v1/saved-views/{view['id']}", headers=other)
    assert refused.status_code == 403 and "only the one who saved" in refused.text
    assert client.delete(f"/api/v1/saved-views/{view['id']}", headers=owner).status_code == 204
    assert client.get(view["link"], follow_redirects=False).status_code == 404
    assert client.get("/api/v1/saved-views", headers=owner).json()["data"] == []


@pytest.mark.parametrize(
    ("body", "status", "field", "message"),
    [
        ({"name": " ", "query": ASKED}, 422, "name", "a view needs a name"),
        ({"name": "x" * 101, "query": ASKED}, 422, "name", "at most 100 characters"),
        ({"name": "a\u0007b", "query": ASKED}, 422, "name", "no control characters"),
        ({"name": "same", "query": "x=ttft&y=ttft"}, 422, "y", "x and y both show ttft"),
        ({"name": "bad", "query": "precision=fp3&benchmark=llama3_1-8b"}, 422, "precision",
         "discloses precision 'fp3'"),
    ],
)  # fmt: skip
def test_a_view_that_cannot_be_kept_is_refused_with_why(
    demo_portal: tuple[TestClient, dict[str, str]],
    body: dict[str, str],
    status: int,
    field: str,
    message: str,
) -> None:
    client, tokens = demo_portal
    response = client.post("/api/v1/saved-views", json=body, headers=bearer(tokens["submitter"]))
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error.get("field") == field and message in error["message"]
    assert (
        client.get("/api/v1/saved-views", headers=bearer(tokens["submitter"])).json()["data"] == []
    )


def test_saving_a_view_needs_an_account(demo_portal: tuple[TestClient, dict[str, str]]) -> None:
    client, _tokens = demo_portal
    response = client.post("/api/v1/saved-views", json={"name": "mine", "query": ASKED})
    assert response.status_code == 401
    page = client.get("/results", params={"benchmark": "llama3_1-8b"}).text
    assert 'id="save-view-form"' not in page and "Sign in</a> to name views" in page
