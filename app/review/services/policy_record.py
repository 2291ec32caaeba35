"""The review policies that were in force (rules §15), as the API and the policy page show
them: the one in force now and each one a decision or a version of the record named, by
digest, with its values as they were."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import policy_named
from app.core.views import Timestamp
from app.db.models import ReviewPolicyRecord
from app.settings import Settings, review_policy


class PolicyView(BaseModel):
    digest: str = Field(description="SHA-256 of the values: decisions and versions name it")
    values: dict[str, Any] = Field(description="the values (app/core/review_policy.toml)")
    first_in_force_at: Timestamp | None = Field(
        default=None, description="when a decision or a version first named it"
    )
    in_force: bool = Field(default=False, description="the policy in force now")


class KeptPolicy(BaseModel):
    digest: str
    first_in_force_at: Timestamp
    in_force: bool = Field(description="the policy in force now")


def policy_in_force_view(session: Session, settings: Settings) -> PolicyView:
    """The values in force now, with when they were first named (None until a decision or
    a version of the record names them)."""
    policy = review_policy(settings)
    kept = policy_named(session, policy.digest)
    return PolicyView(
        digest=policy.digest,
        values=asdict(policy),
        first_in_force_at=kept.first_in_force_at if kept else None,
        in_force=True,
    )


def kept_policy_view(session: Session, settings: Settings, digest: str) -> PolicyView | None:
    """A policy that was in force, by the digest a decision or a version names."""
    kept = policy_named(session, digest)
    if kept is None:
        return None
    return PolicyView(
        digest=kept.digest,
        values=kept.values,
        first_in_force_at=kept.first_in_force_at,
        in_force=kept.digest == review_policy(settings).digest,
    )


def kept_policies(session: Session, settings: Settings) -> list[KeptPolicy]:
    """Every policy a decision or a version of the record named, the earliest first."""
    now = review_policy(settings).digest
    rows = session.scalars(
        select(ReviewPolicyRecord).order_by(
            ReviewPolicyRecord.first_in_force_at, ReviewPolicyRecord.digest
        )
    )
    return [
        KeptPolicy(digest=r.digest, first_in_force_at=r.first_in_force_at, in_force=r.digest == now)
        for r in rows
    ]
