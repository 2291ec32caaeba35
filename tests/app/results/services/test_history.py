"""A system's history across cohorts: each published version once, with its changes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.pipeline import run_checks
from app.results.services.history import system_history
from app.results.services.public import (
    QueryProblem,
)
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.fakes import RecordingQueue
from tests.support.submissions import accept, pt


def _published(
    database: Database, settings: Settings, archive: Path, checked: dt.datetime, cohort: str,
    at: dt.datetime,
) -> None:  # fmt: skip
    queue = RecordingQueue()
    accept(database, settings, queue, archive, for_review=False)
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0],
                   clock=lambda: checked)  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id=cohort, at=at)
        session.commit()


def test_a_resubmitted_system_shows_each_version_and_what_changed(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    first = SystemSpec(name="Acme X", framework="vLLM 0.11")
    second = SystemSpec(name="Acme X", framework="vLLM 0.12", peak_tps_per_user=230.0)
    _published(database, settings,
               BundleFactory(system=first, submission_id="v1", target_cohort="2026-11-C0")
               .archive(tmp_path / "v1.tar.gz"),
               pt(2026, 10, 28, 10), "2026-11-C0", pt(2026, 11, 4, 9))  # fmt: skip
    _published(database, settings,
               BundleFactory(system=second, submission_id="v2", target_cohort="2026-11-C1")
               .archive(tmp_path / "v2.tar.gz"),
               pt(2026, 11, 11, 10), "2026-11-C1", pt(2026, 11, 18, 9))  # fmt: skip
    with database.session() as session:
        history = system_history(session, settings, None, "acme corp", "Acme X", "llama3_1-8b")
        assert history.organization == "Acme Corp"  # named as the record names it
        first_entry, second_entry = history.entries
        # The first version stays public beside the second: both cohorts show it.
        assert first_entry.first_cohort == "2026-11-C0"
        assert first_entry.cohorts == ["2026-11-C0", "2026-11-C1"]
        assert second_entry.first_cohort == "2026-11-C1" and second_entry.status == "unverified"
        changes = {c.field: (c.before, c.after) for c in second_entry.changes}
        assert changes["Serving framework"] == ("vLLM 0.11", "vLLM 0.12")
        assert first_entry.changes == []
        chart = history.chart()
        names = [c.name for c in chart.curves]
        assert names == ["2026-11-C0: unverified", "2026-11-C1: unverified"]
        assert max(p.y for p in chart.curves[1].points) > max(p.y for p in chart.curves[0].points)
        with pytest.raises(QueryProblem, match="published no"):
            system_history(session, settings, None, "Acme Corp", "Nobody", "llama3_1-8b")


def test_a_recount_published_since_is_a_change_in_the_history() -> None:
    from app.publishing.domain.snapshot import FrozenRecount, PublishedPoint
    from app.results.services.history import HistoryEntry, _recount_change

    def entry(tokens: int | None) -> HistoryEntry:
        recount = (
            None
            if tokens is None
            else FrozenRecount(request_log=1, window="total", duration_ms=1.0, output_tokens=tokens)
        )
        point = PublishedPoint(dir="r64", concurrency=64, system_tps=100.0, recount=recount)
        return HistoryEntry(
            first_cohort="2026-12-C0", cohorts=["2026-12-C0"], submission="s", status="verified",
            peer_review_pending=False, availability="Available", result_name="MLPerf Endpoints",
            tags=[], result_id=None, x_metric="tps_per_user", points=[point], step_line=[],
            changes=[],
        )  # fmt: skip

    [change] = _recount_change(entry(100_000), entry(98_800))
    assert change.field == "re-counted output tokens"
    assert (change.before, change.after) == ("100,000", "98,800 (1.2 % lower)")
    assert _recount_change(entry(100_000), entry(100_000)) == []
    assert _recount_change(entry(None), entry(98_800)) == []  # nothing to compare with


def test_a_version_with_an_older_ones_very_figures_says_so_on_the_chart(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    # Resubmitted with only its serving framework's name changed: the same curve, drawn
    # over the older one, which would vanish beneath it without a word.
    first = SystemSpec(name="Acme X", framework="vLLM 0.11")
    again = SystemSpec(name="Acme X", framework="vLLM 0.11.1")
    _published(database, settings,
               BundleFactory(system=first, submission_id="v1", target_cohort="2026-11-C0")
               .archive(tmp_path / "v1.tar.gz"),
               pt(2026, 10, 28, 10), "2026-11-C0", pt(2026, 11, 4, 9))  # fmt: skip
    _published(database, settings,
               BundleFactory(system=again, submission_id="v2", target_cohort="2026-11-C1")
               .archive(tmp_path / "v2.tar.gz"),
               pt(2026, 11, 11, 10), "2026-11-C1", pt(2026, 11, 18, 9))  # fmt: skip
    with database.session() as session:
        history = system_history(session, settings, None, "Acme Corp", "Acme X", "llama3_1-8b")
    older, newer = history.chart().curves
    assert older.step_line == newer.step_line
    assert older.name == "2026-11-C0: unverified"
    assert newer.name == "2026-11-C1: unverified · the figures of 2026-11-C0"
