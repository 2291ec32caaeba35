"""Publishing cohorts: which results become public, with which status, as what snapshot.

On a cohort's publication, every submission due in it is published with its status
(architecture, decision 7): unverified when uploaded not for review, provisional when it
chose provisional publication (rules §11.2 C) and awaits review, verified once finalized.
Confidential submissions stay unpublished until finalized. A publication freezes the
curves as they are, so an older cohort keeps showing what was public then. Publishing is
idempotent: a submission already published with the same status is left alone.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.db.models import Curve, Publication, PublishedCurve, Submission, utcnow
from app.domain.cohorts import Cohort
from app.domain.lifecycle import ResultStatus, SubmissionState, result_status

from .audit import change_state, record
from .errors import ServiceError
from .results import compact_point
from .views import curve_dict

PUBLICATION_MODES = ("confidential", "provisional")


class PublishingError(ServiceError):
    pass


def publication_status(submission: Submission) -> ResultStatus | None:
    """The status the submission would be published with now, or None (not publishable)."""
    status = result_status(SubmissionState(submission.state), submission.for_review)
    if status == ResultStatus.PROVISIONAL and submission.publication_mode != "provisional":
        return None  # confidential review: nothing public before finalization (§11.2 A)
    return status


def finalize_submission(
    *,
    session: Session,
    submission: Submission,
    at: dt.datetime,
    actor: str = "system",
    reason: str | None = None,
) -> None:
    """Peer review is over (the chair's decision): the results become verified."""
    if not submission.for_review:
        raise PublishingError("not-for-review", "an unverified upload is never reviewed")
    change_state(
        session,
        submission,
        SubmissionState.FINALIZED,
        actor=actor,
        action="finalize",
        reason=reason,
        at=at,
    )
    submission.finalized_at = at
    session.flush()


def _snapshot(submission: Submission, status: ResultStatus) -> list[PublishedCurve]:
    systems = {s.dir_name: s for s in submission.systems}
    published = []
    for curve in submission.curves:
        system = systems.get(curve.system.dir_name)
        data = curve_dict(curve)
        data.pop("reproductions", None)
        data["points"] = [compact_point(p) for p in data["points"]]
        published.append(
            PublishedCurve(
                benchmark_model=curve.benchmark_model,
                dataset=curve.dataset,
                is_agentic=curve.is_agentic,
                system_name=(system.system_name if system else None) or curve.system.dir_name,
                organization=submission.organization.name,
                division=system.division if system else None,
                availability=system.availability if system else None,
                accelerator_model=system.accelerator_model if system else None,
                accelerator_count=system.accelerator_count if system else None,
                provisioned_power_kw=system.provisioned_power_kw if system else None,
                data=data,
            )
        )
    return published


def publish_cohort(
    *, session: Session, cohort_id: str, at: dt.datetime | None = None
) -> list[Publication]:
    cohort = Cohort.parse(cohort_id)
    if cohort is None:
        raise PublishingError("bad-cohort", f"{cohort_id!r} is not a cohort id (YYYY-MM-C0/C1)")
    at = at or utcnow()
    candidates = session.scalars(
        select(Submission)
        .where(
            Submission.state.in_(
                [SubmissionState.PASSED_CHECKS.value, SubmissionState.FINALIZED.value]
            )
        )
        .options(
            selectinload(Submission.curves).selectinload(Curve.points),
            selectinload(Submission.systems),
            selectinload(Submission.organization),
        )
        .order_by(Submission.id)
    ).all()
    created: list[Publication] = []
    for submission in candidates:
        due = submission.eligible_cohort or submission.target_cohort
        if due is None or due > str(cohort):
            continue
        status = publication_status(submission)
        if status is None:
            continue
        latest = session.scalar(
            select(Publication)
            .where(Publication.submission_id == submission.id)
            .order_by(Publication.cohort.desc(), Publication.id.desc())
            .limit(1)
        )
        if latest is not None and (latest.status == status.value or latest.cohort > str(cohort)):
            continue
        publication = Publication(
            submission=submission, cohort=str(cohort), status=status.value, published_at=at
        )
        publication.curves = _snapshot(submission, status)
        session.add(publication)
        record(session, submission, action="published", reason=f"{status.value} in {cohort}", at=at)
        created.append(publication)
    session.flush()
    return created
