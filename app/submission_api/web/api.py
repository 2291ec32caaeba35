"""The official Submission API at ``/submission-api``: every route the pinned
``endpoints-submission-cli`` calls, in the shapes it sends and reads, over the portal's
services (``MLPERF_API_BASE_URL=<portal>/submission-api``, the token in ``X-API-Key``).

A caller sees its organisation's runs and submissions only: anything else is a 404, as
if it did not exist. A CLI older than the required major.minor is answered 426 with a
``detail`` that names the release and the upgrade command, as the official service does.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import authorize
from app.accounts.web.security import MemberDep
from app.core.authorization import Action
from app.core.refusals import Kind, Refused
from app.db.models import MeasuredRun
from app.measurements.services.registry import (
    RunCreate,
    delete_run,
    delete_run_archive,
    organization_runs,
    pin,
    register_run,
    run_of,
    unpin,
)
from app.measurements.services.views import RunOut, RunSummary, run_out, run_summary
from app.settings import Settings
from app.submission_api.domain.versions import too_old
from app.submission_api.services.records import (
    SubmissionCreate,
    SubmissionRecord,
    create_record,
    record_of,
    record_view,
    records_of,
    remove_run,
    restore_run,
    update_record,
    withdraw_record,
)
from app.submission_api.services.transfers import awaiting_upload, download_url, upload_url
from app.web.api_errors import refused
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep
from app.web.threads import in_thread

router = APIRouter(prefix="/submission-api", tags=["submission-api"])
T = TypeVar("T")
# How long a download URL waits for a run's archive still on its way through the store
# (within the CLI's 30-second read timeout).
ARCHIVE_WAIT_S = 20.0


class UpgradeRequired(BaseModel):
    """A 426: the CLI is older than the portal takes (its detail says what to do)."""

    detail: str


OLD_CLI: dict[int | str, dict[str, Any]] = {
    426: {"model": UpgradeRequired, "description": "The CLI is older than the portal takes"}
}


class SignedURLs(BaseModel):
    upload_url: str | None = None
    download_url: str | None = None
    expires_in: int


class SubmissionBody(BaseModel):
    """The official CLI's ``POST /submissions`` body."""

    division: str = Field(max_length=32)
    scenario: str = Field(max_length=8)
    availability: str = Field(max_length=32)
    run_ids: list[str] = Field(max_length=512)
    is_test: bool = False
    early_publish: bool = False
    target_availability_date: dt.date | None = None
    embargo_date: dt.datetime | None = None
    cli_version: str | None = Field(default=None, max_length=64)


class SubmissionPatch(BaseModel):
    """The official CLI's ``PATCH /submissions/{id}`` body: only the fields sent change."""

    run_ids: list[str] | None = Field(default=None, max_length=512)
    target_availability_date: dt.date | None = None
    embargo_date: dt.datetime | None = None


def _aware(at: dt.datetime | None, field: str) -> dt.datetime | None:
    if at is not None and at.tzinfo is None:
        raise Refused(
            "naive-datetime", f"{field} needs a time zone (e.g. Z or -08:00)", field=field
        )
    return at


def _too_old(settings: Settings, cli_version: str | None) -> JSONResponse | None:
    minimum = settings.submission_api_minimum_cli
    detail = too_old(cli_version, minimum)
    return None if detail is None else JSONResponse({"detail": detail}, status_code=426)


def _done(session: Session, answer: T) -> T:
    """*answer*, once what made it is committed."""
    session.commit()
    return answer


# --- runs -----------------------------------------------------------------------------


@router.get("/runs", response_model=list[RunSummary])
def list_runs(session: SessionDep, who: MemberDep) -> list[RunSummary]:
    """The caller's organisation's runs (the official service lists the caller's own;
    the organisation is the unit that submits)."""
    if who.organization_id is None:
        return []
    return [run_summary(run) for run in organization_runs(session, who.organization_id)]


