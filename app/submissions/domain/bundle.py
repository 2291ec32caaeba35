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


def _sha256_of(path: Path) -> str:
    file_hash = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1024 * 1024):
            file_hash.update(chunk)
    return file_hash.hexdigest()


def manifest(root: Path) -> dict[str, str]:
    """Every file of the bundle by its path under the submission root, with its SHA-256.

    ``cli_metadata.json`` is left out: the CLI rewrites it on every build, so two packings
    of the same results would otherwise look different.
    """
    files = sorted(p for p in root.rglob("*") if p.is_file())
    found = {path.relative_to(root).as_posix(): _sha256_of(path) for path in files}
    found.pop("cli_metadata.json", None)
    return found


def content_digest(root: Path) -> str:
    """A digest of what the bundle says: every file's relative path and bytes."""
    digest = hashlib.sha256()
    for rel, sha in manifest(root).items():
        digest.update(f"{rel}\0{sha}\n".encode())
    return digest.hexdigest()


# What a point measured (rules §8, §11.7 "results may not change"): its declaration, its
# run summary, its accuracy, the client's report and metrics (anything under metrics/).
# Everything else in a bundle (docs, sources, README files, system_desc.json,
# config.yaml, server configurations) is content a correction may change.
POINT_RESULT_FILES = frozenset(
    {"point.yaml", "result_summary.json", "accuracy_results.json", "results.json", "report.txt"}
)
_POINT_RESULT_FOLDERS = ("metrics/",)
# A system's measured power, which its points' tokens/s per kW come from.
SYSTEM_RESULT_FILES = frozenset({"system_power.json"})


def point_of_file(rel: str) -> str | None:
    """The point label (``<system>/<model>/r<N>``) of a path under the submission root,
    when the path is inside a point's folder."""
    parts = rel.split("/")
    if len(parts) >= 5 and parts[0] == "results" and parts[3].startswith("r"):
        return "/".join(parts[1:4])
    return None


def is_result_file(rel: str) -> bool:
    """Whether a path under the submission root holds measured results."""
    parts = rel.split("/")
    if point_of_file(rel) is not None:
        inside = "/".join(parts[4:])
        return parts[-1] in POINT_RESULT_FILES or inside.startswith(_POINT_RESULT_FOLDERS)
    return len(parts) == 3 and parts[0] == "results" and parts[2] in SYSTEM_RESULT_FILES


def point_results(files: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each point's result files' SHA-256 (by their path in the point's folder), by label;
    every point folder of the manifest *files* is named, with or without results."""
    found: dict[str, dict[str, str]] = {}
    for rel, sha in files.items():
        label = point_of_file(rel)
        if label is None:
            continue
        inside = found.setdefault(label, {})
        if is_result_file(rel):
            inside[rel.split("/", 4)[4]] = sha
    return found


def point_summary(folder: Path) -> dict[str, Any] | None:
    """A point's run summary as its bundle holds it: ``performance/result_summary.json``,
    or the flat ``result_summary.json`` of older clients; None when neither reads."""
    for path in (folder / "performance" / "result_summary.json", folder / "result_summary.json"):
        if path.is_file():
            return read_mapping(path)
    return None
