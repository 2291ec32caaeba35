"""Dependency vocabulary shared by the pages and the API."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from app.db.models import Submission
from app.jobs.queue import JobQueue
from app.settings import Settings
from app.submissions.services.views import get_submission


def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    with request.app.state.db.session() as session:
        yield session


def get_queue(request: Request) -> JobQueue:
    queue: JobQueue = request.app.state.queue
    return queue


def get_now(request: Request) -> dt.datetime:
    """The app's "now" (``create_app(clock=…)``; the wall clock by default)."""
    now: dt.datetime = request.app.state.clock()
    return now


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
NowDep = Annotated[dt.datetime, Depends(get_now)]
SessionDep = Annotated[Session, Depends(get_session)]
QueueDep = Annotated[JobQueue, Depends(get_queue)]


def submission_or_404(session: Session, public_id: str) -> Submission:
    submission = get_submission(session, public_id)
    if submission is None:
        raise HTTPException(404, detail=f"no submission with id {public_id!r}")
    return submission
