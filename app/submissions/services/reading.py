"""Reading an archive in a child process, within a budget (architecture, decision 18).

An uploaded archive is hostile input, and the standard library's readers have known
flaws on this Python. Whoever needs an archive read (the web process at intake, a worker
or a web process extracting a stored archive into its cache, the ``check`` command) asks
here: a child process (``app.submissions.domain.reader``) opens it under a CPU-time and
memory budget, at a lower priority, and is killed past a wall-clock deadline. The caller
waits without holding Python's lock (a web request waits in a thread; the event loop
goes on). A child that runs out of its budget is a refusal like any other, with the code
``archive-budget``: nothing is retried, and nothing it wrote is kept.

Each child is forked from a server process of this process's own
(``app.submissions.domain.fork_server``, started on first use) that has imported the
readers and never reads an archive itself: a clean process per archive, without an
interpreter's start and imports (a tenth of a second, a third of the reading of a small
bundle, on the way to every verdict).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.settings import Settings
from app.storage import private_folder
from app.submissions.domain.archive import ArchiveLimits, ArchiveRejected
from app.submissions.domain.fork_server import KILL, recv_int

log = logging.getLogger(__name__)

READER = "app.submissions.domain.reader:read_bundle_request"
_ANSWER_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class Budget:
    cpu_s: int
    memory_bytes: int
    file_bytes: int
    wall_s: float


def archive_limits(settings: Settings) -> ArchiveLimits:
    return ArchiveLimits(
        max_members=settings.max_archive_members,
        max_total_bytes=settings.max_extracted_bytes,
        max_member_bytes=settings.max_member_bytes,
        max_compression_ratio=settings.max_compression_ratio,
        ratio_floor_bytes=settings.compression_ratio_floor_bytes,
    )


def budget_of(settings: Settings) -> Budget:
    return Budget(
        cpu_s=settings.archive_cpu_s,
        memory_bytes=settings.archive_memory_bytes,
        # Nothing the child writes is larger than one member may be.
        file_bytes=settings.max_member_bytes + 1024**2,
        wall_s=settings.archive_wall_s or settings.archive_cpu_s * 2 + 30,
    )


@dataclass(frozen=True)
class PointEvents:
    """A point's ``events.jsonl``, compressed by the child, waiting to be stored."""

    label: str
    path: Path
    sha256: str
    size: int
    stored_size: int


