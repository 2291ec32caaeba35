"""Submissions as the official API knows them: composed from measured runs, registered
before their bundle arrives, then the portal's submission that bundle became.

The record carries the official field names with the portal's values; its ``status`` is
the one mapping of ``app.submission_api.domain.status``. Runs can only be removed from a
submission (rules §8: no point is added after submission): removing one is the portal's
withdrawal of the point it became (the service behind "withdraw a faulty point"), done
when the bundle the CLI rebuilds without it arrives (``bundles``), or at once when no run
remains to rebuild from. Until then the CLI's undo of a removal (after its own checker
refused the smaller bundle) puts the run back; a withdrawn point stays withdrawn.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, get_user
from app.accounts.services.authorization import authorize
from app.core.authorization import Action
from app.core.digests import canonical_digest
from app.core.lifecycle import ObjectionState, PointState, SubmissionState
from app.core.refusals import Kind, Refused
from app.core.views import Timestamp
from app.db.models import (
    ApiSubmission,
    ApiSubmissionRun,
    MeasuredRun,
    Objection,
    Publication,
    Submission,
)
from app.measurements.services.registry import run_of, usable_for_a_submission
from app.measurements.services.views import API_VERSION, RunOut, run_out
from app.review.services.clocks import submitter_clock
from app.review.services.decisions import set_point_state, withdraw
from app.review.services.review import change_embargo, first_released_cohort
from app.settings import Settings, review_clock, review_policy
from app.submission_api.domain.status import OfficialStatus, official_status
from app.submissions.domain.embargo import embargo_refusal, latest_embargo
from app.submissions.services.points import find_point

DIVISIONS = ("standardized", "serviced", "rdi")
SCENARIOS = ("cop", "con")
AVAILABILITIES = ("available", "preview", "rdi")
# What a cohort's publication time is on its date (rules §4.1): an embargo that ends later
# that day holds the result to the next day's.
RELEASE_HOUR = 8


class RecordRefused(Refused):
    pass


@dataclass(frozen=True)
class SubmissionCreate:
    """What ``submissions create`` sends."""

    division: str
    scenario: str
    availability: str
    run_ids: list[str]
    is_test: bool = False
    early_publish: bool = False
    target_availability_date: dt.date | None = None
    embargo_date: dt.datetime | None = None
    cli_version: str | None = None


def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    chosen = value.strip().lower()
    if chosen not in allowed:
        raise RecordRefused(
            "bad-" + field,
            f"{field} must be one of {', '.join(allowed)}, not {value!r}",
            field=field,
        )
    return chosen


def embargo_day(at: dt.datetime, tz: ZoneInfo) -> dt.date:
    """The portal's embargo date for an official embargo instant: results are released at
    08:00 in the cohorts' zone, so an instant later in the day holds to the next."""
    local = at.astimezone(tz)
    release = local.replace(hour=RELEASE_HOUR, minute=0, second=0, microsecond=0)
    return local.date() if local <= release else local.date() + dt.timedelta(days=1)


def _check_embargo(settings: Settings, at: dt.datetime, now: dt.datetime) -> None:
    clock = review_clock(settings)
    today = clock.local_date(now)
    day = embargo_day(at, ZoneInfo(settings.cohort_timezone))
    latest = latest_embargo(
        today,
        None,
        resolution_days=review_policy(settings).review.resolution_days,
        max_days=review_policy(settings).review.embargo_max_days,
    )
    if (refusal := embargo_refusal(day, today, latest)) is not None:
        raise RecordRefused(refusal.code, refusal.message, refusal.kind, field="embargo_date")


