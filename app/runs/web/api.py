"""Per-point run artifacts and their re-counts with the reference tokenizer."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import authorize
from app.accounts.web.security import PrincipalDep, SignedInDep
from app.core import text_limits as text
from app.core.authorization import Action
from app.core.lifecycle import SubmissionState
from app.core.views import Listing
from app.db.models import Retokenization, Submission
from app.jobs.queue import JobQueue
from app.runs.services.reproductions import (
    ReproductionError,
    get_reproduction,
    list_reproductions,
    request_reproduction,
)
from app.runs.services.retokenization import (
    RetokenizationError,
    cancel_retokenization,
    findings_of,
    get_retokenization,
    list_retokenizations,
    request_retokenization,
)
from app.runs.services.views import (
    ReproductionView,
    RetokenizationView,
    RunTimeSeries,
    SteadyStateView,
    reproduction_view,
    retokenization_view,
    run_time_series,
    steady_state_view,
)
from app.settings import Settings
from app.storage import StorageError
from app.submissions.domain.visibility import Access
from app.submissions.services.archives import store_unavailable
from app.submissions.services.artifacts import (
    EventsSink,
    events_files,
    events_quota_refusal,
    register_events,
)
from app.submissions.services.artifacts import (
    StoredEvents as EventsFile,
)
from app.submissions.services.points import labelled_points
from app.submissions.services.storage import UploadTooLarge
from app.submissions.services.visibility import access_to
from app.submissions.web.access import acting_on, visible_submission
from app.web.api_errors import ErrorBody, error_response, refused
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.ratelimit import enforce
from app.web.threads import in_thread

router = APIRouter(prefix="/api/v1", tags=["runs: re-counts and reproductions"])


class StoredEvents(BaseModel):
    """A point's events file as stored, and the re-counts it started."""

    point: str
    sha256: str = Field(description="of the uncompressed file")
    size: int
    stored_size: int = Field(description="bytes at rest, compressed")
    created: bool = Field(description="false: the same file was stored before")
    retokenizations: list[str] = Field(description="ids of the re-counts it queued")


