"""A background job as the API and the pages show it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class JobView(BaseModel):
    """A background job as its owner sees it (``JobView.model_validate(job)``)."""

    model_config = ConfigDict(from_attributes=True)

    state: str = Field(
        description="queued, running, waiting (for the jobs it started), succeeded, failed, "
        "cancelling or cancelled"
    )
    stage: str | None = Field(description="what it is doing now, in words")
    progress: float = Field(ge=0, le=1)
    attempts: int
    error: str | None

    def without_details(self) -> JobView:
        """The job as someone who does not see the review sees it: its state and progress,
        but not what it waits for or why it failed (an endpoint's address, another run)."""
        return self.model_copy(update={"stage": None, "error": None})
