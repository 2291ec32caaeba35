"""Telling subscribers: the ledger's new entries of the events they want become
deliveries (``collect``), and the worker sends each due one (``deliver_next``), signed as
the Standard Webhooks specification says, to the address the outbound guard pinned,
again with back-off when it fails; a subscription whose deliveries keep failing is paused
and its owner told."""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
import json
import ssl
import time
from urllib.parse import urlsplit, urlunsplit

import certifi
import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook

from app.accounts.services.notifications import notify
from app.core.endpoints import (
    DEFAULT_PORTS,
    Endpoint,
    EndpointRefused,
    Resolve,
    parse_endpoint,
    pinned_address,
    resolve_addresses,
)
from app.db.models import User, WebhookCursor, WebhookDelivery, WebhookSubscription, utcnow
from app.keys import decrypt
from app.publishing.domain.ledger import read_entry
from app.publishing.services.ledger import entries_after
from app.settings import Settings
from app.webhooks.domain.events import EVENTS, payload, retry_at, wants

_READ = 500  # ledger entries read at a time


def _cursor(session: Session) -> WebhookCursor:
    cursor = session.get(WebhookCursor, 1)
    if cursor is None:
        cursor = WebhookCursor(id=1, last_seq=0)
        session.add(cursor)
        session.flush()
    return cursor


def _benchmarks(change: dict[str, object]) -> set[str]:
    """The benchmarks an entry's change concerns (a release: all its versions')."""
    versions = change.get("versions") if "versions" in change else [change]
    found = set()
    for version in versions if isinstance(versions, list) else []:
        for result in version.get("results", []) if isinstance(version, dict) else []:
            found.add(str(result.get("benchmark")))
    return found


def _paths(document: dict[str, object]) -> dict[str, str]:
    seq = document["seq"]
    links = {"entry": f"/api/v1/record/entries/{seq}",
             "signature": f"/api/v1/record/entries/{seq}/signature"}  # fmt: skip
    subject = str(document["subject"])
    if document["kind"] == "release":
        cohort = subject.removeprefix("release/")
        links["results"] = f"/results?cohort={cohort}"
        links["dataset"] = f"/api/v1/cohorts/{cohort}/dataset"
    else:
        change = document.get("change")
        results = change.get("results", []) if isinstance(change, dict) else []
        ids = [r.get("result_id") for r in results if isinstance(r, dict) and r.get("result_id")]
        if ids:
            links["result"] = f"/results/{ids[0]}"
    return links


def collect(session: Session, settings: Settings) -> int:
    """Deliveries for the ledger's entries since the last look, for each subscription
    that wants them (and was made before the entry); how many were made."""
    cursor = _cursor(session)
    made = 0
    while True:
        entries = entries_after(session, cursor.last_seq, _READ)
        if not entries:
            return made
        subscriptions = list(session.scalars(select(WebhookSubscription)))
        for entry in entries:
            cursor.last_seq = entry.seq
            event = EVENTS.get(entry.kind)
            if event is None or not subscriptions:
                continue
            document = read_entry(entry.body)
            concerns = _benchmarks(document["change"])
            body = json.dumps(payload(event, {**document, "digest": entry.digest},
                                      settings.public_url, _paths(document))).encode()  # fmt: skip
            for sub in subscriptions:
                if sub.since_seq < entry.seq and wants(sub.events, sub.benchmark, event, concerns):
                    session.add(WebhookDelivery(
                        subscription_id=sub.id, message_id=f"msg_{sub.public_id}_{entry.seq}",
                        event=event, entry_seq=entry.seq, body=body, state="pending",
                        attempts=0, next_attempt_at=utcnow(), log=[],
                    ))  # fmt: skip
                    made += 1
        session.flush()


def next_due(session: Session, now: dt.datetime) -> WebhookDelivery | None:
    return session.scalar(
        select(WebhookDelivery)
        .join(WebhookSubscription, WebhookSubscription.id == WebhookDelivery.subscription_id)
        .where(
            WebhookDelivery.state == "pending",
            WebhookDelivery.next_attempt_at <= now,
            WebhookSubscription.paused_at.is_(None),
        )
        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
        .limit(1)
    )


