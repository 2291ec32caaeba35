"""Every publication the record writes is a valid snapshot of the current version."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import PublishedCurve
from app.db.session import Database
from app.publishing.domain.snapshot import SNAPSHOT_VERSION, read_snapshot
from app.settings import Settings


def test_the_demo_record_is_written_in_the_snapshot_schema(
    demo_env: tuple[Settings, Database],
) -> None:
    _settings, database = demo_env
    with database.session() as session:
        curves = session.scalars(select(PublishedCurve)).all()
        assert len(curves) >= 6
        for curve in curves:
            assert curve.snapshot_version == SNAPSHOT_VERSION
            snapshot = read_snapshot(curve.snapshot_version, curve.data)
            assert snapshot.stored() == curve.data  # nothing kept outside the schema
            assert snapshot.benchmark_model == curve.benchmark_model
            assert all(p.system_tps > 0 for p in snapshot.points)
