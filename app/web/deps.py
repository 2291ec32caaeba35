"""Dependency vocabulary shared by the pages and the API."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.jobs.queue import JobQueue
from app.settings import Settings


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
