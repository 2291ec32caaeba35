"""Queries on an event loop's thread, refused in tests.

The web process serves every request from one event loop; a database query made on it
(from an ``async def`` route, outside ``app.web.threads.in_thread``) stalls all of them for as long
as the query waits (a lock held by the worker, a busy database), and a client whose
kept-alive connection the server gives up meanwhile sees it dropped. Sync routes and
dependencies run in the thread pool, where queries belong. Installed for the whole test
run (tests/conftest.py), so any test that reaches such a query fails, naming it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


def on_event_loop() -> bool:
    """Whether this thread is running an event loop right now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _refuse_on_loop(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
    if on_event_loop():
        raise AssertionError(
            "a database query ran on the event loop's thread, which stalls every request "
            f"meanwhile (run it through app.web.threads.in_thread): {statement[:200]}"
        )


def install() -> None:
    if not event.contains(Engine, "before_cursor_execute", _refuse_on_loop):
        event.listen(Engine, "before_cursor_execute", _refuse_on_loop)
