"""A background job as the API and the pages show it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.db.models import Job


class JobView(BaseModel):
    """A background job as its owner sees it."""

    state: str = Field(description="queued, running, succeeded, failed or cancelled")
    stage: str | None = Field(description="what it is doing now, in words")
    progress: float = Field(ge=0, le=1)
    attempts: int
    error: str | None

    @classmethod
    def of(cls, job: Job) -> JobView:
        return cls(
            state=job.state,
            stage=job.stage,
            progress=job.progress,
            attempts=job.attempts,
            error=job.error,
        )
