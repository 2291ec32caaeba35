"""The review policy page (rules §15): the values in force, the policies that were, and
any one of them by the digest a decision or a version of the record names. Public, as the
API's answers are: which values applied is part of the record."""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from app.accounts.web.security import page_router
from app.review.services.policy_record import (
    kept_policies,
    kept_policy_view,
    policy_in_force_view,
)
from app.web.deps import SessionDep, SettingsDep
from app.web.templating import templates

router = page_router()

Digest = Annotated[
    str | None,
    Query(pattern="^[0-9a-f]{64}$", description="a digest a decision or a version names"),
]


@router.get("/review/policy", response_class=HTMLResponse)
def policy_page(
    request: Request, session: SessionDep, settings: SettingsDep, digest: Digest = None
) -> Response:
    """The policy in force, or the one *digest* names, with every policy that was."""
    shown = (
        policy_in_force_view(session, settings)
        if digest is None
        else kept_policy_view(session, settings, digest)
    )
    if shown is None:
        raise HTTPException(404, detail=f"no review policy with digest {digest!r}")
    return templates.TemplateResponse(
        request,
        "review/policy.html",
        {"policy": shown, "kept": kept_policies(session, settings)},
    )
