"""Publishing cohorts through the real pipeline (the demo set), and what each shows."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from app.db.models import Point, Publication, PublishedCurve
from app.db.session import Database
from app.publishing.domain.point_table import pack
from app.publishing.domain.snapshot import read_snapshot
from app.publishing.services.publishing import PublishingError
from app.results.services.public import (
    list_cohorts,
)
from app.results.services.query import ResultsQuery
from app.results.services.results import list_benchmarks, query_results
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.caches import forget_read_records
from tests.support.rows import must

# PostgreSQL too: publication steps take locks and unique ids from the database.
pytestmark = pytest.mark.postgresql


EVERY_AVAILABILITY = ("Available", "Preview", "RDI")


@pytest.fixture
def demo(fresh_demo: tuple[Settings, Database]) -> Database:
    return fresh_demo[1]


def _statuses(database: Database, cohort: str, benchmark: str) -> dict[str, str]:
    with database.session() as session:
        q = ResultsQuery(
            benchmark=benchmark,
            cohort=cohort,
            statuses=("verified", "provisional", "unverified"),
            availabilities=EVERY_AVAILABILITY,
        )
        return {c.system: c.status for c in query_results(session, q).curves}


def test_each_cohort_shows_what_was_public_then(demo: Database) -> None:
    assert _statuses(demo, "2026-10-C1", "llama3_1-8b") == {
        "Acme H200 x8": "provisional",  # peer review pending, shown (provisional mode)
        "Borealis MI355X x8": "verified",
    }
    later = _statuses(demo, "2026-11-C1", "llama3_1-8b")
    assert later["Acme H200 x8"] == "verified"  # finalized in 2026-11-C0
    assert later["Cumulus B200 x8"] == "provisional" and later["Fjord L40S x8"] == "verified"
    assert _statuses(demo, "2026-11-C0", "gpt-oss-120b")["Dune Gaudi 3 x8"] == "unverified"
    with demo.session() as session:
        assert [c.id for c in list_cohorts(session)] == [
            "2026-11-C1",
            "2026-11-C0",
            "2026-10-C1",
        ]
        benchmarks = {b.id: b for b in list_benchmarks(session)}
        assert set(benchmarks) == {"llama3_1-8b", "gpt-oss-120b", "kimi-k3"}
        assert benchmarks["kimi-k3"].agentic is True


def test_publishing_again_changes_nothing_and_bad_ids_are_refused(
    fresh_demo: tuple[Settings, Database],
) -> None:
    settings, demo = fresh_demo
    with demo.session() as session:
        before = session.scalars(select(Publication.id)).all()
        assert publish_cohort(session=session, settings=settings, cohort_id="2026-11-C1") == []
        assert session.scalars(select(Publication.id)).all() == before
        with pytest.raises(PublishingError, match="cohort id"):
            publish_cohort(session=session, settings=settings, cohort_id="2026-13-C0")


def test_a_publication_is_a_snapshot(demo: Database) -> None:
    with demo.session() as session:
        q = ResultsQuery(benchmark="llama3_1-8b", cohort="2026-11-C1")
        acme = next(c for c in query_results(session, q).curves if c.system == "Acme H200 x8")
        point = must(session.scalars(select(Point).where(Point.concurrency == 64)).first())
        point.system_tps = 1.0  # what is stored now must not rewrite what was published
        session.commit()
        again = next(c for c in query_results(session, q).curves if c.system == "Acme H200 x8")
        assert again.points == acme.points


def test_every_published_curve_is_packed_from_its_snapshot(demo: Database) -> None:
    """The explorer reads a curve's points from its packing: it is the snapshot's."""
    with demo.session() as session:
        curves = session.scalars(select(PublishedCurve)).all()
        assert curves
        for curve in curves:
            assert curve.point_table == pack(read_snapshot(curve.snapshot_version, curve.data))


def test_curves_without_a_packing_this_reader_knows_are_shown_the_same(demo: Database) -> None:
    """A curve left unpacked, or packed in another format, is packed again from its
    snapshot as it is read: the record shows the same points."""
    q = ResultsQuery(benchmark="llama3_1-8b", statuses=("verified", "provisional", "unverified"),
                     availabilities=EVERY_AVAILABILITY)  # fmt: skip
    with demo.session() as session:
        before = query_results(session, q).model_dump()
        for n, curve in enumerate(session.scalars(select(PublishedCurve))):
            curve.point_table = None if n % 2 else b"PT\xff" + (curve.point_table or b"")[3:]
        session.commit()
        forget_read_records()
        assert query_results(session, q).model_dump() == before


def test_sla_ranking_on_the_demo(demo: Database) -> None:
    from app.results.domain.sla import Sla

    with demo.session() as session:
        result = query_results(
            session,
            ResultsQuery(
                benchmark="llama3_1-8b",
                cohort="2026-11-C1",
                sla=Sla(ttft_p90_max_ms=150, tps_per_user_min=90),
            ),
        )
    ranking = result.ranking
    assert ranking and [r.rank for r in ranking] == list(range(1, len(ranking) + 1))
    throughputs = [r.throughput or 0.0 for r in ranking]
    assert throughputs == sorted(throughputs, reverse=True)
    for row in ranking:
        assert row.ttft_p90_ms is not None and row.tps_per_user is not None
        assert row.ttft_p90_ms <= 150 and row.tps_per_user >= 90
    # Each curve's best point is the highest admissible system_tps of that curve.
    for curve in result.curves:
        fits = [p for p in curve.points if p.admissible]
        if fits:
            assert curve.best == max(fits, key=lambda p: p.system_tps).dir
    assert result.footnote  # provisional results on the chart carry the footnote
    assert dt.date.fromisoformat("2026-11-18")  # 2026-11-C1's Wednesday


def test_curves_of_another_dataset_are_never_ranked_together(demo: Database) -> None:
    """One model measured on two datasets is two measurements: the view picks one dataset
    (the one with most curves unless asked), says which, and offers the other."""
    with demo.session() as session:
        moved = session.scalars(
            select(PublishedCurve).where(
                PublishedCurve.benchmark_model == "llama3_1-8b",
                PublishedCurve.system_name == "Fjord L40S x8",
            )
        ).all()
        assert moved
        for curve in moved:
            curve.dataset = "long_context_summaries"
        session.commit()
        forget_read_records()  # a test edit behind the record's back
        default = query_results(session, ResultsQuery(benchmark="llama3_1-8b"))
        assert default.dataset == "cnn_dailymail"
        assert "Fjord L40S x8" not in {c.system for c in default.curves}
        assert "Fjord L40S x8" not in {r.system for r in default.ranking}
        assert all(c.dataset == "cnn_dailymail" for c in default.curves)
        entry = next(b for b in default.benchmarks if b.id == "llama3_1-8b")
        assert [d.model_dump() for d in entry.datasets] == [
            {"id": "cnn_dailymail", "curves": 4},
            {"id": "long_context_summaries", "curves": 1},
        ]
        chosen = query_results(
            session,
            ResultsQuery(benchmark="llama3_1-8b", dataset="long_context_summaries",
                         availabilities=EVERY_AVAILABILITY),  # Fjord is RDI
        )  # fmt: skip
        assert {c.system for c in chosen.curves} == {"Fjord L40S x8"}
    forget_read_records()
