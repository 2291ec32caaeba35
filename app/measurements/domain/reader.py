"""What the archive-reading child does with a measured run's archive (``read_run``): the
same child, budget and limits as a bundle's (``app.submissions.domain.reader``), reading
a run folder instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.measurements.domain.run_folder import folder_digests, locate_run_folder
from app.submissions.domain.archive import ArchiveLimits, extract_archive


def read_run(request: dict[str, Any]) -> dict[str, Any]:
    """Extract a measured run's archive into the request's tree and digest its required
    files (``run_folder.REQUIRED``)."""
    tree = Path(request["tree"])
    extracted = extract_archive(Path(request["archive"]), tree, ArchiveLimits(**request["limits"]))
    folder = locate_run_folder(extracted.root)
    rel = folder.relative_to(tree).as_posix()
    return {"format": extracted.format, "root": "" if rel == "." else rel,
            "digests": folder_digests(folder)}  # fmt: skip
