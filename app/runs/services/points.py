"""What the run services ask of a stored point."""

from __future__ import annotations

from pathlib import Path

from submission_checker.models.regions import min_duration_ms

from app.db.models import Point, Submission
from app.settings import Settings


def point_folder(settings: Settings, submission: Submission, label: str) -> Path:
    """Where the stored bundle keeps point *label* (``<system>/<model>/r<N>``)."""
    return settings.data_dir / (submission.bundle_root or "") / "results" / label


def min_duration_s(point: Point) -> float | None:
    """§6.2's minimum (steady-state) duration for the point, from the official checker's
    table; None when the point has no region (a dedicated Offline point)."""
    if not point.region:
        return None
    ms = min_duration_ms(point.region, int(point.concurrency), agentic=point.curve.is_agentic)
    return ms / 1000


DATASET_SUFFIXES = (".jsonl", ".csv", ".parquet")


def dataset_file(settings: Settings, dataset: str | None) -> Path | None:
    """The portal's copy of a benchmark dataset (``<datasets dir>/<dataset>.jsonl``, or
    .csv or .parquet), if it has one."""
    if not dataset:
        return None
    for suffix in DATASET_SUFFIXES:
        candidate = settings.effective_datasets_dir / f"{dataset}{suffix}"
        if candidate.is_file():
            return candidate
    return None
