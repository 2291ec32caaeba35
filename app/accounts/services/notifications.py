"""The in-app inbox of every account, and e-mail when SMTP is configured.

Notifications are rows first: whatever happens to the mail server, nobody's inbox loses
a message. The clock task e-mails what has not been sent yet.
"""

from __future__ import annotations

import datetime as dt
import logging
import smtplib
from collections.abc import Iterable
from email.message import EmailMessage

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.authorization import CHAIR_ROLES, Role
from app.core.views import Timestamp
from app.db.models import Notification, User, utcnow
from app.settings import Settings

log = logging.getLogger(__name__)
COMMITTEE_ROLES = (Role.REVIEWER.value, *(r.value for r in CHAIR_ROLES))


def notify(
    session: Session, users: Iterable[User], subject: str, body: str, link: str | None = None
) -> int:
    count = 0
    for user in {u.id: u for u in users if u.is_active}.values():
        session.add(Notification(user_id=user.id, subject=subject, body=body, link=link))
        count += 1
    return count


def committee(session: Session) -> list[User]:
    """Review-committee members and chairs with an active account."""
    return _with_roles(session, list(COMMITTEE_ROLES))


def chairs(session: Session) -> list[User]:
    """The chair and the co-chair (rules §4.4), active."""
    return _with_roles(session, [r.value for r in CHAIR_ROLES])


def neutral_members(session: Session) -> list[User]:
    """The neutral members, active: they screen fraud reports and staff panels."""
    return _with_roles(session, [Role.NEUTRAL.value])


def _with_roles(session: Session, roles: list[str]) -> list[User]:
    return list(
        session.scalars(
            select(User).where(User.role.in_(roles), User.is_active.is_(True)).order_by(User.id)
        )
    )


def members_of(session: Session, organization_id: int | None) -> list[User]:
    if organization_id is None:
        return []
    return list(
        session.scalars(
            select(User).where(User.organization_id == organization_id, User.is_active.is_(True))
        )
    )


def inbox(session: Session, user_id: int, limit: int = 100) -> list[Notification]:
    return list(
        session.scalars(
            select(Notification)
            .where(Notification.user_id == user_id)
            .order_by(Notification.id.desc())
            .limit(limit)
        )
    )


def unread_count(session: Session, user_id: int) -> int:
    return len(
        session.scalars(
            select(Notification.id).where(
                Notification.user_id == user_id, Notification.read_at.is_(None)
            )
        ).all()
    )


def mark_read(session: Session, user_id: int, at: dt.datetime | None = None) -> None:
    for row in session.scalars(
        select(Notification).where(Notification.user_id == user_id, Notification.read_at.is_(None))
    ):
        row.read_at = at or utcnow()


# What a mail server out of reach, or refusing, raises.
MAIL_ERRORS = (OSError, smtplib.SMTPException)


def mail_server(settings: Settings) -> smtplib.SMTP:
    """A connection to the configured mail server (the caller checks there is one)."""
    assert settings.smtp_host is not None
    return smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=10)


def portal_email(settings: Settings, to: str, subject: str, body: str) -> EmailMessage:
    """A message from the portal: its sender, and a subject that says where it is from."""
    message = EmailMessage()
    message["From"] = settings.smtp_sender
    message["To"] = to
    message["Subject"] = f"[Endpoints Portal] {subject}"
    message.set_content(body)
    return message


def send_pending_email(session: Session, settings: Settings, limit: int = 200) -> int:
    """E-mail the notifications not sent yet; a failure leaves them for the next round."""
    if not settings.smtp_host:
        return 0
    pending = session.scalars(
        select(Notification)
        .where(Notification.emailed_at.is_(None))
        .order_by(Notification.id)
        .limit(limit)
    ).all()
    if not pending:
        return 0
    sent = 0
    try:
        with mail_server(settings) as smtp:
            for row in pending:
                link = f"\n\n{settings.public_link(row.link)}" if row.link else ""
                message = portal_email(settings, row.user.email, row.subject, row.body + link)
                smtp.send_message(message)
                row.emailed_at = utcnow()
                sent += 1
    except MAIL_ERRORS as exc:
        log.warning("e-mail delivery stopped after %d message(s): %s", sent, exc)
    return sent


class NotificationView(BaseModel):
    subject: str
    body: str
    link: str | None
    at: Timestamp
    read: bool


class Inbox(BaseModel):
    unread: int
    data: list[NotificationView] = Field(description="newest first")


def inbox_view(session: Session, user_id: int) -> Inbox:
    return Inbox(
        unread=unread_count(session, user_id),
        data=[
            NotificationView(
                subject=n.subject,
                body=n.body,
                link=n.link,
                at=n.created_at,
                read=n.read_at is not None,
            )
            for n in inbox(session, user_id)
        ],
    )