@dataclass(frozen=True)
class ArchiveReading:
    """What the child found: the extracted tree in *work*, and the facts intake needs."""

    work: Path  # the reading's own folder: the tree, and the compressed events
    tree: Path
    format: str
    root: str  # the submission folder inside the tree ("" at its top)
    organisation: str | None  # the folder above the submission, when there is one
    submission_dir_name: str | None
    declared_organisation: str | None  # system_desc.json's submitter_org_names
    content_digest: str
    disclosed: dict[str, Any]  # app.submissions.domain.disclosures.read_disclosures
    events: list[PointEvents] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        """The submission's folder in the extracted tree."""
        return self.tree.joinpath(*self.root.split("/")) if self.root else self.tree

    def discard(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _refusal(answer: dict[str, Any], budget: Budget) -> ArchiveRejected | None:
    if "refused" in answer:
        refused = answer["refused"]
        return ArchiveRejected(refused["code"], refused["message"], refused.get("member"))
    if answer.get("budget") == "memory":
        return _over_budget(f"more than {budget.memory_bytes // 1024**2} MiB of memory")
    return None


def _over_budget(what: str) -> ArchiveRejected:
    return ArchiveRejected(
        "archive-budget",
        f"reading the archive needed {what}, past the portal's budget for one archive; it was "
        "stopped and nothing was kept",
    )


class _ForkServer:
    """This process's fork server, started on first use and again if it died (a
    process forked from this one, a Celery pool's, starts its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

    def _connected(self) -> tuple[socket.socket, subprocess.Popen[bytes]]:
        with self._lock:
            if self._owner != os.getpid():  # forked from the server's owner: ours to make
                if self._control is not None:
                    self._control.close()
                self._control = self._process = None
            if self._process is None or self._process.poll() is not None:
                self._start()
            assert self._control is not None and self._process is not None
            return self._control, self._process

    def _start(self) -> None:
        here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with there:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "app.submissions.domain.fork_server",
                    str(there.fileno()),
                    json.dumps(sys.path),
                ],
                pass_fds=[there.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self._control, self._owner = here, os.getpid()

    def _forget(self) -> None:
        """A server that took no request: the next one starts afresh."""
        with self._lock:
            if self._control is not None:
                self._control.close()
            if self._process is not None and self._owner == os.getpid():
                self._process.kill()
                self._process.wait()
            self._control = self._process = None

    def fork(self, request: bytes) -> tuple[int, int, socket.socket]:
        """A child forked for *request*: its id, the pipe it answers on, and the socket
        its exit code comes on (and a kill is asked on)."""
        for _attempt in (1, 2):
            answer_r, answer_w = os.pipe()
            status, status_there = socket.socketpair()
            try:
                control, server = self._connected()
                socket.send_fds(control, [request], [answer_w, status_there.fileno()])
                pid = _forked(status, server)
            except OSError:
                pid = None
            finally:
                os.close(answer_w)
                status_there.close()
            if pid is not None:
                return pid, answer_r, status
            # The server is gone, or went before it forked: once more, with a new one.
            os.close(answer_r)
            status.close()
            self._forget()
        raise _over_budget("a reader that did not start")


def _forked(status: socket.socket, server: subprocess.Popen[bytes]) -> int | None:
    """The forked child's id, or None when the server ended first (a request it never
    read is dropped with the ends it carried, in the kernel's own time)."""
    while not select.select([status], [], [], 0.2)[0]:
        if server.poll() is not None:
            return None
    return recv_int(status)


_FORKS = _ForkServer()


# Why a child is killed before it finished its answer.
LATE, TOO_LONG = "late", "too long"


def _read_answer(answer_fd: int, seconds: float) -> tuple[bytes, str | None]:
    """What the child wrote until it closed the pipe; or why it is to be killed: still
    writing after *seconds* (LATE, with what it wrote), or writing more than an answer
    may be (TOO_LONG, with nothing)."""
    deadline = time.monotonic() + seconds
    said = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([answer_fd], [], [], left)[0]:
            return bytes(said), LATE
        chunk = os.read(answer_fd, 65536)
        if not chunk:
            return bytes(said), None
        said += chunk
        if len(said) > _ANSWER_LIMIT:
            return b"", TOO_LONG


def _run_child(reader: str, request: dict[str, Any], budget: Budget) -> dict[str, Any]:
    """The child's answer; a refusal when it was killed or said nothing."""
    question = {**request, "reader": reader, "cwd": os.getcwd()}
    pid, answer_fd, status = _FORKS.fork(json.dumps(question).encode())
    with status:
        try:
            said, kill = _read_answer(answer_fd, budget.wall_s)
        finally:
            os.close(answer_fd)
        if kill:  # by the server, which knows whether the child is still its own
            with contextlib.suppress(OSError):  # a server gone leaves it to its budget
                status.sendall(KILL)
        exit_code = recv_int(status)
    if kill == LATE:
        raise _over_budget(f"more than {budget.wall_s:g} s")
    if exit_code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise _over_budget(f"more than {budget.cpu_s} s of processor time")
    if exit_code == -signal.SIGXFSZ:
        raise _over_budget("a file larger than one member may be")
    try:
        answer: dict[str, Any] = json.loads(said)
    except ValueError:
        # The child failed in a way it could not put in words (memory in C code, a
        # crash): its last words are in this process's log; the caller gets a refusal.
        log.error("the archive reader %s ended with %s and no answer", pid, exit_code)
        raise _over_budget("more than its memory or a crash") from None
    return answer


@dataclass(frozen=True)
class Reading:
    """A child's reading: its own folder (the extracted tree in ``tree``, whatever else it
    wrote beside it) and what it found."""

    work: Path
    facts: dict[str, Any]

    @property
    def tree(self) -> Path:
        return self.work / "tree"

    def discard(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def read_in_child(
    settings: Settings,
    archive: Path,
    *,
    reader: str = READER,
    extra: dict[str, Any] | None = None,
    budget: Budget | None = None,
    under: Path | None = None,
) -> Reading:
    """Have the child's function *reader* (``module:function``) read *archive* under the
    budget, in a fresh folder beside the cached bundles (or *under* another); *extra*:
    what else the request says. Raises :class:`ArchiveRejected`, leaving nothing behind."""
    request = {"archive": str(archive.resolve()), **(extra or {})}
    return work_in_child(settings, reader, request, budget=budget, under=under)


def work_in_child(
    settings: Settings,
    reader: str,
    request: dict[str, Any],
    *,
    budget: Budget | None = None,
    under: Path | None = None,
) -> Reading:
    """Run the child's function *reader* on *request* under the budget, in a fresh folder of
    its own (the request's ``tree`` is in it), with the portal's archive limits."""
    budget = budget or budget_of(settings)
    if under is None:
        private_folder(settings.cache_dir)
    parent = under or settings.bundles_dir
    parent.mkdir(parents=True, exist_ok=True)
    work = parent / f".reading-{uuid.uuid4().hex}"
    work.mkdir(mode=0o700)
    request = {
        "tree": str(work / "tree"),
        "limits": vars(archive_limits(settings)),
        "budget": {
            "cpu_s": budget.cpu_s,
            "memory_bytes": budget.memory_bytes,
            "file_bytes": budget.file_bytes,
        },
        **request,
    }
    try:
        answer = _run_child(reader, request, budget)
        if (refusal := _refusal(answer, budget)) is not None:
            raise refusal
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Reading(work, answer["facts"])


def read_archive(
    settings: Settings,
    archive: Path,
    *,
    keep_events: bool,
    budget: Budget | None = None,
    under: Path | None = None,
) -> ArchiveReading:
    """Read a submission's *archive* in a child process: extracted into a fresh folder,
    with its events compressed to be stored (*keep_events*) or dropped."""
    reading = read_in_child(
        settings, archive, budget=budget, under=under, extra={"keep_events": keep_events}
    )
    facts = reading.facts
    return ArchiveReading(
        work=reading.work,
        tree=reading.tree,
        format=facts["format"],
        root=facts["root"],
        organisation=facts["organisation"],
        submission_dir_name=facts["submission_dir_name"],
        declared_organisation=facts["declared_organisation"],
        content_digest=facts["content_digest"],
        disclosed=facts["disclosed"],
        events=[
            PointEvents(
                e["label"],
                reading.work / "events" / e["file"],
                e["sha256"],
                e["size"],
                e["stored_size"],
            )  # fmt: skip
            for e in facts["events"]
        ],
    )
