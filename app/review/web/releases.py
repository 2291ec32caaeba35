"""The chair releases a cohort through the API (what was published is read through the
public record, ``app.results``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.accounts.services.accounts import Principal
from app.accounts.web.security import require
from app.core.authorization import Scope
from app.core.refusals import Refused
from app.publishing.services.cohorts import PublicationView, publication_view
from app.review.services.releases import CohortPlan, publish_cohort, release_plan
from app.web.api_errors import ErrorBody, refused
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["cohorts"])


class Released(BaseModel):
    """What a release published (nothing, when the cohort had been released before)."""

    cohort: str
    published_by: str
    data: list[PublicationView]


@router.post(
    "/cohorts/{cohort_id}/publish",
    response_model=Released,
    responses={
        409: {
            "model": ErrorBody,
            "description": "Not the cohort due now, or before its publication time "
            "(Wednesday 08:00 Pacific): nothing was published",
        }
    },
)
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


@router.get(
    "/cohorts/{cohort_id}/plan",
    response_model=CohortPlan,
    responses={409: {"model": ErrorBody, "description": "A past cohort: it cannot be published"}},
)
def plan(
    cohort_id: str,
    session: SessionDep,
    settings: SettingsDep,
    chair: Annotated[Principal, Depends(require(Scope.PUBLISH))],
    now: NowDep,
) -> CohortPlan | JSONResponse:
    """What releasing the cohort publishes (the chair's token), nothing published: at any
    time, for the cohort due now or a later one; before its time, what it would publish at
    its time as things stand (``publishable_now`` false). A released cohort says when and
    by whom."""
    try:
        return release_plan(session=session, settings=settings, cohort_id=cohort_id, at=now,
                            actor=chair.email, confirmed=False)  # fmt: skip
    except Refused as exc:
        session.rollback()
        return refused(exc)
