"""Reading an archive in a child process, within a budget (architecture, decision 18).

An uploaded archive is hostile input, and the standard library's readers have known
flaws on this Python. Whoever needs an archive read (the web process at intake, a worker
or a web process extracting a stored archive into its cache, the ``check`` command) asks
here: a child process (``app.submissions.domain.reader``) opens it under a CPU-time and
memory budget, at a lower priority, and is killed past a wall-clock deadline. The caller
waits without holding Python's lock (a web request waits in a thread; the event loop
goes on). A child that runs out of its budget is a refusal like any other, with the code
``archive-budget``: nothing is retried, and nothing it wrote is kept.
"""

from __future__ import annotations

import json
import logging
import shutil
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.settings import Settings
from app.storage import private_folder
from app.submissions.domain.archive import ArchiveLimits, ArchiveRejected

log = logging.getLogger(__name__)

READER = "app.submissions.domain.reader"
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


def _run_child(reader: str, request: dict[str, Any], budget: Budget) -> dict[str, Any]:
    """The child's answer; a refusal when it was killed or said nothing."""
    child = subprocess.Popen(
        [sys.executable, "-m", reader],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # never the web server's signals
    )
    try:
        out, err = child.communicate(json.dumps(request).encode(), timeout=budget.wall_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise _over_budget(f"more than {budget.wall_s:g} s") from None
    if child.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise _over_budget(f"more than {budget.cpu_s} s of processor time")
    if child.returncode == -signal.SIGXFSZ:
        raise _over_budget("a file larger than one member may be")
    try:
        answer: dict[str, Any] = json.loads(out[:_ANSWER_LIMIT])
    except ValueError:
        # The child failed in a way it could not put in words (memory in C code, a
        # crash): the operator's log has its last words; the caller a refusal.
        log.error("the archive reader ended with %s: %s", child.returncode, err[-2000:])
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
    """Have the child module *reader* read *archive* under the budget, in a fresh folder
    beside the cached bundles (or *under* another); *extra*: what else the request says.
    Raises :class:`ArchiveRejected`, leaving nothing behind."""
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
    """Run the child module *reader* on *request* under the budget, in a fresh folder of
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
