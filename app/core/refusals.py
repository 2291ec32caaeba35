"""The one shape of a refused action: a stable code, a message that says what is wrong,
and what kind of refusal it is. The web layer alone turns a kind into an HTTP status
(``app.errors``); the domain and the services never choose one."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar


class Kind(enum.StrEnum):
    INVALID = "invalid"  # the request itself is wrong: a value, a missing field
    NOT_FOUND = "not-found"  # it names something that does not exist
    CONFLICT = "conflict"  # not possible in the state things are in now
    FORBIDDEN = "forbidden"  # not this person's to do
    TOO_LARGE = "too-large"  # beyond a size limit
    UNSUPPORTED = "unsupported"  # a kind of content the portal does not take
    UNAVAILABLE = "unavailable"  # a service the action needs is down now: try again later


@dataclass(frozen=True)
class Refusal:
    """Why an action is not possible, as a value (a page shows it before anyone tries)."""

    code: str
    message: str
    kind: Kind = Kind.CONFLICT

    def refused(self) -> Refused:
        return Refused(self.code, self.message, self.kind)


class Refused(Exception):
    """A refusal raised; ``detail`` names where (a query ``field``, an archive ``member``)."""

    default_kind: ClassVar[Kind] = Kind.INVALID

    def __init__(
        self, code: str, message: str, kind: Kind | None = None, **detail: str | None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.kind = kind or self.default_kind
        self.detail = {key: value for key, value in detail.items() if value is not None}
