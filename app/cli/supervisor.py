"""One worker process kept running beside the web process (``serve``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


def _die_with_parent() -> None:
    """In the child: ask Linux to stop it if the serving process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


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
            if self.process is not None and self.process.poll() is not None:
                code = self.process.returncode
                print(f"worker exited with {code}; restarting", file=sys.stderr)
                if self._stopping.wait(self.restart_delay_s):
                    return
                self.process = self._spawn()

    def stop(self) -> None:
        self._stopping.set()
        proc = self.process
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # warm shutdown: the worker stops its pool
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        # Whatever is left of the group: a pool process that outlived its worker, or a
        # worker stuck at exit on a pool lock a killed process held.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
