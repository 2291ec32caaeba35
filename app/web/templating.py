"""The Jinja2 environment every page renders with."""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates

from .security import csrf_input

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
templates.env.globals["csrf_input"] = csrf_input
