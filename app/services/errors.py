"""The one shape of a refused request: a stable code, a message that says what is wrong,
and the HTTP status the web layer answers with."""

from __future__ import annotations


class ServiceError(Exception):
    def __init__(self, code: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
