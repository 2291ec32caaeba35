"""A signed-in user's webhook subscriptions: a URL told of the record's events (all, or
one benchmark's), its Standard Webhooks secret, its deliveries. Only its owner sees or
changes one (app.core.authorization)."""

from __future__ import annotations

import base64
import datetime as dt
import re
import secrets
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.authorization import may_change_webhook
from app.core.endpoints import Endpoint, EndpointRefused, parse_endpoint, pinned_address
from app.core.refusals import Kind, Refused
from app.core.views import Timestamp
from app.db.models import WebhookDelivery, WebhookSubscription, utcnow
from app.keys import decrypt, encrypt
from app.publishing.services.ledger import head
from app.settings import Settings
from app.webhooks.domain.events import EVENT_TYPES

MOST_SUBSCRIPTIONS = 20  # per user
URL_CHARACTERS = 2000
SHOWN_DELIVERIES = 50
_BENCHMARK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class DeliveryOut(BaseModel):
    id: str = Field(description="the message id, sent as the webhook-id header")
    event: str
    entry: int = Field(description="the ledger entry it tells of")
    state: str = Field(description="pending, delivered or failed")
    attempts: int
    next_attempt_at: Timestamp | None
    delivered_at: Timestamp | None
    log: list[dict[str, Any]] = Field(description="each attempt: when, status or error")


class SubscriptionOut(BaseModel):
    id: str
    url: str
    events: list[str]
    benchmark: str | None = Field(description="only this benchmark's events (null: all)")
    secret: str | None = Field(
        description="the Standard Webhooks secret (whsec_…) that signs each delivery"
    )
    created_at: Timestamp
    paused_at: Timestamp | None = Field(description="paused after failing deliveries")
    paused_why: str | None
    failures: int = Field(description="failed attempts in a row since the last success")
    deliveries: list[DeliveryOut] = Field(description="the latest, newest first")


def delivery_out(d: WebhookDelivery) -> DeliveryOut:
    return DeliveryOut(
        id=d.message_id, event=d.event, entry=d.entry_seq, state=d.state, attempts=d.attempts,
        next_attempt_at=d.next_attempt_at, delivered_at=d.delivered_at, log=list(d.log or []),
    )  # fmt: skip


def subscription_out(settings: Settings, sub: WebhookSubscription) -> SubscriptionOut:
    return SubscriptionOut(
        id=sub.public_id, url=sub.url, events=list(sub.events), benchmark=sub.benchmark,
        secret=decrypt(settings, sub.secret.decode()), created_at=sub.created_at,
        paused_at=sub.paused_at, paused_why=sub.paused_why, failures=sub.failures,
        deliveries=[delivery_out(d) for d in sub.deliveries[:SHOWN_DELIVERIES]],
    )  # fmt: skip


def checked_url(settings: Settings, url: str) -> Endpoint:
    """*url* where the portal may deliver: http(s), nothing that splits a request, and an
    address the outbound guard admits (a public one, or one the operator's list admits)."""
    if len(url) > URL_CHARACTERS:
        raise Refused("bad-webhook", f"a webhook URL has at most {URL_CHARACTERS} characters",
                      Kind.INVALID, field="url")  # fmt: skip
    try:
        endpoint = parse_endpoint(url)
        pinned_address(endpoint, settings.webhook_allowed_endpoints)
    except EndpointRefused as exc:
        raise Refused("bad-webhook", str(exc), Kind.INVALID, field="url") from None
    return endpoint


def _events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENT_TYPES))
    if unknown:
        raise Refused("bad-webhook", f"unknown event(s) {', '.join(unknown)}: the events are "
                      f"{', '.join(EVENT_TYPES)}", Kind.INVALID, field="events")  # fmt: skip
    return [e for e in EVENT_TYPES if e in events] or list(EVENT_TYPES)


def _benchmark(benchmark: str | None) -> str | None:
    if benchmark is None or not benchmark.strip():
        return None
    if not _BENCHMARK.fullmatch(benchmark.strip()):
        raise Refused("bad-webhook", f"{benchmark!r} is not a benchmark id (e.g. llama3_1-8b)",
                      Kind.INVALID, field="benchmark")  # fmt: skip
    return benchmark.strip()


def subscribe(
    session: Session,
    settings: Settings,
    who: Principal,
    url: str,
    events: list[str],
    benchmark: str | None = None,
) -> SubscriptionOut:
    """Subscribe *url* to *events* (empty: all of them); its secret is made here."""
    held = session.scalar(
        select(func.count())
        .select_from(WebhookSubscription)
        .where(WebhookSubscription.user_id == who.user_id)
    )
    if (held or 0) >= MOST_SUBSCRIPTIONS:
        raise Refused("too-many-webhooks", f"you have {MOST_SUBSCRIPTIONS} webhooks: delete one "
                      "first", Kind.CONFLICT)  # fmt: skip
    endpoint = checked_url(settings, url)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    sub = WebhookSubscription(
        public_id=secrets.token_urlsafe(12), user_id=who.user_id, url=endpoint.url,
        secret=encrypt(settings, secret).encode(), events=_events(events),
        benchmark=_benchmark(benchmark), created_at=utcnow(), failures=0,
        since_seq=last.seq if (last := head(session)) is not None else 0,
    )  # fmt: skip
    session.add(sub)
    session.flush()
    return subscription_out(settings, sub)


def my_subscriptions(session: Session, settings: Settings, who: Principal) -> list[SubscriptionOut]:
    found = session.scalars(
        select(WebhookSubscription)
        .where(WebhookSubscription.user_id == who.user_id)
        .order_by(WebhookSubscription.id.desc())
    )
    return [subscription_out(settings, s) for s in found]


def owned(session: Session, who: Principal, subscription_id: str) -> WebhookSubscription:
    """The caller's subscription *subscription_id*: 404 where none, 403 where another's."""
    sub = session.scalar(
        select(WebhookSubscription).where(WebhookSubscription.public_id == subscription_id)
    )
    if sub is None:
        raise Refused("no-such-webhook", f"no webhook {subscription_id!r}", Kind.NOT_FOUND)
    refusal = may_change_webhook(sub.user_id, who.user_id)
    if refusal is not None:
        raise refusal.refused()
    return sub


def delete_subscription(session: Session, who: Principal, subscription_id: str) -> None:
    session.delete(owned(session, who, subscription_id))
    session.flush()


def resume_subscription(
    session: Session, settings: Settings, who: Principal, subscription_id: str,
    at: dt.datetime | None = None,
) -> SubscriptionOut:  # fmt: skip
    """Deliver again to a paused subscription: its waiting deliveries are due now."""
    sub = owned(session, who, subscription_id)
    at = at or utcnow()
    sub.paused_at, sub.paused_why, sub.failures = None, None, 0
    for delivery in sub.deliveries:
        if delivery.state == "pending":
            delivery.next_attempt_at = at
    session.flush()
    return subscription_out(settings, sub)
