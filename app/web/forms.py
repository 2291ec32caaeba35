"""A refused form on a submission's page, raised by the feature that owns the form and
shown by the feature that renders the page (the composition root wires the two)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.refusals import Refused
from app.web.api_errors import status_of


@dataclass
class SubmissionFormRefused(Exception):
    """The submission's page is shown again: the refusal beside its form, and the form
    filled in as it was sent rather than cleared."""

    public_id: str
    form: str
    message: str
    status: int
    kept: dict[str, str] = field(default_factory=dict)
    code: str = ""
    field: str | None = None  # the field at fault, marked invalid

    @classmethod
    def of(
        cls, public_id: str, form: str, refusal: Refused, kept: dict[str, str]
    ) -> SubmissionFormRefused:
        return cls(
            public_id, form, refusal.message, status_of(refusal), kept, refusal.code,
            refusal.detail.get("field"),
        )  # fmt: skip

    @property
    def told(self) -> str:
        """The refusal in one line, with its code where it has one."""
        return f"{self.message} ({self.code})" if self.code else self.message
