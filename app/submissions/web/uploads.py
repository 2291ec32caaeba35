"""The upload path shared by the API and the upload page."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from fastapi import Request
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, get_user
from app.accounts.web.security import CSRF_FIELD, csrf_valid
from app.core.divisions import scenario_of
from app.core.lifecycle import PublicationMode
from app.core.refusals import Refused
from app.jobs.queue import JobQueue
from app.settings import Settings, review_policy
from app.submissions.domain.embargo import embargo_refusal, latest_embargo
from app.submissions.domain.visibility import Access
from app.submissions.services.intake import AcceptedUpload, accept_upload
from app.submissions.services.storage import UploadSink, UploadTooLarge
from app.submissions.services.visibility import access_to
from app.submissions.web.multipart import MultipartError, ParsedUpload, receive_upload
from app.web.api_errors import status_of
from app.web.deps import get_now
from app.web.ratelimit import enforce
from app.web.threads import in_thread

_TRUE = {"1", "true", "yes", "on"}


@dataclass
class UploadProblem(Exception):
    status: int
    code: str
    message: str
    member: str | None = None
    # What the form held, when it was read: the page shows it again filled in.
    fields: dict[str, str] = field(default_factory=dict)


PUBLICATION_MODES = tuple(PublicationMode)


def _publication_mode(fields: dict[str, str]) -> str:
    mode = (fields.get("publication_mode") or PublicationMode.CONFIDENTIAL).strip().lower()
    if mode not in PUBLICATION_MODES:
        raise UploadProblem(
            422,
            "bad-publication-mode",
            f"publication_mode must be one of {', '.join(PUBLICATION_MODES)} (rules §11.2), "
            f"not {mode!r}",
        )
    return mode


def _embargo(fields: dict[str, str], today: dt.date, settings: Settings) -> dt.date | None:
    text = (fields.get("embargo_date") or "").strip()
    if not text:
        return None
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise UploadProblem(
            422, "bad-embargo", f"embargo_date must be a date like 2027-01-20, not {text!r}"
        ) from None
    latest = latest_embargo(
        today,
        None,
        resolution_days=review_policy(settings).review.resolution_days,
        max_days=review_policy(settings).review.embargo_max_days,
    )
    if (refusal := embargo_refusal(day, today, latest)) is not None:
        raise UploadProblem(422, refusal.code, refusal.message)
    return day


def _scenario(fields: dict[str, str]) -> str | None:
    """Where the client ran (rules §2.1): cop or con; not given, it is not guessed (a
    Serviced result is CoN whatever is said)."""
    text = (fields.get("scenario") or "").strip()
    if not text:
        return None
    found = scenario_of(text)
    if found is None:
        raise UploadProblem(
            422,
            "bad-scenario",
            f"scenario must be cop (client on premises) or con (client over the network), "
            f"rules §2.1, not {text!r}",
        )
    return found.value


def _wants_review(fields: dict[str, str]) -> bool:
    if fields.get("not_for_review", "").strip().lower() in _TRUE:
        return False
    value = fields.get("for_review")
    return value is None or value.strip().lower() in _TRUE


async def _received(request: Request, sink: UploadSink) -> ParsedUpload:
    """The request's form, its archive streamed into *sink*; nothing half-written is
    left behind when it is refused or the connection breaks."""
    try:
        return await receive_upload(request, sink)
    except UploadTooLarge as exc:
        sink.discard()
        raise UploadProblem(413, "upload-too-large", str(exc)) from exc
    except MultipartError as exc:
        sink.discard()
        raise UploadProblem(exc.status, exc.code, exc.message) from exc
    except BaseException:
        sink.discard()  # a broken connection leaves no half-written file behind
        raise


def _admit(request: Request, session: Session, settings: Settings, who: Principal) -> None:
    """Before a byte is read: a flood of uploads costs the portal nothing."""
    uploader = get_user(session, who.user_id)
    key = f"user:{uploader.id}" if uploader is not None else None
    enforce(request, "upload", settings.uploads_per_hour, 3600, key=key)


async def receive_form(
    request: Request, *, session: Session, settings: Settings, who: Principal, check_csrf: bool
) -> tuple[ParsedUpload, dict[str, str]]:
    """The request's form with its archive streamed to the data dir's tmp (rate-limited,
    bounded), and its fields less the CSRF token; a page form's token (*check_csrf*) is
    checked. Raises :class:`UploadProblem` with nothing left behind."""
    await in_thread(_admit, request, session, settings, who)
    # The body as a whole is bounded while it streams (app.web.limits); the archive in it
    # by the sink.
    sink = UploadSink(settings.tmp_dir, settings.max_upload_bytes)
    parsed = await _received(request, sink)
    assert parsed.file is not None
    kept = {k: v for k, v in parsed.fields.items() if k != CSRF_FIELD}
    if check_csrf and not csrf_valid(request, parsed.fields.get(CSRF_FIELD)):
        sink.discard()
        raise UploadProblem(
            403,
            "csrf",
            "the form's security token is missing or stale; reload the page and try again",
            fields=kept,
        )
    if parsed.file.size == 0:
        sink.discard()
        raise UploadProblem(400, "empty-upload", "the uploaded file is empty", fields=kept)
    return parsed, kept


@dataclass(frozen=True)
class _Choices:
    """What the uploader chose with the archive (§11.2, §4.2, §2.1)."""

    mode: str
    embargo: dt.date | None
    scenario: str | None
    for_review: bool


async def handle_upload(
    request: Request,
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    who: Principal,
    check_csrf: bool = False,
) -> AcceptedUpload:
    """Stream, store and register one uploaded archive; commits on success.

    The upload page's form carries a CSRF token (``check_csrf``); API clients do not. The
    publication mode, the embargo date and the scenario are chosen here (rules §11.2,
    §4.2, §2.1).
    """
    parsed, kept = await receive_form(
        request, session=session, settings=settings, who=who, check_csrf=check_csrf
    )
    assert parsed.file is not None
    try:
        choices = _Choices(
            mode=_publication_mode(parsed.fields),
            embargo=_embargo(parsed.fields, get_now(request).date(), settings),
            scenario=_scenario(parsed.fields),
            for_review=_wants_review(parsed.fields),
        )
    except UploadProblem as problem:
        parsed.file.path.unlink(missing_ok=True)
        problem.fields = kept
        raise
    # In a thread: the archive is read by a child process while the loop goes on.
    return await in_thread(
        _register, parsed, kept, choices, session=session, settings=settings, queue=queue, who=who
    )


def _register(
    parsed: ParsedUpload, kept: dict[str, str], choices: _Choices, *,
    session: Session, settings: Settings, queue: JobQueue, who: Principal,
) -> AcceptedUpload:  # fmt: skip
    """The streamed archive accepted for the uploader's organisation, with the choices
    made at upload; committed."""
    assert parsed.file is not None
    try:
        accepted = accept_upload(
            session=session,
            settings=settings,
            queue=queue,
            received=parsed.file,
            filename=parsed.filename or "upload",
            for_review=choices.for_review,
            uploader=get_user(session, who.user_id),
        )
    except Refused as exc:  # the bundle's rules (IntakeError), or the store is down
        session.rollback()
        member = exc.detail.get("member")
        raise UploadProblem(status_of(exc), exc.code, exc.message, member, kept) from exc
    if accepted.duplicate and access_to(session, who, accepted.submission) < Access.REVIEW:
        # The same bytes as a submission this caller may not see: say nothing of it.
        session.rollback()
        raise UploadProblem(
            409,
            "archive-stored-already",
            "an archive with exactly these bytes was uploaded before, by another organisation; "
            "upload your own organisation's bundle",
            fields=kept,
        )
    if not accepted.duplicate:
        # Chosen once, at upload (§11.2).
        accepted.submission.publication_mode = PublicationMode(choices.mode)
        accepted.submission.embargo_date = choices.embargo
        accepted.submission.scenario = choices.scenario
    session.commit()
    return accepted
