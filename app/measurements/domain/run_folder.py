"""A measured run's folder as the official client and the submitter leave it (the
official CLI's ``runs create`` reads it), and what a run's record and its archive must
agree on.

The folder holds the client's ``config.yaml`` and ``performance/result_summary.json``
and the submitter's ``system_desc.json`` and ``point.yaml``; the CLI parses the four into
the run's record and packs the folder as its archive. The archive is hostile input: it is
read in the archive-reading child, and each of the four files, read with the hardened
reader, must hold what the record says (compared as canonical JSON digests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.bundle_files import Unreadable, read_data
from app.core.digests import canonical_digest
from app.core.refusals import Kind, Refused

# The record's field for each file the folder must hold.
REQUIRED: dict[str, str] = {
    "system_desc.json": "system_info",
    "point.yaml": "point_config",
    "config.yaml": "config",
    "performance/result_summary.json": "result_summary",
}


class RunArchiveRefused(Refused):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message, Kind.INVALID)


def run_model(config: dict[str, Any]) -> str | None:
    """The run's model as the official CLI derives it from ``config.yaml``."""
    params = config.get("model_params")
    name = params.get("name") if isinstance(params, dict) else None
    found = name or config.get("model")
    return str(found) if found is not None else None


def run_concurrency(config: dict[str, Any]) -> int | None:
    """The run's concurrency as the official CLI derives it from ``config.yaml``."""
    settings = config.get("settings")
    pattern = settings.get("load_pattern") if isinstance(settings, dict) else None
    target = pattern.get("target_concurrency") if isinstance(pattern, dict) else None
    value = target if target is not None else config.get("concurrency")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def locate_run_folder(tree: Path) -> Path:
    """The run folder in an extracted run archive: the tree itself, or its one folder
    (the CLI packs ``<folder name>/…``)."""
    if (tree / "point.yaml").is_file():
        return tree
    children = [p for p in tree.iterdir() if p.name not in ("__MACOSX", ".DS_Store")]
    if len(children) == 1 and children[0].is_dir() and (children[0] / "point.yaml").is_file():
        return children[0]
    raise RunArchiveRefused(
        "no-run-folder",
        "the archive holds no run folder: point.yaml is neither at its top nor in its one "
        "folder (the official CLI packs the run folder itself)",
    )


def folder_digests(folder: Path) -> dict[str, str]:
    """The canonical digest of each required file, read under the hardened reader's
    limits; refused naming the first one missing or unreadable."""
    digests: dict[str, str] = {}
    for name, field in REQUIRED.items():
        path = folder / name
        if not path.is_file() or path.is_symlink():
            raise RunArchiveRefused(
                "run-file-missing", f"the run folder has no {name} (the record's {field})"
            )
        try:
            digests[field] = canonical_digest(read_data(path))
        except Unreadable as exc:
            raise RunArchiveRefused("run-file-unreadable", f"{name}: {exc}") from None
    return digests


def disagreement(record: dict[str, str], archive: dict[str, str]) -> str | None:
    """Which of the run's files says something else than its record, if any."""
    for name, field in REQUIRED.items():
        if record.get(field) != archive.get(field):
            return f"{name} in the archive is not the {field} the run was registered with"
    return None
