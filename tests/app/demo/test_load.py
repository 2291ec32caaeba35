"""The demo loaded through the real pipeline: one point per curve re-counted from events."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.checks.domain.findings import Severity
from app.db.models import (
    CheckRun,
    Curve,
    FindingRow,
    RequestLogRow,
    Retokenization,
    Submission,
)
from app.db.session import Database
from app.demo.load import EVENTS_AT
from app.demo.tokenizer import DEMO_TOKENIZER
from app.settings import Settings

# PostgreSQL too: the demo is what a PostgreSQL deployment shows first.
pytestmark = pytest.mark.postgresql


def test_the_demo_is_seven_submissions_each_checked(demo_env: tuple[Settings, Database]) -> None:
    _settings, database = demo_env
    with database.session() as session:
        submissions = session.scalars(select(Submission)).all()
        assert len(submissions) == 7
        assert all(s.check_runs for s in submissions)


def test_every_demo_curve_has_one_point_with_a_request_record(
    demo_env: tuple[Settings, Database],
) -> None:
    _settings, database = demo_env
    with database.session() as session:
        curves = session.scalars(select(Curve)).all()
        logs = session.scalars(select(RequestLogRow)).all()
        labels = {log.point_label for log in logs}
        expected = {f"{c.system.dir_name}/{c.benchmark_model}/r{EVENTS_AT}" for c in curves}
        assert labels == expected and len(logs) == len(curves) == 10
        for log in logs:
            curve = next(c for c in curves if log.point_label.startswith(
                f"{c.system.dir_name}/{c.benchmark_model}/"))  # fmt: skip
            [point] = [p for p in curve.points if p.concurrency == EVENTS_AT]
            recount = session.scalars(
                select(Retokenization).where(Retokenization.id == log.retokenization_id)
            ).one()
            steady_state = recount.steady_state or {}
            window = steady_state.get("window")
            if log.window == "steady_state":
                # Goodput over the official window (rules §2.3): the window's requests.
                assert steady_state["status"] == "windowable" and window
                members = window["n_samples"] + window["n_failed"] + window["n_unfinished"]
                assert log.requests == members
                assert log.duration_ms == pytest.approx(window["duration_s"] * 1000, abs=1)
            else:
                assert log.window == "total"
                assert log.requests == point.n_samples_completed
                assert log.duration_ms == point.duration_ms
        recounts = session.scalars(select(Retokenization)).all()
        assert len(recounts) == 10 and {r.tokenizer for r in recounts} == {DEMO_TOKENIZER}
        for recount in recounts:
            assert recount.job is not None and recount.job.state == "succeeded"
            assert recount.recount is not None and recount.reported is not None
            assert recount.recount["total_output_tokens"] == recount.reported["total_output_tokens"]
        severities = session.scalars(
            select(FindingRow.severity)
            .join(CheckRun, FindingRow.check_run_id == CheckRun.id)
            .where(CheckRun.kind == "retokenization")
        ).all()
        # The events agree with every summary: the re-count finds nothing to report.
        assert severities and set(severities) == {Severity.INFO}
