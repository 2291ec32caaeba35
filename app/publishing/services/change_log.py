"""A published result's change log (rules §11.7): the corrections of its non-result
content the chair approved after finalization, as every public surface shows them."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import CorrectionState
from app.db.models import Correction, Submission


class ChangeLogEntry(BaseModel):
    applied_at: dt.datetime
    what: str = Field(description="what was corrected, in the submitter's words")
    files: list[str] = Field(description="the files changed, by their path in the bundle")
    approved_by: str | None = Field(description="the chair who approved it")


def change_log(session: Session, submission_id: str) -> list[ChangeLogEntry]:
    """The corrections applied to submission *submission_id*'s result after its
    finalization, oldest first."""
    rows = session.scalars(
        select(Correction)
        .join(Submission, Correction.submission_id == Submission.id)
        .where(
            Submission.public_id == submission_id,
            Correction.after_finalization.is_(True),
            Correction.state == CorrectionState.APPLIED,
        )
        .order_by(Correction.applied_at, Correction.id)
    )
    return [
        ChangeLogEntry(
            applied_at=c.applied_at or c.filed_at,
            what=c.reason,
            files=list(c.changed_files),
            approved_by=c.decided_by,
        )
        for c in rows
    ]
