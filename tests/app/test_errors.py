"""A browser gets an HTML page for every error; the API keeps JSON."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue

HTML = {"accept": "text/html,application/xhtml+xml"}


@pytest.fixture
def browser(settings: Settings, database: Database) -> Iterator[TestClient]:
    create_accounts(database)
    with TestClient(create_app(settings, queue=RecordingQueue()), headers=HTML) as c:
        yield c


def test_an_unknown_address_is_an_html_page_with_the_way_back(browser: TestClient) -> None:
    page = browser.get("/no/such/page")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "Not found" in page.text and "There is no page at /no/such/page." in page.text
    assert 'href="/results"' in page.text  # the site's header and a way on
    api = browser.get("/api/v1/no-such-thing")
    assert api.status_code == 404 and api.headers["content-type"] == "application/json"


def test_a_refused_lookup_says_why_on_an_html_page(browser: TestClient) -> None:
    page = browser.get("/submissions/sub-nobody-has")
    assert page.status_code == 404 and "no submission with id" in page.text
    assert "<h1" in page.text and '{"detail"' not in page.text


def test_a_form_address_reloaded_goes_to_its_page(browser: TestClient) -> None:
    """After a refused form post the address bar holds the form's action; reloading it as
    a GET lands on the page the form belongs to, not on a 405."""
    moved = browser.get("/review/publish", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == "/review"
    moved = browser.get("/submissions/sub-x/reproductions", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == "/submissions/sub-x"
    moved = browser.get("/inbox/read", follow_redirects=False)
    assert moved.headers["location"] == "/inbox"
    # The API answers a wrong method with its JSON, as before.
    assert browser.post("/api/v1/cohorts").status_code == 405


def test_bad_query_values_on_a_page_are_an_html_page(browser: TestClient) -> None:
    page = browser.get("/submissions/x", params={"duplicate": "many"})
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert "duplicate" in page.text


def test_every_api_error_has_the_one_body(browser: TestClient) -> None:
    """Not found, wrong method, bad parameters, no credentials: `{"error": {code, message}}`
    like every refusal of a service, never FastAPI's `{"detail": …}`."""
    api = {"accept": "application/json"}
    missing = browser.get("/api/v1/no-such-thing", headers=api)
    assert missing.json() == {
        "error": {"code": "not-found", "message": "nothing at /api/v1/no-such-thing"}
    }
    wrong = browser.post("/api/v1/cohorts", headers=api)
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method-not-allowed"
    assert "GET" in wrong.headers["allow"]
    bad = browser.get("/api/v1/submissions", params={"limit": 0}, headers=api)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid-request"
    assert bad.json()["error"]["problems"][0]["field"] == "limit"
    anonymous = browser.get("/api/v1/inbox", headers=api)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthorized"
    assert anonymous.headers["www-authenticate"] == "Bearer"


def test_the_openapi_document_describes_the_error_body(browser: TestClient) -> None:
    spec = browser.get("/openapi.json").json()
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    refused = spec["paths"]["/api/v1/results"]["get"]["responses"]["422"]
    assert refused["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")


def test_a_server_error_carries_the_security_headers_too(
    settings: Settings, database: Database
) -> None:
    """The last-resort 500 is answered outside the other middleware: it sets them itself."""
    app = create_app(settings, queue=RecordingQueue())

    def boom() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/boom", boom)
    app.add_api_route("/api/v1/boom", boom)
    with TestClient(app, raise_server_exceptions=False) as client:
        for path, kind in (("/boom", "text/html"), ("/api/v1/boom", "application/json")):
            answer = client.get(path, headers={"Accept": kind})
            assert answer.status_code == 500 and answer.headers["content-type"].startswith(kind)
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "same-origin"
            assert "a bug" not in answer.text
