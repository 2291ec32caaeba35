"""Blocking work from an ``async def`` route.

The web process answers every request from one event loop. A route that must be
``async`` (it streams a request body) does its database and file work in a worker thread
through :func:`in_thread`: a query that waits on a lock, or an archive read by a child
process, then holds that one request, not every request the process serves (and not the
kept-alive connections that uvicorn would give up meanwhile). Tests refuse any query made
on the loop's thread (tests/support/loop_guard.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

import anyio.to_thread
from sqlalchemy.orm import Session

P = ParamSpec("P")
R = TypeVar("R")


async def in_thread(work: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``work(*args, **kwargs)`` in a worker thread, awaited."""
    return await anyio.to_thread.run_sync(partial(work, *args, **kwargs))


def committed(session: Session, work: Callable[[], R]) -> R:
    """What *work* answers, committed; rolled back when it raises, so nothing of a
    refused step is kept."""
    try:
        answer = work()
    except BaseException:
        session.rollback()
        raise
    session.commit()
    return answer