def create_record(
    *, session: Session, settings: Settings, who: Principal, body: SubmissionCreate,
    now: dt.datetime,
) -> ApiSubmission:  # fmt: skip
    """A submission of *who*'s organisation, composed from its runs, awaiting its bundle."""
    if who.organization_id is None:
        raise RecordRefused(
            "no-organization", "submissions are an organisation's: this account has none",
            Kind.FORBIDDEN,
        )  # fmt: skip
    if not body.run_ids:
        raise RecordRefused(
            "no-runs", "a submission is built from at least one run", field="run_ids"
        )
    if len(set(body.run_ids)) != len(body.run_ids):
        raise RecordRefused("repeated-run", "a run is named twice", field="run_ids")
    runs = [run_of(session, who, public_id) for public_id in body.run_ids]
    for run in runs:
        authorize(who, run, Action.COMPOSE)
        if (refusal := usable_for_a_submission(run)) is not None:
            raise refusal
    if body.embargo_date is not None:
        _check_embargo(settings, body.embargo_date, now)
    record = ApiSubmission(
        organization_id=who.organization_id,
        user_id=who.user_id,
        division=_choice(body.division, DIVISIONS, "division"),
        scenario=_choice(body.scenario, SCENARIOS, "scenario"),
        availability=_choice(body.availability, AVAILABILITIES, "availability"),
        early_publish=body.early_publish,
        embargo_at=body.embargo_date,
        target_availability_date=body.target_availability_date,
        is_test=body.is_test,
        cli_version=(body.cli_version or "")[:32] or None,
        created_at=now,
    )
    record.runs = [ApiSubmissionRun(run=run, position=n) for n, run in enumerate(runs)]
    session.add(record)
    session.flush()
    return record


def records_of(session: Session, who: Principal) -> list[ApiSubmission]:
    """The organisation's submissions registered from runs, newest first."""
    if who.organization_id is None:
        return []
    return list(
        session.scalars(
            select(ApiSubmission)
            .where(ApiSubmission.organization_id == who.organization_id)
            .order_by(ApiSubmission.created_at.desc(), ApiSubmission.id.desc())
        )
    )


def record_of(session: Session, who: Principal, public_id: str) -> ApiSubmission:
    """The record, if it is *who*'s organisation's; another organisation's is not there."""
    record = session.scalar(select(ApiSubmission).where(ApiSubmission.public_id == public_id))
    if record is None or record.organization_id != who.organization_id:
        raise RecordRefused("no-such-submission", f"no submission {public_id!r}", Kind.NOT_FOUND)
    return record


def submissions_by_run(session: Session, who: Principal) -> dict[int, list[str]]:
    """Each of the organisation's runs' submissions (their ids), where it is in one and
    was not removed."""
    if who.organization_id is None:
        return {}
    rows = session.execute(
        select(ApiSubmissionRun.run_id, ApiSubmission.public_id)
        .join(ApiSubmission, ApiSubmissionRun.api_submission_id == ApiSubmission.id)
        .where(
            ApiSubmission.organization_id == who.organization_id,
            ApiSubmissionRun.removed_at.is_(None),
        )
    ).all()
    used: dict[int, list[str]] = {}
    for run_id, public_id in rows:
        used.setdefault(run_id, []).append(public_id)
    return used


def active_runs(record: ApiSubmission) -> list[MeasuredRun]:
    return [link.run for link in record.runs if link.removed_at is None]


def removed_runs(record: ApiSubmission) -> list[MeasuredRun]:
    return [link.run for link in record.runs if link.removed_at is not None]


# --- the record as the official API shows it ----------------------------------------


class ModelDataset(BaseModel):
    model: str | None
    dataset: str | None


class RecordRefusal(BaseModel):
    code: str
    message: str | None