def _pinned_url(endpoint: Endpoint, address: str) -> str:
    """*endpoint*'s URL with its host replaced by the address it was resolved to."""
    parts = urlsplit(endpoint.url)
    host = f"[{address}]" if ipaddress.ip_address(address.split("%")[0]).version == 6 else address
    return urlunsplit(parts._replace(netloc=f"{host}:{endpoint.port}"))


def _send(settings: Settings, delivery: WebhookDelivery, now: dt.datetime,
          resolve: Resolve) -> tuple[bool, str]:  # fmt: skip
    """One attempt: (delivered, what happened)."""
    sub = delivery.subscription
    secret = decrypt(settings, sub.secret.decode())
    if secret is None:
        return False, "its secret cannot be read (the portal's secret key changed)"
    try:
        endpoint = parse_endpoint(sub.url)
        address = pinned_address(endpoint, settings.webhook_allowed_endpoints, resolve)
    except EndpointRefused as exc:
        return False, f"refused: {exc}"
    default = DEFAULT_PORTS[urlsplit(endpoint.url).scheme]
    headers = {
        "content-type": "application/json",
        "user-agent": "endpoints-portal-webhooks/1",
        "host": endpoint.host if endpoint.port == default else f"{endpoint.host}:{endpoint.port}",
        "webhook-id": delivery.message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(delivery.message_id, now, delivery.body),
    }
    try:
        # No proxy from the environment: the connection goes to the pinned address.
        with httpx.Client(timeout=settings.webhook_timeout_s, follow_redirects=False,
                          trust_env=False, verify=_trusted_authorities()) as client:  # fmt: skip
            answer = client.post(
                _pinned_url(endpoint, address), content=delivery.body, headers=headers,
                extensions={"sni_hostname": endpoint.host},
            )  # fmt: skip
    except httpx.HTTPError as exc:
        return False, f"{type(exc).__name__}: {exc}"[:300]
    return answer.is_success, f"HTTP {answer.status_code}"


@functools.cache
def _trusted_authorities() -> ssl.SSLContext:
    """certifi's authorities, read once per process: a client made for each delivery
    would read the whole bundle again (40 ms of CPU)."""
    return ssl.create_default_context(cafile=certifi.where())


def deliver_next(
    session: Session, settings: Settings, now: dt.datetime | None = None,
    resolve: Resolve = resolve_addresses,
) -> WebhookDelivery | None:  # fmt: skip
    """Send the next due delivery once; None when none is due. A failure is tried again
    after the back-off's wait, and after the last one it has failed."""
    now = now or utcnow()
    delivery = next_due(session, now)
    if delivery is None:
        return None
    started = time.monotonic()
    delivered, what = _send(settings, delivery, now, resolve)
    delivery.attempts += 1
    took = round(time.monotonic() - started, 3)
    delivery.log = [*(delivery.log or []), {"at": now.isoformat(), "result": what, "seconds": took}]
    sub = delivery.subscription
    if delivered:
        delivery.state, delivery.delivered_at, delivery.next_attempt_at = "delivered", now, None
        sub.failures = 0
    else:
        again = retry_at(delivery.attempts, now)
        delivery.next_attempt_at = again
        delivery.state = "pending" if again is not None else "failed"
        sub.failures += 1
        if sub.failures >= settings.webhook_pause_after and sub.paused_at is None:
            _pause(session, sub, now, what)
    session.flush()
    return delivery


def _pause(session: Session, sub: WebhookSubscription, now: dt.datetime, what: str) -> None:
    sub.paused_at = now
    sub.paused_why = f"{sub.failures} failed attempts in a row; the last: {what}"
    owner = session.get(User, sub.user_id)
    if owner is not None:
        notify(session, [owner], f"Webhook paused: {sub.url}",
               f"Deliveries to {sub.url} failed {sub.failures} times in a row (the last: {what}). "
               "Nothing more is sent there until you resume it; what waits is sent then.",
               link="/webhooks")  # fmt: skip
