"""Where the submission sits inside an extracted archive, and whose it is.

The official CLI tars ``<organisation>/<submission_id>/…``; submitters also pack the
submission directory itself, or its contents. All three are accepted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.bundle_files import read_mapping
from app.core.refusals import Refused

_IGNORED = frozenset({"__MACOSX", ".DS_Store"})


class LayoutRejected(Refused):
    """The archive does not hold one submission as the submission CLI lays it out."""


@dataclass(frozen=True)
class BundleLayout:
    root: Path  # the <submission_id>/ directory, holding results/
    organisation: str | None  # the org directory name, when the archive has one
    submission_dir_name: str | None  # the <submission_id> directory name, when present


def _children(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.name not in _IGNORED)


def _has_results(path: Path) -> bool:
    return (path / "results").is_dir()


def locate_submission(extracted: Path) -> BundleLayout:
    if _has_results(extracted):
        return BundleLayout(extracted, None, None)
    top = _children(extracted)
    dirs = [p for p in top if p.is_dir()]
    if len(dirs) == 1 and len(top) == 1:
        only = dirs[0]
        if _has_results(only):
            return BundleLayout(only, None, only.name)
        subs = [p for p in _children(only) if p.is_dir() and _has_results(p)]
        if len(subs) == 1:
            return BundleLayout(subs[0], only.name, subs[0].name)
        if len(subs) > 1:
            names = ", ".join(p.name for p in subs)
            raise LayoutRejected(
                "several-submissions",
                f"the archive holds several submissions under {only.name}/ ({names}); "
                "upload one submission per archive",
            )
    raise LayoutRejected(
        "no-submission-root",
        "no results/ directory found at the top of the archive, under <submission_id>/, "
        "or under <organisation>/<submission_id>/ (the layout endpoints-submission-cli "
        "builds)",
    )


def declared_organisation(root: Path) -> str | None:
    """``submitter_org_names`` from the first readable point ``system_desc.json``."""
    for path in sorted(root.glob("results/*/*/r*/system_desc.json")):
        # An unreadable one is no answer here; the checks' readable-files rule reports it.
        data = read_mapping(path) or {}
        value = data.get("submitter_org_names")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def content_digest(root: Path) -> str:
    """A digest of what the bundle says: every file's relative path and bytes.

    ``cli_metadata.json`` is left out: the CLI rewrites it on every build, so two packings
    of the same results would otherwise look different.
    """
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel == "cli_metadata.json":
            continue
        file_hash = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(1024 * 1024):
                file_hash.update(chunk)
        digest.update(f"{rel}\0{file_hash.hexdigest()}\n".encode())
    return digest.hexdigest()


def point_summary(folder: Path) -> dict[str, Any] | None:
    """A point's run summary as its bundle holds it: ``performance/result_summary.json``,
    or the flat ``result_summary.json`` of older clients; None when neither reads."""
    for path in (folder / "performance" / "result_summary.json", folder / "result_summary.json"):
        if path.is_file():
            return read_mapping(path)
    return None
