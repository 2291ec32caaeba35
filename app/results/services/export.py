"""A cohort's public record as one archive: what buyers see in it, with the code and
artifacts the public may have (rules §11.9: finalized results only)."""

from __future__ import annotations

import io
import json
import logging
import tarfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from app.core.cohorts import Cohort
from app.results.services.public import (
    published_archive,
    visible_curves,
)
from app.settings import Settings
from app.storage import ObjectCorrupt, ObjectMissing, archive_key, artifact_store, verify
from app.submissions.domain.visibility import Access, Viewer, access

log = logging.getLogger(__name__)

# Unverified results are never reviewed: chartable, but not part of the official record
# (architecture, decision 7).
OFFICIAL = frozenset({"verified", "provisional", "withdrawn", "invalidated"})


def cohort_record(session: Session, cohort: str) -> dict[str, Any]:
    """Every reviewed result public as of *cohort*, with its result id and status."""
    curves = [c for c in visible_curves(session, cohort) if c.status in OFFICIAL]
    parsed = Cohort.parse(cohort)
    return {
        "cohort": cohort,
        "date": parsed.date.isoformat() if parsed else None,
        "results": [
            {
                "result_id": c.result_id,
                "submission": c.submission,
                "status": c.status,
                "published_in": c.published_in,
                "benchmark_model": c.benchmark_model,
                "dataset": c.dataset,
                "system_name": c.system_name,
                "organization": c.organization,
                "division": c.division,
                "availability": c.availability,
                "scenario": c.scenario,
                "result_name": c.result_name,
                "tags": list(c.tags),
                "available_by": c.available_by.isoformat() if c.available_by else None,
                "power_estimated": c.power_estimated,
                "superseded_by": c.superseded_by,
                "accelerator_model": c.accelerator_model,
                "accelerator_count": c.accelerator_count,
                "points": [p.model_dump(mode="json") for p in c.snapshot.points],
            }
            for c in curves
        ],
    }


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def write_cohort_export(
    session: Session, settings: Settings, cohort: str, target: Path
) -> dict[str, Any]:
    """Write ``<cohort>.tar.gz`` to *target*: ``cohort.json`` and, for each result the
    public may see in full, its submission bundle under ``bundles/``."""
    record = cohort_record(session, cohort)
    store = artifact_store(settings)
    statuses = {r["submission"]: r["status"] for r in record["results"]}
    bundles: list[str] = []
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        for public_id, status in sorted(statuses.items()):
            if access(Viewer.PUBLIC, status) < Access.FULL:
                continue
            archive = published_archive(session, public_id)
            if archive is None:
                continue
            name = f"{cohort}/bundles/{public_id}{archive.suffix}"
            key = archive_key(archive.sha256)
            try:
                verify(store, key)  # a deleted or corrupted archive is never served
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = store.size(key), int(time.time()), 0o644
                with store.open(key) as stream:
                    tar.addfile(info, stream)
            except (ObjectMissing, ObjectCorrupt) as exc:
                log.error("cohort %s export: %s's archive left out: %s", cohort, public_id, exc)
                continue
            bundles.append(name)
        record["bundles"] = bundles
        _add_bytes(tar, f"{cohort}/cohort.json", json.dumps(record, indent=2).encode())
    return record