class SubmissionRecord(BaseModel):
    """The official submission record (``get``, ``list`` and ``update`` show it), the
    official names with the portal's values."""

    id: str
    user_id: str
    status: OfficialStatus
    division: str
    scenario: str
    availability: str
    early_publish: bool
    embargo_date: Timestamp | None
    is_test: bool
    run_ids: list[str]
    runs: list[RunOut] | None = None
    systems: list[str]
    model_datasets: list[ModelDataset]
    publication_cycle: str | None = Field(description="the cohort it was first published in")
    target_availability_date: dt.date | None
    reviewers_assigned: int
    penalties_imposed: int = Field(description="cohorts of delay the review's clocks added")
    business_days_since_response: int = Field(
        description="the longest any open objection has waited on the submitter"
    )
    submission_checker_version: str | None
    api_version: str
    cli_version: str | None
    pr_url: str | None = Field(description="where it is reviewed: the portal's page")
    pr_number: int | None
    archive_uri: str | None
    created_at: Timestamp
    availability_qualified_at: Timestamp | None
    compliance_passed_at: Timestamp | None
    peer_review_started_at: Timestamp | None
    objection_resolution_started_at: Timestamp | None
    first_published_at: Timestamp | None
    finalized_at: Timestamp | None
    withdrawn_at: Timestamp | None
    refusal: RecordRefusal | None = Field(description="why its bundle was refused, if it was")


def _published(session: Session, submission: Submission) -> Publication | None:
    return session.scalar(
        select(Publication)
        .where(Publication.submission_id == submission.id, Publication.in_record())
        .order_by(Publication.published_at)
        .limit(1)
    )


def _waiting_days(
    settings: Settings, session: Session, submission: Submission, now: dt.datetime
) -> int:
    """The longest any open objection has waited on the submitter, in its business days."""
    clock = submitter_clock(settings, submission)
    open_ones = session.scalars(
        select(Objection).where(
            Objection.submission_id == submission.id,
            Objection.state.in_([ObjectionState.OPEN, ObjectionState.UNRESOLVED]),
        )
    ).all()
    return max((clock.business_days_elapsed(o.filed_at, now) for o in open_ones), default=0)


def _review_fields(
    session: Session, settings: Settings, submission: Submission, now: dt.datetime
) -> dict[str, Any]:
    eligible = submission.review_eligible_at
    published = _published(session, submission)
    passed = submission.state not in (
        SubmissionState.RECEIVED, SubmissionState.CHECKING, SubmissionState.CHECK_ERROR,
        SubmissionState.REJECTED,
    )  # fmt: skip
    return {
        "publication_cycle": first_released_cohort(session, submission),
        "reviewers_assigned": 1 if submission.reviewer_id is not None else 0,
        "penalties_imposed": submission.penalty_cohorts,
        "business_days_since_response": _waiting_days(settings, session, submission, now),
        "submission_checker_version": submission.checker_version,
        "compliance_passed_at": submission.checks_finished_at if passed else None,
        "peer_review_started_at": eligible,
        "objection_resolution_started_at": (
            review_clock(settings).peer_review_closes(eligible)
            if eligible is not None and review_clock(settings).peer_review_closes(eligible) <= now
            else None
        ),
        "first_published_at": published.published_at if published else None,
        "finalized_at": submission.finalized_at,
        "systems": sorted({s.system_name or s.dir_name for s in submission.systems}),
        "model_datasets": [
            {"model": c.benchmark_model, "dataset": c.dataset} for c in submission.curves
        ],
    }


def _from_runs(runs: list[MeasuredRun]) -> dict[str, Any]:
    """Before the bundle: what the runs say of the systems and model/dataset pairs."""
    systems = sorted({str(r.system_info.get("system_name")) for r in runs
                      if r.system_info.get("system_name")})  # fmt: skip
    pairs: list[dict[str, Any]] = []
    for run in runs:
        pair = {"model": run.model, "dataset": run.point_config.get("dataset")}
        if pair not in pairs:
            pairs.append(pair)
    return {"systems": systems, "model_datasets": pairs}


