"""The rule catalogue's page."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from app.accounts.web.security import (
    page_router,
)
from app.checks.services.rules import rule_catalogue
from app.web.templating import templates

router = page_router()


@router.get("/rules", response_class=HTMLResponse)
def rules_page(request: Request) -> Response:
    return templates.TemplateResponse(request, "checks/rules.html", {"catalogue": rule_catalogue()})
