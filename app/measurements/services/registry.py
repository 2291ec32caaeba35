"""The registry of measured runs: a submitter registers each run as it is measured (the
official CLI's ``runs create``), its archive arrives through a signed URL, and a
submission is later built from runs. The organisation is the unit that submits, so a
run is its organisation's: its members list, read, pin and delete it. Runs expire by the
portal's policy unless pinned; a run inside a live submission never does.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from pydantic import AwareDatetime, BaseModel, Field
from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.digests import canonical_digest
from app.core.lifecycle import TERMINAL
from app.core.refusals import Kind, Refused
from app.db.models import (
    ApiSubmission,
    ApiSubmissionRun,
    MeasuredRun,
    StoredFile,
    Submission,
    utcnow,
)
from app.measurements.domain.run_folder import (
    REQUIRED,
    disagreement,
    run_concurrency,
    run_model,
)
from app.settings import Settings
from app.storage import StorageError, archive_key, artifact_store
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.services.archives import store_unavailable
from app.submissions.services.reading import read_in_child
from app.submissions.services.storage import ReceivedFile

log = logging.getLogger(__name__)

RUN_READER = "app.measurements.domain.reader:read_run"


class RunRefused(Refused):
    pass


class RunCreate(BaseModel):
    """What ``runs create`` sends (the official API's RunCreate): the run folder's files as
    the CLI parsed them, and the record's own fields. Times carry their zone."""

    benchmark_version: str = Field(max_length=200)
    started_at: AwareDatetime
    finished_at: AwareDatetime
    system_info: dict[str, Any]
    config: dict[str, Any]
    result_summary: dict[str, Any]
    point_config: dict[str, Any]
    system_power: dict[str, Any] | None = None
    expires_at: AwareDatetime | None = None
    pinned: bool = False
    is_test: bool = False
    cli_version: str | None = Field(default=None, max_length=64)


def _not_found(public_id: str) -> RunRefused:
    return RunRefused("no-such-run", f"no run {public_id!r}", Kind.NOT_FOUND)


def register_run(
    *, session: Session, settings: Settings, who: Principal, payload: RunCreate, now: dt.datetime
) -> MeasuredRun:
    """A new run of *who*'s organisation, awaiting its archive."""
    if who.organization_id is None:
        raise RunRefused(
            "no-organization", "runs are an organisation's: this account has none", Kind.FORBIDDEN
        )
    if payload.finished_at < payload.started_at:
        raise RunRefused("bad-times", "finished_at is before started_at")
    expires = None if payload.pinned else (payload.expires_at or default_expiry(settings, now))
    if expires is not None and expires <= now:
        raise RunRefused("bad-expiry", "expires_at is in the past")
    run = MeasuredRun(
        organization_id=who.organization_id,
        user_id=who.user_id,
        model=run_model(payload.config),
        concurrency=run_concurrency(payload.config),
        benchmark_version=payload.benchmark_version[:200],
        cli_version=(payload.cli_version or "")[:32] or None,
        started_at=payload.started_at,
        finished_at=payload.finished_at,
        expires_at=expires,
        pinned=payload.pinned,
        is_test=payload.is_test,
        system_info=payload.system_info,
        config=payload.config,
        result_summary=payload.result_summary,
        point_config=payload.point_config,
        system_power=payload.system_power,
        created_at=now,
    )
    session.add(run)
    session.flush()
    return run


def default_expiry(settings: Settings, now: dt.datetime) -> dt.datetime:
    return now + dt.timedelta(days=settings.run_expiry_days)


def organization_runs(session: Session, organization_id: int) -> list[MeasuredRun]:
    """The organisation's runs, newest first."""
    return list(
        session.scalars(
            select(MeasuredRun)
            .where(MeasuredRun.organization_id == organization_id)
            .order_by(MeasuredRun.created_at.desc(), MeasuredRun.id.desc())
        )
    )


def run_of(session: Session, who: Principal, public_id: str) -> MeasuredRun:
    """The run, if it is *who*'s organisation's; another organisation's is not there."""
    run = session.scalar(select(MeasuredRun).where(MeasuredRun.public_id == public_id))
    if run is None or who.organization_id is None or run.organization_id != who.organization_id:
        raise _not_found(public_id)
    return run


def live_use() -> Any:
    """SQL: the run is part of a live submission (not withdrawn, its portal submission,
    if any, not rejected, withdrawn or invalidated)."""
    return exists(
        select(ApiSubmissionRun.id)
        .join(ApiSubmission, ApiSubmissionRun.api_submission_id == ApiSubmission.id)
        .outerjoin(Submission, ApiSubmission.submission_id == Submission.id)
        .where(
            ApiSubmissionRun.run_id == MeasuredRun.id,
            ApiSubmissionRun.removed_at.is_(None),
            ApiSubmission.withdrawn_at.is_(None),
            (Submission.id.is_(None)) | Submission.state.not_in(sorted(TERMINAL)),
        )
    )


def in_live_use(session: Session, run: MeasuredRun) -> bool:
    return bool(session.scalar(select(live_use().where(MeasuredRun.id == run.id))))


def pin(run: MeasuredRun) -> None:
    run.pinned = True
    run.expires_at = None


def unpin(settings: Settings, run: MeasuredRun, now: dt.datetime) -> None:
    """Back to the expiry policy, counted from now."""
    run.pinned = False
    run.expires_at = default_expiry(settings, now)


def take_run_archive(
    *, session: Session, settings: Settings, run: MeasuredRun, received: ReceivedFile
) -> None:
    """Read a run's archive in the reading child, check that its four files hold what the
    run was registered with, and keep it at its content address. Refused (nothing kept)
    with what is wrong; a run keeps the archive it has."""
    if run.archive is not None:
        received.path.unlink(missing_ok=True)
        raise RunRefused(
            "archive-present",
            "the run has its archive already; delete it first to send another",
            Kind.CONFLICT,
        )
    try:
        reading = read_in_child(settings, received.path, reader=RUN_READER)
    except ArchiveRejected as exc:
        received.path.unlink(missing_ok=True)
        raise RunRefused(exc.code, exc.message, exc.kind) from exc
    reading.discard()
    registered = {field: canonical_digest(getattr(run, field)) for field in REQUIRED.values()}
    if (differs := disagreement(registered, reading.facts["digests"])) is not None:
        received.path.unlink(missing_ok=True)
        raise RunRefused("run-archive-mismatch", differs)
    stored = session.scalar(select(StoredFile).where(StoredFile.sha256 == received.sha256))
    if stored is None:
        stored = StoredFile(sha256=received.sha256, size=received.size, kind="run-archive")
        session.add(stored)
    try:
        artifact_store(settings).put_file(archive_key(received.sha256), received.path)
    except StorageError as exc:
        received.path.unlink(missing_ok=True)
        raise store_unavailable(exc, ", so nothing was recorded") from exc
    run.archive = stored


def _forget_archive(session: Session, settings: Settings, stored: StoredFile) -> None:
    """Remove a stored archive nothing else refers to (another run, a submission)."""
    others = session.scalar(
        select(MeasuredRun.id).where(MeasuredRun.archive_id == stored.id).limit(1)
    ) or session.scalar(select(Submission.id).where(Submission.archive_id == stored.id).limit(1))
    if others is not None:
        return
    try:
        artifact_store(settings).delete(archive_key(stored.sha256))
    except StorageError:  # the row goes; the object is a stray the operator may sweep
        log.warning("the archive %s could not be removed from the store", stored.sha256)
    session.delete(stored)


def delete_run_archive(session: Session, settings: Settings, run: MeasuredRun) -> None:
    """The run's archive, gone (the CLI's clean-up after a failed upload)."""
    if in_live_use(session, run):
        raise RunRefused(
            "run-in-use", "the run is part of a live submission: its archive stays", Kind.CONFLICT
        )
    stored, run.archive = run.archive, None
    session.flush()
    if stored is not None:
        _forget_archive(session, settings, stored)


def delete_run(session: Session, settings: Settings, run: MeasuredRun) -> None:
    """The run and its archive, gone; refused while a live submission uses it."""
    if in_live_use(session, run):
        raise RunRefused(
            "run-in-use",
            "the run is part of a live submission; withdraw the submission or remove the run "
            "from it first",
            Kind.CONFLICT,
        )
    stored = run.archive
    session.execute(delete(ApiSubmissionRun).where(ApiSubmissionRun.run_id == run.id))
    session.delete(run)
    session.flush()
    if stored is not None:
        _forget_archive(session, settings, stored)


def expire_runs(session: Session, settings: Settings, now: dt.datetime | None = None) -> list[str]:
    """Remove the runs past their expiry that no live submission uses, archives included;
    the ids removed. A pinned run has no expiry."""
    now = now or utcnow()
    due = session.scalars(
        select(MeasuredRun).where(
            MeasuredRun.expires_at.is_not(None), MeasuredRun.expires_at <= now, ~live_use()
        )
    ).all()
    gone = []
    for run in due:
        gone.append(run.public_id)
        delete_run(session, settings, run)
    return gone


def usable_for_a_submission(run: MeasuredRun) -> RunRefused | None:
    """Why *run* cannot go into a submission, if it cannot."""
    if run.archive is None:
        return RunRefused(
            "run-without-archive", f"run {run.public_id} has no archive yet", Kind.CONFLICT
        )
    return None
