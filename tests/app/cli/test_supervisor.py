"""A worker's process group is cleared only while its leader is not yet reaped: a reaped
leader's id can be given to another process (ids wrap every few minutes on a busy machine
whose pid_max is 32,768), and a signal to that id's group would reach a stranger."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli.supervisor import end_group, exited
from tests.support.http import process_state

# A leader that exits on SIGTERM and starts a child that would outlive it. Its handler is
# in place before it prints the child's id: the test signals it on reading that line.
LEADER = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        return process_state(pid) != "Z"
    except OSError:
        return False


def test_end_group_stops_the_leader_and_whatever_its_group_left() -> None:
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER], stdout=subprocess.PIPE, start_new_session=True
    )
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    assert end_group(leader, 30) == 3  # its own exit on SIGTERM
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)  # the child ignored SIGTERM: SIGKILL to the group took it


def test_an_exited_leader_is_seen_without_being_reaped() -> None:
    leader = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    deadline = time.monotonic() + 60
    while not exited(leader):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # Still a zombie: its id (and so its group's) is given to no other process yet.
    assert Path(f"/proc/{leader.pid}").exists() and leader.returncode is None
    assert end_group(leader, 0) == 0 and leader.returncode == 0


def test_a_reaped_leaders_group_is_never_signalled(monkeypatch: pytest.MonkeyPatch) -> None:
    leader = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    leader.wait()  # reaped: its id may name another process's group by now
    sent: list[int] = []
    monkeypatch.setattr(os, "killpg", lambda pgid, sig: sent.append(pgid))
    assert end_group(leader, 0) == 0
    assert sent == []
