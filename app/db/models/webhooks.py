"""Tables of the webhooks feature: a user's subscriptions to the record's events, each
delivery (its history, its retries), and how far the ledger has been read for them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, UTCDateTime, utcnow


class WebhookSubscription(Base):
    """A URL a signed-in user asked to be told at: the record's events it wants, of one
    benchmark or all. Paused after deliveries keep failing, until its owner resumes it."""

    __tablename__ = "webhook_subscriptions"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(Text)
    # The Standard Webhooks secret (whsec_…), encrypted with the portal's secret key.
    secret: Mapped[bytes] = mapped_column(LargeBinary)
    events: Mapped[list[str]] = mapped_column(JSON)
    benchmark: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The ledger's head when it was made: it is told of the entries after it.
    since_seq: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)  # in a row, since the last success
    paused_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    paused_why: Mapped[str | None] = mapped_column(Text)

    deliveries: Mapped[list[WebhookDelivery]] = relationship(
        back_populates="subscription", cascade="all, delete-orphan", passive_deletes=True,
        order_by="WebhookDelivery.id.desc()",
    )  # fmt: skip


class WebhookDelivery(Base):
    """One event sent (or to be sent) to one subscription: the exact body signed, and
    what became of each attempt."""

    __tablename__ = "webhook_deliveries"

    id: Mapped[int] = mapped_column(primary_key=True)
    subscription_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_subscriptions.id", ondelete="CASCADE"), index=True
    )
    message_id: Mapped[str] = mapped_column(String(64), unique=True)  # webhook-id
    event: Mapped[str] = mapped_column(String(40))
    entry_seq: Mapped[int] = mapped_column(Integer)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    state: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Each attempt: when, the answer's status (or the error), how long it took.
    log: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)

    subscription: Mapped[WebhookSubscription] = relationship(back_populates="deliveries")


class WebhookCursor(Base):
    """How far the ledger has been read for deliveries: one row."""

    __tablename__ = "webhook_cursor"

    id: Mapped[int] = mapped_column(primary_key=True)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