@router.post("/runs", response_model=RunOut, status_code=201, responses=OLD_CLI)
def create_run(
    body: RunCreate, session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> RunOut | JSONResponse:
    """Register a measured run; its archive follows through ``…/archive/upload-url``."""
    if (old := _too_old(settings, body.cli_version)) is not None:
        return old
    try:
        run = register_run(session=session, settings=settings, who=who, payload=body, now=now)
    except Refused as exc:
        session.rollback()
        return refused(exc)
    return _done(session, run_out(settings, run))


@router.get("/runs/{run_id}", response_model=RunOut)
def get_run(run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep) -> RunOut:
    return run_out(settings, run_of(session, who, run_id))


@router.delete("/runs/{run_id}", status_code=204)
def remove_run_record(
    run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep
) -> Response:
    """Delete a run and its archive; refused while a live submission uses it."""
    run = run_of(session, who, run_id)
    authorize(who, run, Action.MANAGE_RUNS)
    delete_run(session, settings, run)
    session.commit()
    return Response(status_code=204)


@router.patch("/runs/{run_id}/pin", response_model=RunOut)
def pin_run(run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep) -> RunOut:
    """Keep the run: no expiry."""
    run = run_of(session, who, run_id)
    authorize(who, run, Action.MANAGE_RUNS)
    pin(run)
    return _done(session, run_out(settings, run))


@router.patch("/runs/{run_id}/unpin", response_model=RunOut)
def unpin_run(
    run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> RunOut:
    """The expiry policy again, counted from now."""
    run = run_of(session, who, run_id)
    authorize(who, run, Action.MANAGE_RUNS)
    unpin(settings, run, now)
    return _done(session, run_out(settings, run))


@router.get("/runs/{run_id}/archive/upload-url", response_model=SignedURLs)
def run_upload_url(
    run_id: str, session: SessionDep, settings: SettingsDep, queue: QueueDep, who: MemberDep,
    now: NowDep,
) -> SignedURLs:  # fmt: skip
    """A URL that takes the run's archive once (PUT, ``application/octet-stream``)."""
    run = run_of(session, who, run_id)
    authorize(who, run, Action.MANAGE_RUNS)
    signed = upload_url(session=session, settings=settings, queue=queue, subject="run",
                        subject_id=run.public_id, now=now)  # fmt: skip
    return _done(session, SignedURLs(upload_url=signed.url, expires_in=signed.expires_in))


def _run_and_pending(
    session: Session, who: Principal, run_id: str, now: dt.datetime
) -> tuple[MeasuredRun, bool]:
    """The run as stored now, and whether its archive is still on its way (just PUT to
    its presigned URL)."""
    session.expire_all()
    run = run_of(session, who, run_id)
    return run, run.archive is None and awaiting_upload(session, "run", run.public_id, now)


@router.get("/runs/{run_id}/archive", response_model=SignedURLs)
async def run_download_url(
    run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> SignedURLs | JSONResponse:
    """A URL that gives the run's archive for a few minutes. An archive still on its way
    through the store is waited for a while, as the CLI composes a submission right after
    registering its runs."""
    deadline = now + dt.timedelta(seconds=ARCHIVE_WAIT_S)
    run, pending = await in_thread(_run_and_pending, session, who, run_id, now)
    while pending and dt.datetime.now(dt.UTC) < deadline:
        await asyncio.sleep(0.25)
        run, pending = await in_thread(_run_and_pending, session, who, run_id, now)
    if run.archive is None:
        return refused(Refused("no-archive", f"run {run_id} has no archive yet", Kind.CONFLICT))
    signed = download_url(settings, run.archive.sha256, f"{run.public_id}.tar.gz", now)
    return SignedURLs(download_url=signed.url, expires_in=signed.expires_in)


@router.delete("/runs/{run_id}/archive", status_code=204)
def remove_run_archive(
    run_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep
) -> Response:
    run = run_of(session, who, run_id)
    authorize(who, run, Action.MANAGE_RUNS)
    delete_run_archive(session, settings, run)
    session.commit()
    return Response(status_code=204)


# --- submissions -----------------------------------------------------------------------


@router.get("/submissions", response_model=list[SubmissionRecord])
def list_submissions(
    session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> list[SubmissionRecord]:
    """The caller's organisation's submissions composed from runs."""
    return [record_view(session, settings, r, now) for r in records_of(session, who)]


@router.post("/submissions", status_code=201, response_model=SubmissionRecord, responses=OLD_CLI)
def create_submission(
    body: SubmissionBody, session: SessionDep, settings: SettingsDep, who: MemberDep,
    now: NowDep,
) -> SubmissionRecord | JSONResponse:  # fmt: skip
    """Register a submission built from the organisation's runs; its bundle follows
    through ``…/archive/upload-url``, and enters the portal's intake and checks."""
    if (old := _too_old(settings, body.cli_version)) is not None:
        return old
    embargo = _aware(body.embargo_date, "embargo_date")
    spec = SubmissionCreate(**{**body.model_dump(), "embargo_date": embargo})
    record = create_record(session=session, settings=settings, who=who, body=spec, now=now)
    session.flush()
    return _done(session, record_view(session, settings, record, now, include_runs=True))


@router.get("/submissions/{submission_id}", response_model=SubmissionRecord)
def get_submission(
    submission_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep,
    now: NowDep, include_runs: Annotated[bool, Query()] = False,
) -> SubmissionRecord:  # fmt: skip
    record = record_of(session, who, submission_id)
    return record_view(session, settings, record, now, include_runs=include_runs)


@router.patch("/submissions/{submission_id}", response_model=SubmissionRecord)
def patch_submission(
    submission_id: str, body: SubmissionPatch, session: SessionDep, settings: SettingsDep,
    who: MemberDep, now: NowDep,
) -> SubmissionRecord:  # fmt: skip
    """Remove runs (never add: rules §8), move the embargo; a new target availability
    date is the chair's Preview extension, refused here."""
    record = record_of(session, who, submission_id)
    sent = body.model_fields_set
    update_record(
        session=session, settings=settings, who=who, record=record,
        run_ids=body.run_ids if "run_ids" in sent else None,
        target_availability_date=body.target_availability_date,
        embargo_date=_aware(body.embargo_date, "embargo_date"), now=now,
    )  # fmt: skip
    return _done(session, record_view(session, settings, record, now, include_runs=True))


@router.delete("/submissions/{submission_id}", response_model=SubmissionRecord)
def withdraw_submission(
    submission_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep,
    now: NowDep,
) -> SubmissionRecord:  # fmt: skip
    """Withdraw it, by the portal's own withdrawal rule."""
    record = record_of(session, who, submission_id)
    withdraw_record(session=session, settings=settings, who=who, record=record, now=now)
    return _done(session, record_view(session, settings, record, now))


@router.delete("/submissions/{submission_id}/runs/{run_id}", response_model=SubmissionRecord)
def remove_submission_run(
    submission_id: str, run_id: str, session: SessionDep, settings: SettingsDep,
    who: MemberDep, now: NowDep,
) -> SubmissionRecord:  # fmt: skip
    """Remove a run: the point it became is withdrawn (rules §8)."""
    record = record_of(session, who, submission_id)
    remove_run(session=session, settings=settings, who=who, record=record, run_id=run_id,
               now=now)  # fmt: skip
    return _done(session, record_view(session, settings, record, now, include_runs=True))


@router.post("/submissions/{submission_id}/runs/{run_id}", response_model=SubmissionRecord)
def restore_submission_run(
    submission_id: str, run_id: str, session: SessionDep, settings: SettingsDep,
    who: MemberDep, now: NowDep,
) -> SubmissionRecord:  # fmt: skip
    """Undo a removal (the CLI's roll-back), while no point was withdrawn for it."""
    record = record_of(session, who, submission_id)
    restore_run(session=session, who=who, record=record, run_id=run_id)
    return _done(session, record_view(session, settings, record, now, include_runs=True))


@router.get("/submissions/{submission_id}/archive/upload-url", response_model=SignedURLs)
def submission_upload_url(
    submission_id: str, session: SessionDep, settings: SettingsDep, queue: QueueDep,
    who: MemberDep, now: NowDep,
) -> SignedURLs:  # fmt: skip
    """A URL that takes the submission's bundle once."""
    record = record_of(session, who, submission_id)
    authorize(who, record, Action.COMPOSE)
    signed = upload_url(session=session, settings=settings, queue=queue, subject="submission",
                        subject_id=record.public_id, now=now)  # fmt: skip
    return _done(session, SignedURLs(upload_url=signed.url, expires_in=signed.expires_in))


@router.get("/submissions/{submission_id}/archive", response_model=SignedURLs)
def submission_download_url(
    submission_id: str, session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> SignedURLs | JSONResponse:
    """A URL that gives the submission's bundle as stored, for a few minutes."""
    record = record_of(session, who, submission_id)
    if record.submission is None:
        return refused(Refused("no-archive", "the bundle has not arrived", Kind.CONFLICT))
    submission = record.submission
    suffix = ".zip" if submission.archive_format == "zip" else ".tar.gz"
    signed = download_url(settings, submission.archive.sha256, record.public_id + suffix, now)
    return SignedURLs(download_url=signed.url, expires_in=signed.expires_in)
