"""One worker process kept running beside the web process (``serve``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any


def _die_with_parent() -> None:
    """In the child: ask Linux to stop it if the serving process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def exited(proc: subprocess.Popen[Any]) -> bool:
    """Whether *proc* has exited, without reaping it: until it is reaped its id still names
    its process group, so Linux gives that id to no other process."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def end_group(proc: subprocess.Popen[Any], grace_s: float) -> int:
    """SIGTERM to *proc* (a leader of its own process group), up to *grace_s* for it to
    exit, SIGKILL to whatever is left of its group, then reap it. The group is signalled
    before the leader is reaped: a leader reaped earlier (``poll``) frees its id, and a
    signal to that id's group could reach another process's group that was given it."""
    if proc.returncode is None:
        if not exited(proc):
            proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while not exited(proc) and time.monotonic() < deadline:
                time.sleep(0.05)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return proc.wait()


class WorkerSupervisor:
    """Keeps one worker process running beside the web process; restarts it if it dies."""

    def __init__(self, restart_delay_s: float = 2.0) -> None:
        self.command = [
            sys.executable, "-m", "app.cli", "worker", "--loglevel", "INFO", "--beat"
        ]  # fmt: skip
        self.restart_delay_s = restart_delay_s
        self.process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)

    def _spawn(self) -> subprocess.Popen[bytes]:
        # A process group of its own: the worker and its pool are stopped together, and
        # a signal meant for the web process never reaches the pool directly.
        return subprocess.Popen(self.command, preexec_fn=_die_with_parent, start_new_session=True)

    def start(self) -> None:
        self.process = self._spawn()
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
            if self.process is not None and exited(self.process):
                # What is left of its group (a pool process that outlived it) goes too.
                code = end_group(self.process, 0)
                print(f"worker exited with {code}; restarting", file=sys.stderr)
                if self._stopping.wait(self.restart_delay_s):
                    return
                self.process = self._spawn()

    def stop(self) -> None:
        self._stopping.set()
        proc = self.process
        if proc is None:
            return
        # A warm shutdown (the worker stops its pool), then whatever is left of the group:
        # a pool process that outlived its worker, or a worker stuck at exit on a pool lock
        # a killed process held.
        end_group(proc, 20)
