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

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.db.models import Curve, Publication, PublishedCurve, ResultEntry, Submission, utcnow
from app.domain.cohorts import Cohort
from app.domain.lifecycle import PublicationMode, ResultStatus, SubmissionState, result_status
from app.settings import Settings

from .audit import record
from .clocks import embargo_release
from .errors import ServiceError
from .results import compact_point
from .views import curve_dict

_NOT_COPIED = frozenset({"id", "publication_id"})


class PublishingError(ServiceError):
    pass


def publication_status(submission: Submission) -> ResultStatus | None:
    """The status the submission would be published with now, or None (not publishable)."""
    status = result_status(SubmissionState(submission.state), submission.for_review)
    if (
        status == ResultStatus.PROVISIONAL
        and submission.publication_mode != PublicationMode.PROVISIONAL
    ):
        return None  # confidential review: nothing public before finalization (§11.2 A)
    return status


def _snapshot(submission: Submission, ids: dict[tuple[str, str], str]) -> list[PublishedCurve]:
    systems = {s.dir_name: s for s in submission.systems}
    published = []
    for curve in submission.curves:
        system = systems.get(curve.system.dir_name)
        data = curve_dict(curve, active_only=True)
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
                result_id=ids.get((curve.system.dir_name, curve.benchmark_model)),
            )
        )
    return published


def _result_prefix(settings: Settings, cohort: Cohort, curve: Curve) -> str:
    """``<major>.<minor>.<cohort-number>.<model_id>.<dataset_id>`` (rules §9.7)."""
    first = Cohort.parse(settings.first_cohort) or cohort
    number = 0
    walker = first
    while walker < cohort:
        walker = walker.next()
        number += 1
    major, _, minor = settings.rules_version.partition(".")
    return f"{major}.{minor or 0}.{number}.{curve.benchmark_model}.{curve.dataset or 'unknown'}"


def result_ids(
    session: Session, settings: Settings, submission: Submission, cohort: Cohort
) -> dict[tuple[str, str], str]:
    """Each curve's result id: handed out at its first publication and kept for good;
    entry numbers are never reused, whatever happens to the result later."""
    ids: dict[tuple[str, str], str] = {}
    existing = {
        (e.system_dir, e.benchmark_model): e
        for e in session.scalars(
            select(ResultEntry).where(ResultEntry.submission_id == submission.id)
        )
    }
    for curve in submission.curves:
        key = (curve.system.dir_name, curve.benchmark_model)
        entry = existing.get(key)
        if entry is None:
            prefix = _result_prefix(settings, cohort, curve)
            highest = session.scalar(
                select(func.max(ResultEntry.entry)).where(ResultEntry.prefix == prefix)
            )
            entry = ResultEntry(
                prefix=prefix,
                entry=(highest or 0) + 1,
                submission_id=submission.id,
                system_dir=key[0],
                benchmark_model=key[1],
            )
            session.add(entry)
            session.flush()
        ids[key] = entry.result_id
    return ids


def publish_submission(
    session: Session,
    settings: Settings,
    submission: Submission,
    cohort: str,
    status: ResultStatus,
    at: dt.datetime,
    why: str | None = None,
) -> Publication:
    """One immutable snapshot of *submission*'s curves, listed in *cohort*."""
    parsed = Cohort.parse(cohort)
    assert parsed is not None
    ids = result_ids(session, settings, submission, parsed)
    publication = Publication(
        submission=submission, cohort=cohort, status=status.value, published_at=at
    )
    publication.curves = _snapshot(submission, ids)
    session.add(publication)
    reason = f"{status.value} in {cohort}" + (f" ({why})" if why else "")
    record(session, submission, action="published", reason=reason, at=at)
    session.flush()
    return publication


def _due(settings: Settings, submission: Submission) -> str | None:
    """The cohort a submission is due in, or None while an embargo holds it."""
    if submission.embargo_date is not None:
        if (
            submission.publication_mode == PublicationMode.PROVISIONAL
            and submission.state == SubmissionState.PASSED_CHECKS
        ):
            return None  # released on its date by the clocks (rules §4.2)
        if (
            submission.publication_mode == PublicationMode.CONFIDENTIAL
            and submission.state == SubmissionState.FINALIZED
        ):
            if embargo_release(settings, submission) is not None:
                return None
    if submission.state == SubmissionState.FINALIZED.value and submission.due_cohort:
        return submission.due_cohort
    return submission.eligible_cohort or submission.target_cohort


def publish_due(
    *, session: Session, settings: Settings, cohort_id: str, at: dt.datetime | None = None
) -> list[Publication]:
    """Publish every submission due in *cohort_id* (idempotent); see
    ``review.publish_cohort``, which also starts the review of provisional results."""
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
        due = _due(settings, submission)
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
        created.append(publish_submission(session, settings, submission, str(cohort), status, at))
    return created


def take_off_public_view(session: Session, submission: Submission, at: dt.datetime) -> None:
    """A withdrawn or invalidated result leaves the curves (rules §11.7, §11.8).

    Once finalized, its archive entry stays: older cohorts still show what was published,
    and a tombstone publication tagged withdrawn/invalidated takes it off the current
    curves. Withdrawn before finalization, it leaves no public record at all (its
    provisional publications are removed); its result ids stay taken.
    """
    publications = session.scalars(
        select(Publication).where(Publication.submission_id == submission.id)
    ).all()
    if not publications:
        return
    if submission.finalized_at is None:
        for publication in publications:
            session.delete(publication)
        session.flush()
        return
    status = "invalidated" if submission.state == SubmissionState.INVALIDATED.value else "withdrawn"
    latest = session.scalar(select(func.max(Publication.cohort))) or max(
        p.cohort for p in publications
    )
    tombstone = Publication(submission=submission, cohort=latest, status=status, published_at=at)
    last = max(publications, key=lambda p: (p.cohort, p.id))
    # The archive entry keeps the result ids and what was last shown, with its tag.
    copied = [c.key for c in PublishedCurve.__table__.columns if c.key not in _NOT_COPIED]
    tombstone.curves = [
        PublishedCurve(**{key: getattr(curve, key) for key in copied}) for curve in last.curves
    ]
    session.add(tombstone)
    session.flush()
