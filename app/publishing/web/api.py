"""A cohort's publication: the chair publishes, anyone reads what was published."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.background import BackgroundTask

from app.accounts.services.accounts import Principal
from app.accounts.web.security import require
from app.core.authorization import Scope
from app.core.cohorts import Cohort
from app.core.refusals import Kind, Refused
from app.publishing.services.cohorts import (
    PublicationView,
    cohort_publications,
    publication_view,
    publish_cohort,
)
from app.publishing.services.export import cohort_exists, write_cohort_export
from app.web.api_errors import refused
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["cohorts"])


def _cohort_or_422(cohort_id: str) -> Cohort:
    cohort = Cohort.parse(cohort_id)
    if cohort is None:
        raise Refused(
            "bad-cohort",
            f"{cohort_id!r} is not a cohort id (YYYY-MM-C0/C1)",
            Kind.INVALID,
            field="cohort_id",
        )
    return cohort


def _released_or_404(session: Session, cohort_id: str) -> None:
    _cohort_or_422(cohort_id)
    if not cohort_exists(session, cohort_id):
        raise Refused(
            "not-found",
            f"cohort {cohort_id!r} has not been published",
            Kind.NOT_FOUND,
            field="cohort_id",
        )


class Released(BaseModel):
    """What a release published (nothing, when the cohort had been released before)."""

    cohort: str
    published_by: str
    data: list[PublicationView]


class CohortRecord(BaseModel):
    cohort: str
    links: dict[str, str]
    data: list[PublicationView]


@router.post("/cohorts/{cohort_id}/publish", response_model=Released)
def publish(
    cohort_id: str,
    session: SessionDep,
    settings: SettingsDep,
    chair: Annotated[Principal, Depends(require(Scope.PUBLISH))],
    now: NowDep,
) -> Released | JSONResponse:
    """Release the cohort due now (the chair's token): every result due in it joins its
    record, with result ids for reviewed results. 409 before the cohort's publication
    time (Wednesday 08:00 Pacific) and for any cohort but the one due now. Idempotent: a
    cohort already released answers with no new publication."""
    try:
        created = publish_cohort(
            session=session, settings=settings, cohort_id=cohort_id, at=now, actor=chair.email
        )
    except Refused as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return Released(
        cohort=cohort_id, published_by=chair.email, data=[publication_view(p) for p in created]
    )


@router.get("/cohorts/{cohort_id}", response_model=CohortRecord)
def read_cohort(cohort_id: str, session: SessionDep) -> CohortRecord:
    """What was published in a cohort (public), with tags of withdrawn/invalidated results."""
    _released_or_404(session, cohort_id)
    return CohortRecord(
        cohort=cohort_id,
        links={"export": f"/api/v1/cohorts/{cohort_id}/export"},
        data=cohort_publications(session, cohort_id),
    )


@router.get(
    "/cohorts/{cohort_id}/export",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}}, 404: {"description": "Nothing public"}},
)
def export_cohort(cohort_id: str, session: SessionDep, settings: SettingsDep) -> FileResponse:
    """The cohort's public results (``cohort.json``) and the bundles of its finalized
    results, as one .tar.gz."""
    _released_or_404(session, cohort_id)
    settings.tmp_dir.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=settings.tmp_dir, suffix=".tar.gz", delete=False)
    handle.close()
    target = Path(handle.name)
    try:
        write_cohort_export(session, settings, cohort_id, target)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return FileResponse(
        target,
        media_type="application/gzip",
        filename=f"endpoints-{cohort_id}.tar.gz",
        background=BackgroundTask(target.unlink, missing_ok=True),
    )
