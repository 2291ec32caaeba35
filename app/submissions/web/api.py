"""/api/v1/submissions: upload, follow and read the checks of a submission."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.accounts.web.security import (
    MemberDep,
    PrincipalDep,
    submitter_or_chair,
    visible_submission,
)
from app.checks.services.checks import retry_check
from app.db.models import User
from app.review.domain.policy import may_recheck
from app.review.services.policy import facts_of
from app.review.services.review import review_summary
from app.runs.services.reproductions import (
    list_reproductions,
)
from app.submissions.domain.visibility import Access, Viewer
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.status import SubmissionStatus, submission_status
from app.submissions.services.views import (
    curve_dict,
    finding_dict,
    latest_check_run,
    list_submissions,
    submission_summary,
)
from app.submissions.services.visibility import access_to, viewer_of
from app.submissions.web.uploads import UploadProblem, handle_upload
from app.web.api_errors import ErrorBody, error_response, refused
from app.web.deps import QueueDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["submissions"])


_UPLOAD_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
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
                            "embargo_date": {
                                "type": "string",
                                "format": "date",
                                "description": "rules §4.2: hold the publication until then",
                            },
                        },
                    }
                }
            },
        }
    },
)
async def create_submission(
    request: Request, session: SessionDep, settings: SettingsDep, queue: QueueDep, who: MemberDep
) -> JSONResponse:
    """Upload a submission bundle (multipart part ``file``) and queue its checks; a token
    with the ``submit`` scope, for the token holder's organisation."""
    try:
        accepted = await handle_upload(
            request,
            session=session,
            settings=settings,
            queue=queue,
            uploader=session.get(User, who.user_id),
        )
    except UploadProblem as problem:
        return error_response(problem.code, problem.message, problem.status, member=problem.member)
    body = {
        **submission_summary(accepted.submission),
        "duplicate": accepted.duplicate,
        "links": _links(accepted.submission.public_id),
    }
    return JSONResponse(body, status_code=200 if accepted.duplicate else 201)


@router.get("/submissions")
def read_submissions(
    session: SessionDep,
    who: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
) -> dict[str, Any]:
    """Published submissions; signed-in submitters and the committee see every one."""
    everything = viewer_of(who) == Viewer.MEMBER
    rows, total = list_submissions(session, limit=limit, offset=offset, everything=everything)
    return {"data": [submission_summary(s) for s in rows], "count": total}


@router.get("/submissions/{public_id}")
def read_submission(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> dict[str, Any]:
    """A submission: its results for anyone who may see them (rules §11.9); its review
    (counts, reproductions, reviewer, clocks) for the committee and submitters."""
    submission = visible_submission(session, who, public_id)
    if access_to(session, who, submission) < Access.FULL:
        return {
            **submission_summary(submission),
            "links": _links(public_id),
            "curves": [curve_dict(c, active_only=True) for c in submission.curves],
        }
    run = latest_check_run(session, submission)
    reproductions = list_reproductions(session, submission)
    review = access_to(session, who, submission) >= Access.REVIEW
    disclosures = system_disclosures(settings, submission)
    return {
        **submission_summary(submission),
        "review": review_summary(session, settings, submission) if review else None,
        "links": _links(public_id),
        "counts": None
        if run is None
        else {"errors": run.error_count, "warnings": run.warning_count},
        "systems": [
            {
                # Named as the curves and the results API name them.
                "system": s.system_name or s.dir_name,
                "system_dir": s.dir_name,
                "division": s.division,
                "availability": s.availability,
                "accelerator_model": s.accelerator_model,
                "accelerator_count": s.accelerator_count,
                "node_count": s.node_count,
                "serving_framework": s.serving_framework,
                "provisioned_power_kw": s.provisioned_power_kw,
                "disclosures": disclosures.get(s.dir_name, {}).get("fields", {}),
                "steady_state": disclosures.get(s.dir_name, {}).get("steady_state", {}),
            }
            for s in submission.systems
        ],
        "curves": [curve_dict(c, reproductions) for c in submission.curves],
    }


@router.get("/submissions/{public_id}/status", response_model=SubmissionStatus)
def read_submission_status(
    public_id: str, session: SessionDep, who: PrincipalDep
) -> SubmissionStatus:
    """What a page follows while work runs: the state, the check job's progress, and how
    many re-counts and reproductions are still running. Small, for polling."""
    return submission_status(session, visible_submission(session, who, public_id))


@router.get("/submissions/{public_id}/findings")
def read_findings(public_id: str, session: SessionDep, who: PrincipalDep) -> dict[str, Any]:
    """The latest check run, in the same shape as ``endpoints-portal check --json``."""
    submission = visible_submission(session, who, public_id, Access.FULL)
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
def recheck_submission(public_id: str, session: SessionDep, queue: QueueDep, who: MemberDep) -> Any:
    """Run the checks again: after a check error, or (a checker upgrade, say) before
    anything of the submission is reviewed or public. A rejected submission is final."""
    submission = submitter_or_chair(session, who, public_id)
    refusal = may_recheck(facts_of(session, submission))
    if refusal is not None:
        return refused(refusal.refused())
    retry_check(session=session, queue=queue, submission=submission)
    session.commit()
    return {"queued": True, "links": _links(public_id)}
