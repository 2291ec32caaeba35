"""Static files: linked by content digest, cached for a year, sent compressed; the API
documentation viewers from local files."""

from __future__ import annotations

import gzip
import http.client
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import STATIC_DIR, create_app
from app.settings import Settings
from app.web.assets import StaticAssets
from tests.support.fakes import RecordingQueue
from tests.support.http import served


@pytest.fixture
def client(settings: Settings, database: Database) -> Iterator[TestClient]:
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c


def _linked(html: str, name: str) -> str:
    found = re.search(rf'(/static/{re.escape(name)}\?v=[0-9a-f]+)"', html)
    assert found, f"{name} is not linked with a digest"
    return found.group(1)


def test_plotly_is_linked_by_digest_cached_for_good_and_sent_compressed(
    client: TestClient,
) -> None:
    link = _linked(client.get("/results").text, "plotly-basic-3.1.0.min.js")
    raw = (STATIC_DIR / "plotly-basic-3.1.0.min.js").read_bytes()
    # httpx would decode gzip for us: ask for the bytes as they travel.
    with client.stream("GET", link, headers={"accept-encoding": "gzip"}) as sent:
        wire = b"".join(sent.iter_raw())
        assert sent.headers["content-encoding"] == "gzip"
        assert "immutable" in sent.headers["cache-control"]
        etag = sent.headers["etag"]
    assert gzip.decompress(wire) == raw and len(wire) < len(raw) / 2
    again = client.get(link, headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""


def test_a_stale_or_missing_digest_is_revalidated_not_kept(client: TestClient) -> None:
    plain = client.get("/static/app.css")
    assert plain.status_code == 200 and plain.headers["cache-control"] == "no-cache"
    old = client.get("/static/app.css?v=0000")
    assert old.headers["cache-control"] == "no-cache" and old.text == plain.text
    assert client.get("/static/../pyproject.toml").status_code == 404
    assert client.get("/static/%2e%2e/pyproject.toml").status_code == 404
    assert client.get("/static/nope.js").status_code == 404


def test_pages_and_json_are_compressed_on_the_way(client: TestClient) -> None:
    with client.stream("GET", "/openapi.json", headers={"accept-encoding": "gzip"}) as sent:
        assert sent.headers["content-encoding"] == "gzip"


def test_api_docs_load_their_viewers_from_this_site(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "<script>" not in page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert client.get(_linked(page.text, f"vendor/api-docs/{asset}")).status_code == 200
    assert client.get("/redoc", follow_redirects=False).headers["location"] == "/docs"


def test_pages_name_their_icon_so_no_browser_asks_for_a_missing_favicon(
    client: TestClient,
) -> None:
    icon = _linked(client.get("/results").text, "favicon.svg")
    served = client.get(icon)
    assert served.status_code == 200 and served.headers["content-type"] == "image/svg+xml"


def test_another_spelling_of_a_file_is_404_and_never_cached_again(
    settings: Settings, database: Database
) -> None:
    """Issue 44: 53 spellings of the Plotly bundle's path grew the web process by 330 MB,
    each cached anew with its gzip copy. Sent as raw HTTP: clients remove dot segments
    themselves; an attacker does not."""
    app = create_app(settings, queue=RecordingQueue())
    name = "plotly-basic-3.1.0.min.js"

    def status(conn: http.client.HTTPConnection, path: str) -> int:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        answer = conn.getresponse()
        answer.read()
        return answer.status

    with served(app, settings) as url:
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        assert status(conn, f"/static/{name}") == 200
        assert status(conn, "/static/nope.js") == 404  # the error page's own files, once
        held = app.state.assets.cached_bytes
        for depth in range(1, 54):
            assert status(conn, "/static/" + "./" * depth + name) == 404
        for alias in (f"/static//{name}", f"/static/vendor/../{name}", "/static/results/./x.js"):
            assert status(conn, alias) == 404, alias
        assert app.state.assets.cached_bytes == held
        conn.close()


def test_the_cache_is_bounded_least_recently_used_first_out(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"{i}.js").write_text(f"// file {i}\n" + "x" * 1000)
    assets = StaticAssets({"": tmp_path}, cache_bytes=3000)
    for i in range(5):
        asset = assets.get(f"{i}.js")
        assert asset is not None and asset.body.startswith(f"// file {i}".encode())
    assert assets.cached_bytes <= 3000
