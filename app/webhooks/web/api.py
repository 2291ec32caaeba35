"""/api/v1/webhooks: a signed-in user's subscriptions to the record's events (their own
alone: app.core.authorization)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from app.accounts.web.security import SignedInDep
from app.core.views import Listing
from app.web.api_errors import ErrorBody, answered, attempt
from app.web.deps import SessionDep, SettingsDep
from app.webhooks.domain.events import EVENT_TYPES
from app.webhooks.services.subscriptions import (
    SubscriptionOut,
    delete_subscription,
    my_subscriptions,
    owned,
    resume_subscription,
    subscribe,
    subscription_out,
)

router = APIRouter(prefix="/api/v1", tags=["webhooks"])
REFUSALS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody},
    403: {"model": ErrorBody},
    404: {"model": ErrorBody},
}


class SubscriptionIn(BaseModel):
    url: str = Field(max_length=2000, description="where to POST each event (http or https)")
    events: list[str] = Field(
        default_factory=list, max_length=len(EVENT_TYPES),
        description=f"any of {', '.join(EVENT_TYPES)} (none: all)",
    )  # fmt: skip
    benchmark: str | None = Field(None, max_length=100, description="only this benchmark's")


CREATING: dict[int | str, dict[str, Any]] = {
    **REFUSALS,
    409: {"model": ErrorBody},
    422: {"model": ErrorBody},
}


@router.post("/webhooks", status_code=201, response_model=SubscriptionOut, responses=CREATING)
def create_webhook(
    body: SubscriptionIn, session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> SubscriptionOut | JSONResponse:
    """Subscribe a URL to the record's events: cohorts released, results invalidated,
    withdrawn, or removed at the end of their Preview window. Each delivery is signed
    with the answer's ``secret`` as the Standard Webhooks specification says."""
    return answered(
        session, lambda: subscribe(session, settings, who, body.url, body.events, body.benchmark)
    )


@router.get("/webhooks", response_model=Listing[SubscriptionOut], responses=REFUSALS)
def list_webhooks(
    session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> Listing[SubscriptionOut]:
    """The caller's webhooks, newest first, each with its latest deliveries."""
    return Listing(data=my_subscriptions(session, settings, who))


@router.get("/webhooks/{webhook_id}", response_model=SubscriptionOut, responses=REFUSALS)
def read_webhook(
    webhook_id: str, session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> SubscriptionOut | JSONResponse:
    """One of the caller's webhooks, with its delivery history."""
    return answered(session, lambda: subscription_out(settings, owned(session, who, webhook_id)))


@router.post("/webhooks/{webhook_id}/resume", response_model=SubscriptionOut, responses=REFUSALS)
def resume_webhook(
    webhook_id: str, session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> SubscriptionOut | JSONResponse:
    """Deliver again to a webhook paused after failures; what waited is sent now."""
    return answered(session, lambda: resume_subscription(session, settings, who, webhook_id))


@router.delete("/webhooks/{webhook_id}", status_code=204, responses=REFUSALS)
def delete_webhook(webhook_id: str, session: SessionDep, who: SignedInDep) -> Response:
    """Stop a webhook and forget its deliveries."""
    failed = attempt(session, lambda: delete_subscription(session, who, webhook_id))
    return failed or Response(status_code=204)
