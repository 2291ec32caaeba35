"""The bundle as reviewers read it: its files, one file's text, and the system
description compared across points (every point carries its own copy, rules §9.2)."""

from __future__ import annotations

import copy
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.paths import OutsideFolder, inside
from app.core.refusals import Kind, Refused
from app.db.models import Submission
from app.settings import Settings
from app.storage import StorageError
from app.submissions.domain.disclosures import read_disclosures
from app.submissions.services.extracted import bundle_folder

log = logging.getLogger(__name__)

MAX_SHOWN_BYTES = 1024 * 1024
TEXT_SUFFIXES = frozenset(
    ".json .yaml .yml .txt .md .log .csv .toml .py .sh .cfg .ini .jsonl".split()
)


class DisclosureError(Refused):
    pass


@dataclass(frozen=True)
class BundleFile:
    path: str
    size: int
    viewable: bool


def _root(settings: Settings, submission: Submission) -> Path | None:
    """The bundle's folder on this host; None when it cannot be read now (the store is
    out of reach, or the archive is gone or damaged: the operator's log says which)."""
    try:
        return bundle_folder(settings, submission)
    except StorageError as exc:
        log.error("submission %s: its bundle cannot be read: %s", submission.public_id, exc)
        return None


def bundle_files(settings: Settings, submission: Submission, limit: int = 5000) -> list[BundleFile]:
    root = _root(settings, submission)
    if root is None or not root.is_dir():
        return []
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            found.append(BundleFile(rel, path.stat().st_size, path.suffix.lower() in TEXT_SUFFIXES))
            if len(found) >= limit:
                break
    return found


def read_bundle_file(settings: Settings, submission: Submission, rel: str) -> str:
    """The text of one bundle file, never anything outside the bundle."""
    root = _root(settings, submission)
    if root is None:
        raise DisclosureError(
            "bundle-unavailable",
            "the bundle's files cannot be read now; try again in a while",
            Kind.UNAVAILABLE,
        )
    try:
        target = inside(root, *rel.split("/"))
    except OutsideFolder:
        target = None
    if target is None or not target.is_file():
        raise DisclosureError("no-such-file", f"the bundle has no file {rel!r}", Kind.NOT_FOUND)
    if target.suffix.lower() not in TEXT_SUFFIXES:
        raise DisclosureError(
            "not-text", f"{rel!r} is not a text file the portal shows", Kind.UNSUPPORTED
        )
    with target.open("rb") as handle:
        data = handle.read(MAX_SHOWN_BYTES + 1)
    text = data[:MAX_SHOWN_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_SHOWN_BYTES:
        text += f"\n… (only the first {MAX_SHOWN_BYTES // 1024} KiB are shown)"
    return text


# Submissions taken before the reader kept their disclosures (migration 0027) are read
# here once per archive and kept (the most recently used): the only bundle files this
# process parses, and only for those.
_DISCLOSED: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
_DISCLOSED_KEPT = 512
_DISCLOSED_LOCK = threading.Lock()


def disclosed(settings: Settings, submission: Submission) -> dict[str, Any]:
    """What the bundle discloses (``app.submissions.domain.disclosures``), as the reading
    child found it at intake; a copy the caller may change."""
    if submission.disclosed is not None:
        return copy.deepcopy(submission.disclosed)
    key = (submission.archive.sha256, submission.bundle_root or "")
    with _DISCLOSED_LOCK:
        if (kept := _DISCLOSED.get(key)) is not None:
            _DISCLOSED.move_to_end(key)
            return copy.deepcopy(kept)
    root = _root(settings, submission)
    out = read_disclosures(root)
    if root is not None:  # a bundle out of reach now is read again next time
        with _DISCLOSED_LOCK:
            _DISCLOSED[key] = copy.deepcopy(out)
            while len(_DISCLOSED) > _DISCLOSED_KEPT:
                _DISCLOSED.popitem(last=False)
    return out


def system_disclosures(settings: Settings, submission: Submission) -> dict[str, dict[str, Any]]:
    """Per system folder: the disclosures (label → value, missing ones left out), and per
    point of each curve the declared steady-state window."""
    systems: dict[str, dict[str, Any]] = disclosed(settings, submission)["systems"]
    return systems


def compare_system_descriptions(settings: Settings, submission: Submission) -> dict[str, Any]:
    """The fields whose values differ between points' ``system_desc.json`` copies."""
    comparison: dict[str, Any] = disclosed(settings, submission)["comparison"]
    return comparison
