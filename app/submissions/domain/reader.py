"""What the archive-reading child process does: everything that opens an uploaded
archive or a file it brings, in a process of its own under a CPU-time and memory budget
(architecture, decision 18).

The child is forked from a server process that imported the readers and never touched an
archive (``fork_server``), and becomes a session of its own named ``portal-reader``. It
takes one JSON request, limits itself (CPU seconds, address space, file size, open files,
no core dumps, a lower priority than the web process), and writes one JSON answer: the
facts its reading function found, or the refusal with its code. A child killed past its
budget answers nothing; its parent says so. Only the standard library and the portal's
pure domain are imported here.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import json
import os
import resource
from pathlib import Path
from typing import Any

from app.core.refusals import Refused
from app.submissions.domain.archive import ArchiveLimits, extract_archive
from app.submissions.domain.bundle import content_digest, declared_organisation, locate_submission
from app.submissions.domain.disclosures import read_disclosures

_CHUNK = 1024 * 1024
_EVENTS_NAMES = ("events.jsonl", "events.jsonl.gz")
_OPEN_FILES = 64
_NICENESS = 10
CHILD_NAME = "portal-reader"  # what ps and /proc/<pid>/comm show for a reading child


def _relative(inner: Path, outer: Path) -> str:
    rel = inner.relative_to(outer).as_posix()
    return "" if rel == "." else rel


def _compress_events(source: Path, target: Path) -> dict[str, Any]:
    """A point's events, gzip-compressed at level 1 (about 5x at a fraction of level 9's
    cost) and hashed over their uncompressed bytes."""
    digest = hashlib.sha256()
    size = 0
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rb") as plain, target.open("xb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as packed:
            while chunk := plain.read(_CHUNK):
                size += len(chunk)
                digest.update(chunk)
                packed.write(chunk)
    return {"sha256": digest.hexdigest(), "size": size, "stored_size": target.stat().st_size}


def _take_events(root: Path, events_dir: Path | None) -> list[dict[str, Any]]:
    """The ``events.jsonl`` files of the bundle's point folders, out of the extracted
    tree: compressed into *events_dir* to be stored, or (None) only removed, as the
    checks never read them and the store keeps each one."""
    taken: list[dict[str, Any]] = []
    for path in sorted(root.glob("results/*/*/r*/events.jsonl*")):
        if path.name not in _EVENTS_NAMES or not path.is_file() or path.is_symlink():
            continue
        point = path.parent
        label = f"{point.parent.parent.name}/{point.parent.name}/{point.name}"
        if events_dir is not None:
            events_dir.mkdir(exist_ok=True)
            target = events_dir / f"{len(taken)}.jsonl.gz"
            taken.append({"label": label, "file": target.name, **_compress_events(path, target)})
        path.unlink()
    return taken


def read_bundle(
    archive: Path, tree: Path, limits: ArchiveLimits, events_dir: Path | None
) -> dict[str, Any]:
    """Extract *archive* into *tree* (new), find the submission in it and read what the
    intake needs. Raises the archive's or the layout's refusal."""
    extracted = extract_archive(archive, tree, limits)
    layout = locate_submission(extracted.root)
    facts: dict[str, Any] = {
        "format": extracted.format,
        "members": extracted.members,
        "total_bytes": extracted.total_bytes,
        "root": _relative(layout.root, tree),
        "organisation": layout.organisation,
        "submission_dir_name": layout.submission_dir_name,
        "declared_organisation": declared_organisation(layout.root),
        # Over every file as uploaded: the events go only after it is taken.
        "content_digest": content_digest(layout.root),
        # Parsed here, under the budget: the pages show it and parse nothing.
        "disclosed": read_disclosures(layout.root),
    }
    facts["events"] = _take_events(layout.root, events_dir)
    return facts


def read_bundle_request(request: dict[str, Any]) -> dict[str, Any]:
    """The bundle reader's request: the archive, the tree to make, the limits, and
    whether its events are kept (compressed beside the tree) or dropped."""
    tree = Path(request["tree"])
    events = tree.parent / "events" if request.get("keep_events") else None
    return read_bundle(Path(request["archive"]), tree, ArchiveLimits(**request["limits"]), events)


def _limit_self(budget: dict[str, int]) -> None:
    """The budget, set by the child on itself before it reads a byte."""
    cpu = budget["cpu_s"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (budget["memory_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (budget["file_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (_OPEN_FILES, _OPEN_FILES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.nice(_NICENESS)


def serve_one(message: bytes, answer_fd: int) -> None:
    """A reading child's whole life, from its fork (``fork_server``): out of the server's
    session (never the web server's signals), in the requester's folder, its budget set,
    the request's function (``reader``: ``module:function``) run on it, one answer
    written to *answer_fd* (the facts, or the refusal)."""
    os.setsid()
    Path("/proc/self/comm").write_text(CHILD_NAME)
    request: dict[str, Any] = json.loads(message)
    os.chdir(request["cwd"])
    module, _, function = request["reader"].partition(":")
    read = getattr(importlib.import_module(module), function)
    _limit_self(request["budget"])
    try:
        said: dict[str, Any] = {"facts": read(request)}
    except Refused as exc:
        member = exc.detail.get("member")
        said = {"refused": {"code": exc.code, "message": exc.message, "member": member}}
    except MemoryError:
        said = {"budget": "memory"}
    with os.fdopen(answer_fd, "wb") as answer:
        answer.write(json.dumps(said).encode())
