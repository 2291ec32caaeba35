"""The Jinja2 environment every page renders with."""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates
from jinja2 import pass_context

from .security import csrf_input

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
templates.env.globals["csrf_input"] = csrf_input


def static_url(context: dict, path: str) -> str:  # type: ignore[type-arg]
    """A static file's link, carrying its content digest (app/web/assets.py)."""
    return context["request"].app.state.assets.url(path)  # type: ignore[no-any-return]


templates.env.globals["static_url"] = pass_context(static_url)
