"""The benchmark definitions' own super-pass sizes (rules §2.1), kept by the operator.

A super-pass is one full pass over the dataset unless the benchmark definition sets
another size; the portal knows the official datasets' sizes, and an operator records a
benchmark's other size here with its source (``endpoints-portal super-passes set``). The
submitter never chooses it: point.yaml's size is only checked against it.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.checks.domain.datasets import catalogue
from app.core.times import Clock
from app.db.models import Point, SuperPassDefinition
from app.runs.domain.steady_state import SuperPass, benchmark_super_pass
from app.settings import Settings


class SuperPassRefused(ValueError):
    pass


def defined_super_passes(session: Session) -> dict[str, tuple[int, str]]:
    rows = session.scalars(select(SuperPassDefinition)).all()
    return {row.dataset: (row.size, row.source) for row in rows}


def point_super_pass(session: Session, point: Point) -> SuperPass | None:
    """The super-pass the point's events are analysed with."""
    return benchmark_super_pass(point.curve.dataset, defined_super_passes(session))


def define_super_pass(
    session: Session,
    settings: Settings,
    dataset: str,
    size: int,
    source: str,
    *,
    clock: Clock,
) -> SuperPassDefinition:
    """Record (or change) a benchmark's super-pass size for *dataset*; refused, with what
    is wrong, for a dataset outside the catalogue, a size below one or no source."""
    if dataset not in catalogue(settings.extra_datasets):
        raise SuperPassRefused(
            f"dataset {dataset!r} is not in the catalogue (the official datasets and "
            "ENDPOINTS_PORTAL_EXTRA_DATASETS)"
        )
    if size < 1:
        raise SuperPassRefused(f"size must be at least one request, not {size}")
    if not source.strip():
        raise SuperPassRefused("source must say where the size comes from")
    row = session.get(SuperPassDefinition, dataset) or SuperPassDefinition(dataset=dataset)
    row.size, row.source, row.set_at = size, source.strip(), clock()
    session.add(row)
    session.flush()
    return row


def remove_super_pass(session: Session, dataset: str) -> bool:
    """Back to one pass over the dataset; False when nothing was defined."""
    row = session.get(SuperPassDefinition, dataset)
    if row is None:
        return False
    session.delete(row)
    session.flush()
    return True
