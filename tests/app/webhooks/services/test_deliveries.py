"""The record's events delivered to a real receiver on loopback (issue 50): signed as the
Standard Webhooks specification says, tried again after a failure, paused when they keep
failing, each naming the ledger entry it tells of."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from app.accounts.services.accounts import Principal, principal_for_token
from app.core.refusals import Refused
from app.db.models import Notification, RecordEntry, WebhookDelivery, utcnow
from app.db.session import Database
from app.settings import Settings
from app.webhooks.services.deliveries import collect, deliver_next
from app.webhooks.services.subscriptions import SubscriptionOut, resume_subscription, subscribe
from tests.support.accounts import create_accounts
from tests.support.receiver import Receiver
from tests.support.rows import must
from tests.support.submissions import release_then_invalidate

pytestmark = pytest.mark.postgresql


@pytest.fixture
def loopback(settings: Settings) -> Settings:
    """The operator allows deliveries to this machine (the receiver is on loopback)."""
    return settings.model_copy(
        update={"webhook_allowed_endpoints": ["127.0.0.1/32:*"], "webhook_pause_after": 2}
    )


def _member(database: Database) -> Principal:
    tokens = create_accounts(database)
    with database.session() as session:
        return must(principal_for_token(session, tokens["submitter"]))


def _subscribed(database: Database, settings: Settings, url: str, **kw: object) -> SubscriptionOut:
    who = _member(database)
    with database.session() as session:
        made = subscribe(session, settings, who, url, **kw)  # type: ignore[arg-type]
        session.commit()
    return made


def test_a_release_and_an_invalidation_arrive_signed_after_a_failure_and_a_retry(
    database: Database, loopback: Settings, good_archive: Path, receiver: Receiver
) -> None:
    hook = _subscribed(database, loopback, receiver.url, events=[])
    release_then_invalidate(database, loopback, good_archive)
    receiver.answers = [500]  # the first attempt fails
    with database.session() as session:
        assert collect(session, loopback) == 3  # two releases and the invalidation
        session.commit()
        now = utcnow()
        sent = []
        while (delivery := deliver_next(session, loopback, now)) is not None:
            session.commit()
            sent.append((delivery.event, delivery.state))
        assert sent == [("cohort.released", "pending"), ("cohort.released", "delivered"),
                        ("result.invalidated", "delivered")]  # fmt: skip
        # The failed one is tried again after the back-off's first wait, not before.
        retried = deliver_next(session, loopback, now + dt.timedelta(seconds=31))
        session.commit()
        assert retried is not None and retried.state == "delivered" and retried.attempts == 2
        assert [entry["result"] for entry in retried.log] == ["HTTP 500", "HTTP 200"]
        assert collect(session, loopback) == 0  # each entry is told once
        entries = {e.seq: e for e in session.scalars(select(RecordEntry))}
    assert len(receiver.received) == 4
    verifier = Webhook(must(hook.secret))
    for got in receiver.received:
        verifier.verify(got.body, got.headers)  # raises where a signature does not hold
        assert got.path == "/hooks/in"
    first, *_rest, again = receiver.received
    assert first.headers["webhook-id"] == again.headers["webhook-id"] and first.body == again.body
    bodies = [json.loads(r.body) for r in receiver.received]
    assert {b["type"] for b in bodies} == {"cohort.released", "result.invalidated"}
    invalidation = next(b for b in bodies if b["type"] == "result.invalidated")["data"]
    entry = entries[invalidation["seq"]]
    assert entry.kind == "invalidation"
    assert invalidation["digest"] == hashlib.sha256(entry.body).hexdigest()
    assert invalidation["links"]["entry"].endswith(f"/api/v1/record/entries/{entry.seq}")
    assert "/results/" in invalidation["links"]["result"]
    # A tampered body fails the subscriber's check.
    with pytest.raises(Exception, match="signature"):
        verifier.verify(first.body.replace(b"released", b"Released"), first.headers)


def test_a_webhook_that_keeps_failing_is_paused_and_its_owner_told(
    database: Database, loopback: Settings, good_archive: Path, receiver: Receiver
) -> None:
    hook = _subscribed(database, loopback, receiver.url, events=["result.invalidated"])
    release_then_invalidate(database, loopback, good_archive)
    receiver.answers = [503, 503]
    with database.session() as session:
        assert collect(session, loopback) == 1  # only the event it asked for
        now = utcnow()
        for later in (0, 31):
            deliver_next(session, loopback, now + dt.timedelta(seconds=later))
            session.commit()
        # Paused: nothing more is sent, however long one waits.
        assert deliver_next(session, loopback, now + dt.timedelta(days=1)) is None
        told = session.scalars(select(Notification.subject)).all()
        assert any(subject.startswith("Webhook paused") for subject in told)
        who = _member_again(session)
        resumed = resume_subscription(session, loopback, who, hook.id, now)
        session.commit()
        assert resumed.paused_at is None and resumed.failures == 0
        delivered = deliver_next(session, loopback, now + dt.timedelta(seconds=1))
        session.commit()
        assert delivered is not None and delivered.state == "delivered"
    assert len(receiver.received) == 3


def _member_again(session) -> Principal:  # type: ignore[no-untyped-def]
    from app.accounts.services.accounts import user_by_email
    from app.core.authorization import ROLE_SCOPES, Role
    from tests.support.accounts import ACCOUNTS

    user = must(user_by_email(session, ACCOUNTS["submitter"][0]))
    role = Role(user.role)
    return Principal(user.id, user.email, role, user.organization_id, ROLE_SCOPES[role])


def test_a_webhook_hears_only_what_comes_after_it_and_of_its_benchmark(
    database: Database, loopback: Settings, good_archive: Path, receiver: Receiver
) -> None:
    release_then_invalidate(database, loopback, good_archive)
    _subscribed(database, loopback, receiver.url, events=[])  # after everything
    with database.session() as session:
        assert collect(session, loopback) == 0
        session.commit()
    other = _subscribed_again(database, loopback, receiver.url, benchmark="gpt-oss-120b")
    assert other.benchmark == "gpt-oss-120b"
    with database.session() as session:
        assert session.scalars(select(WebhookDelivery)).all() == []


def _subscribed_again(
    database: Database, settings: Settings, url: str, **kw: object
) -> SubscriptionOut:
    with database.session() as session:
        made = subscribe(session, settings, _member_again(session), url, events=[], **kw)  # type: ignore[arg-type]
        session.commit()
    return made


@pytest.mark.parametrize(
    ("url", "field", "words"),
    [
        ("http://127.0.0.1:9/in", "url", "loopback, private or reserved"),
        ("http://169.254.169.254/latest/meta-data", "url", "loopback, private or reserved"),
        ("http://[::1]:80/", "url", "loopback, private or reserved"),
        ("ftp://example.com/in", "url", "http(s) URL"),
        ("https://user:pw@93.184.216.34/", "url", "credentials"),
        ("https://93.184.216.34/a b", "url", "spaces or control characters"),
    ],
)
def test_a_webhook_url_the_guard_refuses_is_refused_where_it_enters(
    database: Database, settings: Settings, url: str, field: str, words: str
) -> None:
    who = _member(database)
    with database.session() as session, pytest.raises(Refused) as refused:
        subscribe(session, settings, who, url, [])
    assert refused.value.detail["field"] == field and words in refused.value.message


def test_unknown_events_and_benchmarks_are_refused_by_name(
    database: Database, settings: Settings
) -> None:
    who = _member(database)
    with database.session() as session:
        with pytest.raises(Refused, match="unknown event"):
            subscribe(session, settings, who, "https://93.184.216.34/", ["cohort.exploded"])
        with pytest.raises(Refused, match="not a benchmark id"):
            subscribe(session, settings, who, "https://93.184.216.34/", [], "../../etc")
        made = subscribe(session, settings, who, "https://93.184.216.34/", ["result.withdrawn"])
        assert (
            made.events == ["result.withdrawn"] and made.secret and made.secret.startswith("whsec_")
        )


def test_a_delivery_goes_to_the_address_its_name_was_resolved_to_once(
    database: Database, settings: Settings, good_archive: Path, receiver: Receiver
) -> None:
    named = settings.model_copy(update={"webhook_allowed_endpoints": ["localhost:*"]})
    _subscribed(database, named, f"http://localhost:{receiver.port}/hooks/in", events=[])
    release_then_invalidate(database, named, good_archive)
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:  # the name server's one answer
        asked.append(host)
        return ["127.0.0.1"]

    with database.session() as session:
        collect(session, named)
        session.commit()
        delivery = deliver_next(session, named, utcnow(), resolve)
        session.commit()
    assert delivery is not None and delivery.state == "delivered"
    assert asked == ["localhost"]  # resolved once, and that address connected to
    assert receiver.received[0].headers["host"] == f"localhost:{receiver.port}"