def record_view(
    session: Session, settings: Settings, record: ApiSubmission, now: dt.datetime,
    include_runs: bool = False,
) -> SubmissionRecord:  # fmt: skip
    """The official submission record (the CLI's ``get``, ``list`` and ``update`` show it)."""
    submission = record.submission
    runs = active_runs(record)
    status = official_status(
        SubmissionState(submission.state) if submission else None,
        for_review=submission.for_review if submission else not record.is_test,
        published=submission is not None and _published(session, submission) is not None,
        withdrawn=record.withdrawn_at is not None and submission is None,
        refused=record.refused_code is not None,
    )
    view: dict[str, Any] = {
        "id": record.public_id,
        "user_id": str(record.user_id),
        "status": status.value,
        "division": record.division,
        "scenario": record.scenario,
        "availability": record.availability,
        "early_publish": record.early_publish,
        "embargo_date": record.embargo_at,
        "is_test": record.is_test,
        "run_ids": [run.public_id for run in runs],
        "target_availability_date": record.target_availability_date,
        "api_version": API_VERSION,
        "cli_version": record.cli_version,
        # The review happens on the portal: its page is where the official service has a
        # pull request.
        "pr_url": settings.public_link(f"/submissions/{record.public_id}"),
        "pr_number": None,
        "archive_uri": (
            settings.public_link(f"/submission-api/submissions/{record.public_id}/archive")
            if submission is not None else None
        ),  # fmt: skip
        "created_at": record.created_at,
        "availability_qualified_at": None,
        "withdrawn_at": record.withdrawn_at,
        "refusal": (
            {"code": record.refused_code, "message": record.refused_message}
            if record.refused_code else None
        ),  # fmt: skip
        "publication_cycle": None, "reviewers_assigned": 0, "penalties_imposed": 0,
        "business_days_since_response": 0, "submission_checker_version": None,
        "compliance_passed_at": None, "peer_review_started_at": None,
        "objection_resolution_started_at": None, "first_published_at": None,
        "finalized_at": None, **_from_runs(runs),
    }  # fmt: skip
    if submission is not None:
        view.update(_review_fields(session, settings, submission, now))
    if include_runs:
        view["runs"] = [run_out(settings, run) for run in runs]
    return SubmissionRecord.model_validate(view)


# --- changing a record ----------------------------------------------------------------


def point_of(record: ApiSubmission, run: MeasuredRun) -> str | None:
    """The label of the point the run became in the submission's bundle: the one whose
    summary is the run's."""
    submission = record.submission
    if submission is None or submission.disclosed is None:
        return None
    wanted = canonical_digest(run.result_summary)
    summaries: dict[str, str | None] = submission.disclosed.get("summaries", {})
    return next((label for label, digest in summaries.items() if digest == wanted), None)


def remove_run(
    *, session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    run_id: str, now: dt.datetime,
) -> None:  # fmt: skip
    """Take a run out of the submission: the point it became is withdrawn when the bundle
    rebuilt without it arrives (rules §8), or now if no run remains to rebuild from."""
    authorize(who, record, Action.COMPOSE)
    link = next((link for link in record.runs if link.run.public_id == run_id
                 and link.removed_at is None), None)  # fmt: skip
    if link is None:
        raise RecordRefused("not-in-submission", f"run {run_id} is not in this submission",
                            Kind.NOT_FOUND)  # fmt: skip
    link.removed_at = now
    if not active_runs(record):
        for removed in record.runs:
            withdraw_point_of(session, settings, who, record, removed.run, now)


def withdraw_point_of(
    session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    run: MeasuredRun, now: dt.datetime,
) -> None:  # fmt: skip
    """Withdraw the point *run* became, if the bundle holds one still active."""
    label = point_of(record, run)
    if label is None or record.submission is None:
        return
    point = find_point(record.submission, label)
    if point is None or point.state != PointState.ACTIVE:
        return
    set_point_state(
        session=session, settings=settings, submission=record.submission, point_label=label,
        state=PointState.WITHDRAWN.value, who=who, at=now,
        reason=f"run {run.public_id} removed from the submission (endpoints-submission-cli)",
    )  # fmt: skip


