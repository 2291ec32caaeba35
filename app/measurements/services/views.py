"""A measured run as the official API shows it: ``RunSummary`` in a list, ``RunOut`` in
full (the official field names, the portal's values)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.core.views import Timestamp
from app.db.models import MeasuredRun
from app.settings import Settings

API_VERSION = "portal-1"


class RunSummary(BaseModel):
    id: str
    model: str | None
    concurrency: int | None
    started_at: Timestamp
    finished_at: Timestamp
    is_test: bool
    # Beyond the official summary: what a submitter composing a submission looks at.
    pinned: bool
    expires_at: Timestamp | None
    has_archive: bool = Field(description="its archive has arrived and was checked")


class RunOut(BaseModel):
    id: str
    user_id: str = Field(description="the account that registered it")
    model: str | None
    concurrency: int | None
    benchmark_version: str
    api_version: str
    cli_version: str | None
    started_at: Timestamp
    finished_at: Timestamp
    expires_at: Timestamp | None = Field(description="null: pinned, or kept by a submission")
    pinned: bool
    is_test: bool
    is_valid: bool
    invalidation_reason: str | None
    archive_uri: str | None
    system_info: dict[str, Any]
    config: dict[str, Any]
    result_summary: dict[str, Any]
    point_config: dict[str, Any]
    system_power: dict[str, Any] | None


def run_summary(run: MeasuredRun) -> RunSummary:
    return RunSummary(
        id=run.public_id,
        model=run.model,
        concurrency=run.concurrency,
        started_at=run.started_at,
        finished_at=run.finished_at,
        is_test=run.is_test,
        pinned=run.pinned,
        expires_at=run.expires_at,
        has_archive=run.archive is not None,
    )


def archive_uri(settings: Settings, run: MeasuredRun) -> str | None:
    """Where its archive is (for the API's download route), once it has one."""
    if run.archive is None:
        return None
    return settings.public_link(f"/submission-api/runs/{run.public_id}/archive")


def run_out(settings: Settings, run: MeasuredRun) -> RunOut:
    return RunOut(
        id=run.public_id,
        user_id=str(run.user_id),
        model=run.model,
        concurrency=run.concurrency,
        benchmark_version=run.benchmark_version,
        api_version=API_VERSION,
        cli_version=run.cli_version,
        started_at=run.started_at,
        finished_at=run.finished_at,
        expires_at=run.expires_at,
        pinned=run.pinned,
        is_test=run.is_test,
        is_valid=run.archive is not None,
        invalidation_reason=None if run.archive is not None else "its archive has not arrived",
        archive_uri=archive_uri(settings, run),
        system_info=run.system_info,
        config=run.config,
        result_summary=run.result_summary,
        point_config=run.point_config,
        system_power=run.system_power,
    )
