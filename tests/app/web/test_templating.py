"""Pages link by route name (``path_for``): every name a template uses is a route, with
the parameters that route takes, and no template writes a path of the portal by hand."""

from __future__ import annotations

import re
import string

from starlette.requests import Request
from starlette.routing import NoMatchFound

from app.main import create_app
from app.settings import Settings
from app.web.templating import TEMPLATES_DIR, path_for
from tests.support.fakes import RecordingQueue

LINK = re.compile(r"path_for\('(\w+)'((?:, \w+=[^,)]+)*)\)")
WRITTEN_PATH = re.compile(r'(?:href|action|src|data-src)="/')


def test_every_route_a_template_names_exists_with_its_parameters(settings: Settings) -> None:
    app = create_app(settings, queue=RecordingQueue())
    named = 0
    for template in TEMPLATES_DIR.rglob("*.html"):
        for name, args in LINK.findall(template.read_text()):
            params = {p.split("=")[0].strip(): "x" for p in args.split(",") if p.strip()}
            try:
                path = app.url_path_for(name, **params)
            except NoMatchFound:  # pragma: no cover - the failure names the template
                raise AssertionError(f"{template.name}: no route {name!r} with {params}") from None
            assert str(path).startswith("/") and set(str(path)) <= set(string.printable)
            named += 1
    assert named > 80  # the header, every page's forms and links


def test_no_template_writes_a_path_of_its_own() -> None:
    written = {
        t.name: WRITTEN_PATH.findall(t.read_text())
        for t in TEMPLATES_DIR.rglob("*.html")
        if WRITTEN_PATH.search(t.read_text())
    }
    assert written == {}, "link by name: path_for('route', ...)"


def test_a_parameter_is_one_escaped_segment(settings: Settings) -> None:
    app = create_app(settings, queue=RecordingQueue())
    request = Request({"type": "http", "app": app, "headers": [], "method": "GET"})
    assert path_for({"request": request}, "submission_page", public_id="a b/../c?d") == (
        "/submissions/a%20b%2F..%2Fc%3Fd"
    )
