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
