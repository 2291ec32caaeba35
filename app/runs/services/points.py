"""What the run services ask of a stored point."""

from __future__ import annotations

from pathlib import Path

from submission_checker.models.regions import min_duration_ms

from app.checks.domain.datasets import catalogue
from app.core.paths import OutsideFolder, inside
from app.db.models import Point, Submission
from app.settings import Settings
from app.submissions.services.extracted import bundle_folder


def point_folder(settings: Settings, submission: Submission, label: str) -> Path:
    """Where the bundle keeps point *label* (``<system>/<model>/r<N>``) on this host
    (extracted from the store first if need be: its errors are raised); refused
    (:class:`OutsideFolder`) should the stored names lead out of the bundle."""
    return inside(bundle_folder(settings, submission), "results", *label.split("/"))


def min_duration_s(point: Point) -> float | None:
    """§6.2's minimum (steady-state) duration for the point, from the official checker's
    table; None when the point has no region (a dedicated Offline point)."""
    if not point.region:
        return None
    ms = min_duration_ms(point.region, int(point.concurrency), agentic=point.curve.is_agentic)
    return ms / 1000


DATASET_SUFFIXES = (".jsonl", ".csv", ".parquet")


def dataset_file(settings: Settings, dataset: str | None) -> Path | None:
    """The portal's copy of a catalogued benchmark dataset (``<datasets dir>/<dataset>``
    with .jsonl, .csv or .parquet), if it has one. A name outside the catalogue has none,
    whatever files there are: the name is looked up, never used as a path."""
    if not dataset or dataset not in catalogue(settings.extra_datasets):
        return None
    for suffix in DATASET_SUFFIXES:
        try:
            candidate = inside(settings.effective_datasets_dir, f"{dataset}{suffix}")
        except OutsideFolder:
            return None  # a link out of the datasets folder
        if candidate.is_file():
            return candidate
    return None
