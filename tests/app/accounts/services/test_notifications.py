"""The inbox and its e-mail: a real SMTP conversation with a small server on loopback."""

from __future__ import annotations

from sqlalchemy import select

from app.accounts.services.notifications import (
    committee,
    inbox,
    mark_read,
    notify,
    send_pending_email,
    unread_count,
)
from app.db.models import Notification, User
from app.db.session import Database
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, create_accounts


def test_inbox_then_email_once(
    database: Database, settings: Settings, smtp: tuple[int, list[str]]
) -> None:
    port, messages = smtp
    create_accounts(database)
    with database.session() as session:
        members = committee(session)
        assert {u.email for u in members} == {
            ACCOUNTS[k][0] for k in ("reviewer", "reviewer2", "chair")
        }
        assert notify(session, members + members, "Peer review started", "Body", "/x") == 3
        session.commit()
        chair = session.scalar(select(User).where(User.email == ACCOUNTS["chair"][0]))
        assert chair is not None
        assert unread_count(session, chair.id) == 1
        assert inbox(session, chair.id)[0].subject == "Peer review started"
        # No SMTP host: nothing is sent, everything stays in the inbox.
        assert send_pending_email(session, settings) == 0
        mailing = settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": port})
        assert send_pending_email(session, mailing) == 3
        assert send_pending_email(session, mailing) == 0  # each message once
        session.commit()
        assert len(messages) == 3
        assert any(f"To: {ACCOUNTS['chair'][0]}" in m for m in messages)
        assert all("[Endpoints Portal] Peer review started" in m for m in messages)
        mark_read(session, chair.id)
        assert unread_count(session, chair.id) == 0


def test_a_dead_mail_server_leaves_messages_for_the_next_round(
    database: Database, settings: Settings
) -> None:
    create_accounts(database)
    with database.session() as session:
        notify(session, committee(session), "Objection filed", "Body")
        dead = settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": 9})
        assert send_pending_email(session, dead) == 0
        pending = session.scalars(select(Notification).where(Notification.emailed_at.is_(None)))
        assert len(pending.all()) == 3