def restore_run(*, session: Session, who: Principal, record: ApiSubmission, run_id: str) -> None:
    """The CLI's undo of a removal: the run is back while its point was not withdrawn (a
    withdrawn point stays withdrawn, rules §11.1)."""
    authorize(who, record, Action.COMPOSE)
    link = next((link for link in record.runs if link.run.public_id == run_id), None)
    if link is None or link.removed_at is None:
        raise RecordRefused(
            "not-removed", f"run {run_id} was not removed from this submission", Kind.CONFLICT
        )
    submission = record.submission
    label = point_of(record, link.run)
    if submission is not None and label is not None:
        point = find_point(submission, label)
        if point is not None and point.state == PointState.WITHDRAWN:
            raise RecordRefused(
                "point-withdrawn",
                f"the point {label} was withdrawn with the run; a withdrawal is final "
                "(rules §11.1): submit the run anew in a new submission",
                Kind.CONFLICT,
            )
    link.removed_at = None


def update_record(
    *, session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    run_ids: list[str] | None, target_availability_date: dt.date | None,
    embargo_date: dt.datetime | None, now: dt.datetime,
) -> None:  # fmt: skip
    """``submissions update``: the runs (only removed: rules §8), the embargo (moved, never
    added) and the target availability date (the chair's Preview extension, never an
    edit)."""
    authorize(who, record, Action.COMPOSE)
    if (
        target_availability_date is not None
        and target_availability_date != record.target_availability_date
    ):
        raise RecordRefused(
            "preview-extension",
            "a new target availability date is the one extension of a Preview window the "
            "chair may grant (rules §11.10: up to 60 days, asked at least 30 days before "
            "expiry); ask the chair, it is not changed here",
            Kind.CONFLICT,
            field="target_availability_date",
        )
    if embargo_date is not None:
        _move_embargo(session, settings, who, record, embargo_date, now)
    if run_ids is not None:
        _keep_only(session, settings, who, record, run_ids, now)


def _move_embargo(
    session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    embargo_date: dt.datetime, now: dt.datetime,
) -> None:  # fmt: skip
    if record.embargo_at is None:
        raise RecordRefused(
            "no-embargo", "an embargo can be moved, not added: it is declared at submission "
            "(rules §4.2)", Kind.CONFLICT, field="embargo_date",
        )  # fmt: skip
    _check_embargo(settings, embargo_date, now)
    if record.submission is not None:
        user = get_user(session, who.user_id)
        change_embargo(
            session=session, settings=settings, submission=record.submission,
            embargo=embargo_day(embargo_date, ZoneInfo(settings.cohort_timezone)),
            actor=user.email if user else who.email, who=who, at=now,
        )  # fmt: skip
    record.embargo_at = embargo_date


def _keep_only(
    session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    run_ids: list[str], now: dt.datetime,
) -> None:  # fmt: skip
    current = {link.run.public_id for link in record.runs if link.removed_at is None}
    known = {link.run.public_id for link in record.runs}
    added = [r for r in run_ids if r not in current]
    for run_id in added:  # the CLI's own undo puts back what it just removed
        if run_id not in known:
            raise RecordRefused(
                "runs-cannot-be-added",
                f"run {run_id} cannot be added: a submission's points are fixed at creation "
                "(rules §8); create a new submission",
                Kind.CONFLICT,
                field="run_ids",
            )
        restore_run(session=session, who=who, record=record, run_id=run_id)
    for run_id in sorted(current - set(run_ids)):
        remove_run(session=session, settings=settings, who=who, record=record, run_id=run_id,
                   now=now)  # fmt: skip


def withdraw_record(
    *, session: Session, settings: Settings, who: Principal, record: ApiSubmission,
    now: dt.datetime,
) -> None:  # fmt: skip
    """``submissions withdraw``: the portal's withdrawal (its rule decides when), or, before
    the bundle came, the record alone."""
    authorize(who, record, Action.COMPOSE)
    if record.submission is not None:
        withdraw(
            session=session, settings=settings, submission=record.submission, who=who,
            reason="withdrawn with endpoints-submission-cli", at=now,
        )  # fmt: skip
    elif record.withdrawn_at is not None:
        return
    record.withdrawn_at = now


def run_views(settings: Settings, runs: list[MeasuredRun]) -> list[RunOut]:
    return [run_out(settings, run) for run in runs]
