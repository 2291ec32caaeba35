"""The portal's app served over real HTTP in this process, on a port the server itself
took (port 0: no race for a free port), and the processes a test's portal started."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from app.web.server import server_options


@contextmanager
def served(app: Any, settings: Any) -> Iterator[str]:
    """*app* served by uvicorn as the portal serves it (its protocol, its timeouts) on
    127.0.0.1; yields the base URL."""
    options = server_options(settings)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the name: the state, the parent's id, …"""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def parent_of(pid: int) -> int | None:
    """*pid*'s parent, or None when it ended meanwhile."""
    try:
        return int(_stat_fields(pid)[1])
    except OSError:
        return None


def descendants_named(name: str, ancestor: int | None = None) -> list[int]:
    """The process ids of *ancestor*'s (this process's) descendants whose name (what ps
    shows, /proc/<pid>/comm) is *name*."""
    ancestor = ancestor or os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm != name:
            continue
        pid: int | None = int(entry.name)
        while pid is not None and pid > 1:
            pid = parent_of(pid)
            if pid == ancestor:
                found.append(int(entry.name))
                break
    return found


def wait_for_descendant(name: str, until: float = 60.0) -> int:
    """The first descendant of this process named *name*, once there is one."""
    deadline = time.monotonic() + until
    while time.monotonic() < deadline:
        if found := descendants_named(name):
            return found[0]
        time.sleep(0.005)
    raise AssertionError(f"no process named {name} under this one within {until} s")


def process_state(pid: int) -> str:
    """The kernel's one-letter state of *pid* (R running, S sleeping, T stopped)."""
    return _stat_fields(pid)[0]
