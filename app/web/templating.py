"""The Jinja2 environment every page renders with."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

import pydantic_core
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from markupsafe import Markup

from app.bundled import bundled_dir
from app.core.accuracy import score_text
from app.core.authorization import invitable_roles
from app.core.figures import figure, figure_formats_json
from app.core.regions import clause_text, region_name
from app.core.run_summary import flat_config
from app.core.times import as_utc, local_text

TEMPLATES_DIR = bundled_dir("templates")
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
# csrf_input, the forms' CSRF field, is the accounts feature's: app.main adds it.


def _page_json(value: Any, **_: Any) -> str:
    """What a page embeds for its script (``|tojson``): read models written exactly as the
    API writes them."""
    return pydantic_core.to_json(value).decode()


templates.env.policies["json.dumps_function"] = _page_json
templates.env.policies["json.dumps_kwargs"] = {}


def static_url(context: dict[str, Any], path: str) -> str:
    """A static file's link, carrying its content digest (app/web/assets.py)."""
    url: str = context["request"].app.state.assets.url(path)
    return url


templates.env.globals["static_url"] = pass_context(static_url)


@pass_context
def path_for(context: dict[str, Any], name: str, /, **params: object) -> str:
    """The path of the route called *name* (its function's name): pages link by name, so
    a route that moves takes its links with it. Each parameter is escaped as one path
    segment; a query string follows in the template."""
    escaped = {key: quote(str(value), safe="") for key, value in params.items()}
    app = context["request"].app
    # Finding a route walks the whole table: a page of links asked it dozens of times.
    known = _paths(app.state)
    key = (name, tuple(sorted(escaped.items())))
    path = known.get(key)
    if path is None:
        if len(known) > _PATHS_KEPT:
            known.clear()
        path = known[key] = str(app.url_path_for(name, **escaped))
    return path


_PATHS_KEPT = 4096
Paths = dict[tuple[str, tuple[tuple[str, str], ...]], str]


def _paths(state: Any) -> Paths:
    """The paths found so far by the app whose *state* this is."""
    paths: Paths | None = getattr(state, "paths", None)
    if paths is None:
        paths = state.paths = {}
    return paths


templates.env.globals["path_for"] = path_for


@pass_context
def when(context: dict[str, Any], value: dt.datetime | str | None) -> Markup | str:
    """Every time on every page: in the cohorts' zone with its abbreviation, UTC on hover."""
    if value is None or value == "":
        return "—"
    moment = as_utc(dt.datetime.fromisoformat(value) if isinstance(value, str) else value)
    zone = context["request"].app.state.settings.cohort_timezone
    return Markup('<time datetime="{}" title="{} UTC">{}</time>').format(
        moment.isoformat(timespec="seconds"), f"{moment:%Y-%m-%d %H:%M}", local_text(moment, zone)
    )


templates.env.filters["when"] = when


templates.env.filters["region_name"] = region_name
templates.env.filters["clause"] = clause_text
# What the short words in the points tables mean, shown on hover where they appear.
templates.env.globals["TERMS"] = {
    "dedicated": "A dedicated Offline run: every sample issued at once for the system's "
    "throughput ceiling; it has no per-user latency and counts toward no region (rules §5.7.1).",
    "elected": "The highest-concurrency point, elected as the curve's Offline result "
    "(rules §5.7.2); it reports its latencies as usual.",
    "carried": "No accuracy run at this point: the accuracy of the curve's mandatory points "
    "carries over to it (rules §4.3).",
    "passed": "This point's own accuracy run passed the gate (rules §4.3).",
    "failed": "This point's own accuracy run failed the gate (rules §4.3).",
    "margin": "Up to 10% above C_max: a valid point that covers no required region (rules §5.4).",
}
templates.env.filters["flat_config"] = flat_config
templates.env.filters["score"] = score_text
templates.env.filters["figure"] = figure
templates.env.globals["figure_formats_json"] = figure_formats_json
# Whether the header offers the invitations page: the one rule of who may invite.
templates.env.globals["invitable_roles"] = invitable_roles
