"""The API's one error body, ``{"error": {"code", "message"}}``, and the way a refused
service call becomes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused

T = TypeVar("T")


class Problem(BaseModel):
    field: str
    message: str


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None
    member: str | None = None
    problems: list[Problem] | None = None


class ErrorBody(BaseModel):
    """Every 4xx and 5xx the API answers."""

    error: ErrorDetail


# The API's error responses as the OpenAPI document declares them (in place of FastAPI's
# own validation body, which the API never sends).
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    422: {"model": ErrorBody, "description": "The request was refused; the body says why"},
    "4XX": {"model": ErrorBody, "description": "Refused: not found, not allowed, conflict"},
}

# A stable code for the statuses an HTTP error carries without one of its own.
STATUS_CODES = {
    400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found",
    405: "method-not-allowed", 408: "too-slow", 409: "conflict", 413: "too-large",
    415: "unsupported-type", 422: "invalid", 429: "too-many-requests", 503: "unavailable",
}  # fmt: skip


def error_response(
    code: str,
    message: str,
    status: int,
    headers: Mapping[str, str] | None = None,
    **extra: object,
) -> JSONResponse:
    return _answer(code, message, status, headers, extra)


def _answer(
    code: str,
    message: str,
    status: int,
    headers: Mapping[str, str] | None,
    extra: Mapping[str, object],
) -> JSONResponse:
    error = {"code": code, "message": message, **{k: v for k, v in extra.items() if v}}
    return JSONResponse({"error": error}, status_code=status, headers=headers)


# The one place a refusal's kind becomes an HTTP status.
HTTP_STATUS = {
    Kind.INVALID: 422, Kind.NOT_FOUND: 404, Kind.CONFLICT: 409, Kind.FORBIDDEN: 403,
    Kind.TOO_LARGE: 413, Kind.UNSUPPORTED: 415, Kind.UNAVAILABLE: 503,
}  # fmt: skip


def status_of(exc: Refused) -> int:
    return HTTP_STATUS[exc.kind]


def refused(exc: Refused) -> JSONResponse:
    return _answer(exc.code, exc.message, status_of(exc), None, exc.detail)


def answered(session: Session, work: Callable[[], T]) -> T | JSONResponse:
    """Run a service call and commit, answering with what it returned; a refusal rolls
    back and becomes the error body."""
    try:
        value = work()
    except Refused as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return value


def attempt(session: Session, work: Callable[[], object]) -> JSONResponse | None:
    """:func:`answered` for a call whose answer is only that it was done."""
    answer = answered(session, work)
    return answer if isinstance(answer, JSONResponse) else None
