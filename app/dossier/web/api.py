"""A submission as the API answers for it: everything the features know of it, for
those who may see it (rules §11.9)."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.web.security import PrincipalDep
from app.dossier.services.detail import PublicSubmission, SubmissionDetail, submission_detail
from app.settings import review_clock
from app.submissions.services.visibility import access_to
from app.submissions.web.access import visible_submission
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["submissions"])


@router.get("/submissions/{public_id}", response_model=SubmissionDetail | PublicSubmission)
def read_submission(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep, now: NowDep
) -> SubmissionDetail | PublicSubmission:
    """A submission: its results for anyone who may see them (rules §11.9); its review
    (counts, reproductions, reviewer, clocks) for the committee and submitters."""
    submission = visible_submission(session, who, public_id)
    access = access_to(session, who, submission)
    today = review_clock(settings).local_date(now)
    return submission_detail(session, settings, submission, access, today)
