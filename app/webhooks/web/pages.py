"""/webhooks: a signed-in user's webhooks in the browser: subscribe, the secret, each
delivery's history, resume a paused one, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.security import act_from_form, page_router, principal_of
from app.web.deps import SessionDep, SettingsDep
from app.web.templating import templates
from app.webhooks.domain.events import EVENT_TYPES
from app.webhooks.services.subscriptions import (
    delete_subscription,
    my_subscriptions,
    resume_subscription,
    subscribe,
)

router = page_router()
EVENT_COUNT = len(EVENT_TYPES)


@router.get("/webhooks", response_class=HTMLResponse)
def webhooks_page(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    who = principal_of(request)
    if who is None:
        return RedirectResponse("/login?next=/webhooks", status_code=303)
    shown = {"subscriptions": my_subscriptions(session, settings, who), "events": EVENT_TYPES}
    return templates.TemplateResponse(request, "webhooks/webhooks.html", shown)


@router.post("/webhooks")
def subscribe_from_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    url: str = Form("", max_length=2000),
    events: Annotated[list[str] | None, Form(max_length=EVENT_COUNT)] = None,
    benchmark: str = Form("", max_length=100),
    csrf_token: str = Form(""),
) -> Response:
    asked = events or []
    return _form(request, session, csrf_token,
                 lambda who: subscribe(session, settings, who, url, asked, benchmark))  # fmt: skip


@router.post("/webhooks/{webhook_id}/resume")
def resume_from_page(
    webhook_id: str, request: Request, session: SessionDep, settings: SettingsDep,
    csrf_token: str = Form(""),
) -> Response:  # fmt: skip
    return _form(request, session, csrf_token,
                 lambda who: resume_subscription(session, settings, who, webhook_id))  # fmt: skip


@router.post("/webhooks/{webhook_id}/delete")
def delete_from_page(
    webhook_id: str, request: Request, session: SessionDep, csrf_token: str = Form("")
) -> Response:
    return _form(request, session, csrf_token,
                 lambda who: delete_subscription(session, who, webhook_id))  # fmt: skip


def _form(
    request: Request, session: Session, csrf_token: str, work: Callable[[Principal], object]
) -> Response:
    """A webhooks form, then back to the page."""
    act_from_form(request, session, csrf_token, work, "manage webhooks")
    return RedirectResponse("/webhooks", status_code=303)
