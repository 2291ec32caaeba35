"""The API's one error body, ``{"error": {"code", "message"}}``, and the way a refused
service call becomes it."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from app.domain.objections import ObjectionRefused
from app.services.errors import ServiceError

Refusal = ServiceError | ObjectionRefused


def error_response(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def refused(exc: Refusal) -> JSONResponse:
    return error_response(exc.code, exc.message, exc.status)


def attempt(session: Session, work: Callable[[], object]) -> JSONResponse | None:
    """Run a service call and commit; a refusal rolls back and becomes the error body."""
    try:
        work()
    except (ServiceError, ObjectionRefused) as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return None
