"""A cohort's publication: the chair publishes, anyone reads what was published."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import JSONResponse
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app.db.models import Publication
from app.domain.accounts import Scope
from app.services.accounts import Principal
from app.services.publishing import PublishingError, publish_cohort

from ..deps import SessionDep
from ..security import require

router = APIRouter(prefix="/api/v1", tags=["cohorts"])


def _publication(p: Publication) -> dict[str, Any]:
    return {
        "submission": p.submission.public_id,
        "organization": p.submission.organization.name,
        "status": p.status,
        "cohort": p.cohort,
        "published_at": p.published_at.isoformat(),
        "curves": [
            {
                "benchmark": c.benchmark_model,
                "system": c.system_name,
                "points": len(c.data.get("points", [])),
            }
            for c in p.curves
        ],
    }


@router.post("/cohorts/{cohort_id}/publish")
def publish(
    cohort_id: str,
    session: SessionDep,
    chair: Annotated[Principal, Depends(require(Scope.PUBLISH))],
) -> JSONResponse:
    """Publish every result due in the cohort (the chair's token). Idempotent."""
    try:
        created = publish_cohort(session=session, cohort_id=cohort_id)
    except PublishingError as exc:
        return JSONResponse(
            {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status
        )
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
    """What was published in a cohort (public)."""
    rows = session.scalars(
        select(Publication)
        .where(Publication.cohort == cohort_id)
        .options(selectinload(Publication.curves), selectinload(Publication.submission))
        .order_by(Publication.id)
    ).all()
    if not rows:
        raise HTTPException(404, detail=f"nothing was published in {cohort_id!r}")
    return {"cohort": cohort_id, "data": [_publication(p) for p in rows]}