@router.put(
    "/submissions/{public_id}/points/{system}/{model}/{point}/events",
    status_code=201,
    response_model=StoredEvents,
    responses={
        200: {"model": StoredEvents, "description": "The same file was stored before"},
        503: {"model": ErrorBody, "description": "The artifact store cannot be reached now"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def upload_events(
    public_id: str,
    system: str,
    model: str,
    point: str,
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: SignedInDep,
) -> StoredEvents | JSONResponse:
    """Stream a point's ``events.jsonl`` (the request body) to storage; it is hashed,
    compressed at rest and re-counted. Uploading the same file again changes nothing.
    The submitting organisation (or the chair) uploads, within an hourly rate and a
    number of files per point."""
    label = f"{system}/{model}/{point}"
    # Before a byte is read: a flood of uploads costs the portal nothing.
    target = await in_thread(_events_target, request, session, settings, who, public_id, label)
    if isinstance(target, JSONResponse):
        return target
    sink = EventsSink(settings)
    try:
        async for chunk in request.stream():
            # Hashing and compressing in a thread (both let go of Python's lock): the
            # event loop answers other requests while gigabytes arrive.
            await in_thread(sink.write, chunk)
    except UploadTooLarge as exc:
        sink.discard()
        return error_response("too-large", str(exc), 413)
    except BaseException:
        sink.discard()  # a broken upload never reaches a content address
        raise
    if sink.size == 0:
        sink.discard()
        return error_response("empty", "the events file is empty", 400)
    try:
        stored = await in_thread(sink.finish)
    except StorageError as exc:  # nothing recorded: the same upload works once it is back
        return refused(store_unavailable(exc, ", so nothing was recorded"))
    answer = await in_thread(_record_events, session, settings, queue, who, target, label, stored)
    if isinstance(answer, StoredEvents):
        response.status_code = 201 if answer.created else 200
    return answer


def _events_target(
    request: Request, session: Session, settings: Settings, who: Principal, public_id: str,
    label: str,
) -> Submission | JSONResponse:  # fmt: skip
    """The submission whose point *label* takes another events file, or why not."""
    submission = acting_on(session, who, public_id, Action.UPLOAD_EVENTS)
    enforce(request, "events upload", settings.events_uploads_per_hour, 3600,
            key=f"user:{who.user_id}")  # fmt: skip
    if label not in {named for named, _ in labelled_points(submission)}:
        return error_response("no-such-point", f"the submission has no point {label!r}", 404)
    files = events_files(session, submission, label)
    if (refusal := events_quota_refusal(settings, label, files + 1)) is not None:
        return refused(refusal)
    return submission


def _record_events(
    session: Session, settings: Settings, queue: JobQueue, who: Principal,
    submission: Submission, label: str, stored: EventsFile,
) -> StoredEvents | JSONResponse:  # fmt: skip
    """The stored file registered for the point, its re-count queued; committed."""
    artifact, created = register_events(session, submission, label, stored, "upload")
    if created and (
        refusal := events_quota_refusal(settings, label, events_files(session, submission, label))
    ):
        session.rollback()  # another upload took the last place meanwhile
        return refused(refusal)
    queued: list[Retokenization] = []
    if created and submission.state in (SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED):
        queued = request_retokenization(
            session=session, queue=queue, submission=submission, point_label=label,
            actor=who.email,
        )  # fmt: skip
    session.commit()
    return StoredEvents(
        point=label,
        sha256=artifact.sha256,
        size=artifact.size,
        stored_size=artifact.stored_size,
        created=created,
        retokenizations=[r.public_id for r in queued],
    )


class RecountRequest(BaseModel):
    point: str | None = Field(
        default=None,
        max_length=text.SHORT,
        description="<system>/<model>/r<N>; every point with events when absent",
    )


@router.post(
    "/submissions/{public_id}/retokenizations", status_code=202, response_model=Listing[str]
)
def start_retokenization(
    public_id: str, body: RecountRequest, session: SessionDep, queue: QueueDep, who: SignedInDep
) -> Listing[str] | JSONResponse:
    """Re-count a point (or every point with events) again (its organisation, its assigned
    reviewer or the chair); answers the new re-counts' ids."""
    submission = acting_on(session, who, public_id, Action.RECOUNT)
    try:
        created = request_retokenization(
            session=session,
            queue=queue,
            submission=submission,
            point_label=body.point,
            actor=who.email,
        )
    except RetokenizationError as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return Listing(data=[r.public_id for r in created])


@router.get("/submissions/{public_id}/retokenizations", response_model=Listing[RetokenizationView])
def read_retokenizations(
    public_id: str, session: SessionDep, who: PrincipalDep
) -> Listing[RetokenizationView]:
    submission = visible_submission(session, who, public_id, Access.FULL)
    return Listing(
        data=[
            retokenization_view(r, findings_of(session, r))
            for r in list_retokenizations(session, submission)
        ]
    )


def _retok_or_404(session: SessionDep, who: Principal | None, rid: str) -> Retokenization:
    retok = get_retokenization(session, rid)
    if retok is None:
        raise HTTPException(404, detail=f"no re-tokenization with id {rid!r}")
    visible_submission(session, who, retok.submission.public_id, Access.FULL)
    return retok


@router.get("/retokenizations/{rid}", response_model=RetokenizationView)
def read_retokenization(rid: str, session: SessionDep, who: PrincipalDep) -> RetokenizationView:
    retok = _retok_or_404(session, who, rid)
    return retokenization_view(retok, findings_of(session, retok))


@router.get(
    "/retokenizations/{rid}/timeseries",
    response_model=RunTimeSeries,
    responses={404: {"model": ErrorBody}},
)
def read_time_series(rid: str, session: SessionDep, who: PrincipalDep) -> RunTimeSeries:
    """The point's run over time: issued, completed, failed and in-flight requests,
    output tokens/s, TTFT and TPOT percentiles per bin, with the drain marked."""
    series = run_time_series(_retok_or_404(session, who, rid))
    if series is None:
        raise HTTPException(
            404,
            detail=f"re-count {rid!r} has no time series: it has not finished, or it "
            "counted no tracked request",
        )
    return series


@router.get(
    "/retokenizations/{rid}/steady-state",
    response_model=SteadyStateView,
    responses={404: {"model": ErrorBody}},
)
def read_steady_state(rid: str, session: SessionDep, who: PrincipalDep) -> SteadyStateView:
    """The point's steady state in its events (status, verdict, window, per-metric state,
    level shift, drift, each metric per super-pass, the method's settings) beside the block
    its point.yaml declares."""
    view = steady_state_view(_retok_or_404(session, who, rid))
    if view is None:
        raise HTTPException(
            404,
            detail=f"re-count {rid!r} has no steady-state analysis: it has not finished, the "
            "point is not a fixed-concurrency one, or it states no super-pass size",
        )
    return view


@router.post("/retokenizations/{rid}/cancel", status_code=202, response_model=RetokenizationView)
def cancel(rid: str, session: SessionDep, who: SignedInDep) -> RetokenizationView | JSONResponse:
    retok = _retok_or_404(session, who, rid)
    acting_on(session, who, retok.submission.public_id, Action.RECOUNT)
    try:
        cancel_retokenization(session=session, retok=retok, actor=who.email)
    except RetokenizationError as exc:
        return refused(exc)
    session.commit()
    return retokenization_view(retok, [])


class ReproductionRequest(BaseModel):
    point: str = Field(
        max_length=text.SHORT,
        description="the point as <system>/<model>/r<N>",
        examples=["sys/llama3_1-8b/r64"],
    )
    endpoint_url: str = Field(
        max_length=text.URL, description="base URL of the OpenAI-compatible endpoint"
    )
    model: str | None = Field(
        default=None, max_length=text.SHORT, description="model name the endpoint serves"
    )
    api_key: str | None = Field(
        default=None, max_length=text.SECRET, description="kept encrypted until the run ends"
    )
    time_cap_s: float | None = Field(
        default=None,
        gt=0,
        description="seconds of measured load; by default the point's §6.2 minimum plus the "
        "warm-up, the shortest run that counts as evidence",
    )
    same_system: bool = Field(
        default=False,
        description="a re-run on the exact same system: the 5% margin instead of 10% "
        "(§11.4); only the submitter of record attests it",
    )
    runs: int = Field(
        default=1,
        ge=1,
        le=20,
        description="runs of the point, one after the other, for their spread (the portal "
        "allows up to ENDPOINTS_PORTAL_REPRODUCTION_MAX_RUNS, 5 by default); the answer is "
        "the first, and each run names it as its series",
    )


@router.post(
    "/submissions/{public_id}/reproductions",
    status_code=202,
    response_model=ReproductionView,
    responses={404: {"model": ErrorBody}, 422: {"model": ErrorBody}},
)
def create_reproduction(
    public_id: str,
    body: ReproductionRequest,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: SignedInDep,
) -> ReproductionView | JSONResponse:
    """Re-run one point against an endpoint with the embedded harness (an unverified
    result): its organisation, its assigned reviewer or the chair asks."""
    submission = acting_on(session, who, public_id, Action.REPRODUCE)
    if body.same_system:
        authorize(who, submission, Action.ATTEST_SAME_SYSTEM)
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
            requested_by=who.email,
            same_system=body.same_system,
            runs=body.runs,
        )
    except ReproductionError as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return reproduction_view(reproduction, private=True)


@router.get("/submissions/{public_id}/reproductions", response_model=Listing[ReproductionView])
def read_reproductions(
    public_id: str, session: SessionDep, who: PrincipalDep
) -> Listing[ReproductionView]:
    """The point's reproductions; who asked, the endpoint and the verdict's wording only
    for those who see the review."""
    submission = visible_submission(session, who, public_id, Access.FULL)
    private = access_to(session, who, submission) >= Access.REVIEW
    return Listing(
        data=[
            reproduction_view(r, private=private) for r in list_reproductions(session, submission)
        ]
    )


@router.get("/reproductions/{reproduction_id}", response_model=ReproductionView)
def read_reproduction(
    reproduction_id: str, session: SessionDep, who: PrincipalDep
) -> ReproductionView:
    reproduction = get_reproduction(session, reproduction_id)
    if reproduction is None:
        raise HTTPException(404, detail=f"no reproduction with id {reproduction_id!r}")
    submission = visible_submission(session, who, reproduction.submission.public_id, Access.FULL)
    private = access_to(session, who, submission) >= Access.REVIEW
    return reproduction_view(reproduction, private=private)
