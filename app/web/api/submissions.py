"""/api/v1/submissions: upload, follow and read the checks of a submission."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.domain.accounts import Scope
from app.domain.compliance import RULES
from app.domain.lifecycle import FINISHED, SubmissionState
from app.services.accounts import Principal
from app.services.audit import timeline
from app.services.checks import retry_check
from app.services.decisions import decide, in_review
from app.services.publishing import PublishingError
from app.services.reproductions import ReproductionError, list_reproductions, request_reproduction
from app.services.views import (
    curve_dict,
    finding_dict,
    get_reproduction,
    latest_check_run,
    list_submissions,
    reproduction_dict,
    submission_summary,
)

from ..deps import QueueDep, SessionDep, SettingsDep, submission_or_404
from ..security import PrincipalDep, require
from ..uploads import UploadProblem, handle_upload

router = APIRouter(prefix="/api/v1", tags=["submissions"])


class ErrorBody(BaseModel):
    code: str
    message: str
    member: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


_UPLOAD_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": text}
    for status, text in (
        (400, "Malformed form or empty file"),
        (413, "Upload, archive member or expansion over the limits"),
        (415, "Not multipart, or not a .tar.gz/.tgz/.zip archive"),
        (422, "Unsafe or unreadable archive, or no submission layout inside"),
    )
}


def _links(public_id: str) -> dict[str, str]:
    return {
        "self": f"/api/v1/submissions/{public_id}",
        "findings": f"/api/v1/submissions/{public_id}/findings",
        "page": f"/submissions/{public_id}",
    }


@router.post(
    "/submissions",
    status_code=201,
    responses={200: {"description": "The same archive was uploaded before"}, **_UPLOAD_ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {
                                "type": "string",
                                "format": "binary",
                                "description": ".tar.gz, .tgz or .zip bundle",
                            },
                            "not_for_review": {
                                "type": "boolean",
                                "description": "an unverified result",
                            },
                            "publication_mode": {
                                "type": "string",
                                "enum": ["confidential", "provisional"],
                                "description": "rules §11.2; confidential by default",
                            },
                        },
                    }
                }
            },
        }
    },
)
async def create_submission(
    request: Request, session: SessionDep, settings: SettingsDep, queue: QueueDep
) -> JSONResponse:
    """Upload a submission bundle (multipart part ``file``) and queue its checks."""
    try:
        accepted = await handle_upload(request, session=session, settings=settings, queue=queue)
    except UploadProblem as problem:
        return JSONResponse(problem.to_json(), status_code=problem.status)
    body = {
        **submission_summary(accepted.submission),
        "duplicate": accepted.duplicate,
        "links": _links(accepted.submission.public_id),
    }
    return JSONResponse(body, status_code=200 if accepted.duplicate else 201)


@router.get("/submissions")
def read_submissions(
    session: SessionDep, who: PrincipalDep, limit: int = 50, offset: int = 0
) -> dict[str, Any]:
    """Published submissions; signed-in submitters and the committee see every one."""
    everything = who is not None and (who.has(Scope.SUBMIT) or who.has(Scope.REVIEW))
    rows, total = list_submissions(
        session, limit=min(max(limit, 1), 200), offset=max(offset, 0), everything=everything
    )
    return {"data": [submission_summary(s) for s in rows], "count": total}


@router.get("/submissions/{public_id}")
def read_submission(public_id: str, session: SessionDep) -> dict[str, Any]:
    submission = submission_or_404(session, public_id)
    run = latest_check_run(session, submission)
    reproductions = list_reproductions(session, submission)
    return {
        **submission_summary(submission),
        "links": _links(public_id),
        "counts": None
        if run is None
        else {"errors": run.error_count, "warnings": run.warning_count},
        "systems": [
            {
                "dir": s.dir_name,
                "system_name": s.system_name,
                "division": s.division,
                "availability": s.availability,
                "accelerator_model": s.accelerator_model,
                "accelerator_count": s.accelerator_count,
                "provisioned_power_kw": s.provisioned_power_kw,
            }
            for s in submission.systems
        ],
        "curves": [curve_dict(c, reproductions) for c in submission.curves],
    }


@router.get("/submissions/{public_id}/findings")
def read_findings(public_id: str, session: SessionDep) -> dict[str, Any]:
    """The latest check run, in the same shape as ``endpoints-portal check --json``."""
    submission = submission_or_404(session, public_id)
    run = latest_check_run(session, submission)
    if run is None:
        return {"verdict": None, "checker_version": None, "findings": [], "state": submission.state}
    return {
        "verdict": run.verdict,
        "checker_version": run.checker_version,
        "evaluated_at": run.evaluated_at.isoformat(),
        "findings": [finding_dict(f) for f in run.findings],
    }


@router.post("/submissions/{public_id}/checks", status_code=202)
def recheck_submission(public_id: str, session: SessionDep, queue: QueueDep) -> dict[str, Any]:
    """Run the checks again (after a check error, or after a checker upgrade)."""
    submission = submission_or_404(session, public_id)
    if SubmissionState(submission.state) not in FINISHED:
        raise HTTPException(409, detail="the checks of this submission are still running")
    retry_check(session=session, queue=queue, submission=submission)
    session.commit()
    return {"queued": True, "links": _links(public_id)}


@router.get("/rules", tags=["rules"])
def read_portal_rules() -> dict[str, Any]:
    """The portal's own rules (the official ones are the checker's catalogue)."""
    return {
        "data": [
            {"id": r.id, "title": r.title, "clause": r.clause, "summary": r.summary}
            for r in RULES.values()
        ]
    }


class ReproductionRequest(BaseModel):
    point: str = Field(
        description="the point as <system>/<model>/r<N>", examples=["sys/llama3_1-8b/r64"]
    )
    endpoint_url: str = Field(description="base URL of the OpenAI-compatible endpoint")
    model: str | None = Field(default=None, description="model name the endpoint serves")
    api_key: str | None = Field(default=None, description="kept encrypted until the run ends")
    time_cap_s: float = Field(default=300.0, gt=0)
    requested_by: str | None = None


@router.post(
    "/submissions/{public_id}/reproductions",
    status_code=202,
    tags=["reproductions"],
    responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}},
)
def create_reproduction(
    public_id: str,
    body: ReproductionRequest,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
) -> JSONResponse:
    """Re-run one point against an endpoint with the embedded harness (an unverified result)."""
    submission = submission_or_404(session, public_id)
    try:
        reproduction = request_reproduction(
            session=session,
            settings=settings,
            queue=queue,
            submission=submission,
            point_label=body.point,
            endpoint_url=body.endpoint_url,
            model=body.model,
            api_key=body.api_key,
            time_cap_s=body.time_cap_s,
            requested_by=body.requested_by,
        )
    except ReproductionError as exc:
        session.rollback()
        return JSONResponse(
            {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status
        )
    session.commit()
    return JSONResponse(reproduction_dict(reproduction), status_code=202)


@router.get("/submissions/{public_id}/reproductions", tags=["reproductions"])
def read_reproductions(public_id: str, session: SessionDep) -> dict[str, Any]:
    submission = submission_or_404(session, public_id)
    return {"data": [reproduction_dict(r) for r in list_reproductions(session, submission)]}


@router.get("/reproductions/{reproduction_id}", tags=["reproductions"])
def read_reproduction(reproduction_id: str, session: SessionDep) -> dict[str, Any]:
    reproduction = get_reproduction(session, reproduction_id)
    if reproduction is None:
        raise HTTPException(404, detail=f"no reproduction with id {reproduction_id!r}")
    return reproduction_dict(reproduction)


class DecisionRequest(BaseModel):
    action: str = Field(description="finalize, reject, withdraw or invalidate")
    reason: str | None = Field(default=None, description="required except to finalize")


@router.post("/submissions/{public_id}/decisions", tags=["review"])
def decide_submission(
    public_id: str,
    body: DecisionRequest,
    session: SessionDep,
    chair: Annotated[Principal, Depends(require(Scope.PUBLISH))],
) -> JSONResponse:
    """The chair's decision (a token with the ``publish`` scope); recorded in the timeline."""
    submission = submission_or_404(session, public_id)
    try:
        decide(
            session=session,
            submission=submission,
            action=body.action,
            actor=chair.email,
            reason=body.reason,
        )
    except PublishingError as exc:
        session.rollback()
        return JSONResponse(
            {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status
        )
    session.commit()
    return JSONResponse(submission_summary(submission))


@router.get("/submissions/{public_id}/timeline", tags=["review"])
def read_timeline(public_id: str, session: SessionDep) -> dict[str, Any]:
    """Every state change of the submission: who, when, why (append-only)."""
    submission = submission_or_404(session, public_id)
    return {
        "data": [
            {
                "at": e.at.isoformat(),
                "actor": e.actor,
                "action": e.action,
                "from": e.from_state,
                "to": e.to_state,
                "reason": e.reason,
            }
            for e in timeline(session, submission)
        ]
    }


@router.get("/review/queue", tags=["review"])
def review_queue(
    session: SessionDep,
    _reviewer: Annotated[Principal, Depends(require(Scope.REVIEW))],
) -> dict[str, Any]:
    """Submissions awaiting review (the committee's token)."""
    return {"data": [submission_summary(s) for s in in_review(session)]}
