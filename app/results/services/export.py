"""A cohort's official record: every reviewed result public as of the cohort, as the
dataset's manifest lists it (app.results.services.dataset)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from app.core.cohorts import Cohort
from app.results.services.public import (
    visible_curves,
)

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
