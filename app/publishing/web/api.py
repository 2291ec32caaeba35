"""A cohort's publication: the chair publishes, anyone reads what was published."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import FileResponse, JSONResponse
from sqlalchemy import select
from sqlalchemy.orm import selectinload
from starlette.background import BackgroundTask

from app.accounts.domain import Scope
from app.accounts.services.accounts import Principal
from app.accounts.web.security import require
from app.core.cohorts import Cohort
from app.core.refusals import Refused
from app.db.models import Publication
from app.publishing.services.export import cohort_exists, write_cohort_export
from app.review.services.review import publish_cohort
from app.web.api_errors import refused
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["cohorts"])


def _publication(p: Publication) -> dict[str, Any]:
    return {
        "submission": p.submission.public_id,
        "organization": p.submission.organization.name,
        "status": p.status,
        "cohort": p.cohort,
        "published_at": p.published_at.isoformat(),
        "description": p.description,
        "curves": [
            {
                "result_id": c.result_id,
                "benchmark": c.benchmark_model,
                "dataset": c.dataset,
                "system": c.system_name,
                "points": len(c.data.get("points", [])),
            }
            for c in p.curves
        ],
    }


def _cohort_or_422(cohort_id: str) -> Cohort:
    cohort = Cohort.parse(cohort_id)
    if cohort is None:
        raise HTTPException(422, detail=f"{cohort_id!r} is not a cohort id (YYYY-MM-C0/C1)")
    return cohort


@router.post("/cohorts/{cohort_id}/publish")
def publish(
    cohort_id: str,
    session: SessionDep,
    settings: SettingsDep,
    chair: Annotated[Principal, Depends(require(Scope.PUBLISH))],
    now: NowDep,
) -> JSONResponse:
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
    return JSONResponse(
        {
            "cohort": cohort_id,
            "published_by": chair.email,
            "data": [_publication(p) for p in created],
        }
    )


@router.get("/cohorts/{cohort_id}")
def read_cohort(cohort_id: str, session: SessionDep) -> dict[str, Any]:
    """What was published in a cohort (public), with tags of withdrawn/invalidated results."""
    _cohort_or_422(cohort_id)
    if not cohort_exists(session, cohort_id):
        raise HTTPException(404, detail=f"cohort {cohort_id!r} has not been published")
    rows = session.scalars(
        select(Publication)
        .where(Publication.cohort == cohort_id, Publication.in_record())
        .options(selectinload(Publication.curves), selectinload(Publication.submission))
        .order_by(Publication.id)
    ).all()
    return {
        "cohort": cohort_id,
        "links": {"export": f"/api/v1/cohorts/{cohort_id}/export"},
        "data": [_publication(p) for p in rows],
    }


@router.get(
    "/cohorts/{cohort_id}/export",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}}, 404: {"description": "Nothing public"}},
)
def export_cohort(cohort_id: str, session: SessionDep, settings: SettingsDep) -> FileResponse:
    """The cohort's public results (``cohort.json``) and the bundles of its finalized
    results, as one .tar.gz."""
    _cohort_or_422(cohort_id)
    if not cohort_exists(session, cohort_id):
        raise HTTPException(404, detail=f"nothing was published up to {cohort_id!r}")
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
