"""Goodput on a published point: from its re-counted events to the results API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from app.db.models import RequestLogRow, Submission
from app.db.session import Database
from app.pipeline import run_checks
from app.results.services.query import ResultsParams, parse_results_query
from app.results.services.results import NO_EVENTS, query_results
from app.review.services.releases import publish_cohort
from app.runs.services.retokenization import request_retokenization, run_retokenization
from app.settings import Settings
from app.submissions.services.artifacts import EventsSink, register_events
from tests.support.fakes import RecordingQueue
from tests.support.submissions import CHECKED, accept, pt
from tests.support.sweeps import make_sweep


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, Path]], Path]:
    return make_sweep(tmp_path_factory.mktemp("sweep"))


def _query(session, **params: str):  # type: ignore[no-untyped-def]
    query = ResultsParams.of({"benchmark": "llama3_1-8b", "status": "unverified", **params})
    return query_results(session, parse_results_query(session, query))


def test_a_published_points_goodput_comes_from_its_recounted_events(  # type: ignore[no-untyped-def]
    settings: Settings, database: Database, swept, tmp_path: Path
) -> None:
    archive, events, tokenizer_dir = swept
    registry = tmp_path / "tokenizers.json"
    registry.write_text(json.dumps({"llama3_1-8b": {"location": str(tokenizer_dir)}}))
    settings = settings.model_copy(update={"tokenizer_registry": registry})
    queue = RecordingQueue()
    sid, _ = accept(database, settings, queue, archive, for_review=False)
    label, path = events[len(events) // 2]  # a fixed-concurrency point
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0],
                   clock=lambda: CHECKED)  # fmt: skip
        submission = session.get(Submission, sid)
        assert submission is not None and submission.state == "passed_checks"
        sink = EventsSink(settings)
        sink.write(path.read_bytes())
        register_events(session, submission, label, sink.finish(), "upload")
        [retok] = request_retokenization(
            session=session, queue=queue, submission=submission, point_label=label
        )
        session.commit()
        assert retok.job_id is not None
        run_retokenization(session=session, settings=settings, job_id=retok.job_id)
        assert retok.recount and retok.recount["n_samples_completed"] > 0
        [log] = session.scalars(select(RequestLogRow)).all()
        assert log.point_label == label and log.requests == retok.recount["n_samples_completed"]
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 9))  # fmt: skip
        session.commit()
        recount = retok.recount

        # No latency SLA: no goodput is asked for, none is computed.
        plain = _query(session)
        assert plain.goodput is False
        assert all(p.goodput_tps is None and p.goodput_missing is None
                   for c in plain.curves for p in c.points)  # fmt: skip

        loose = _query(session, ttft_p90_max_ms="1000000")
        assert loose.goodput is True
        [curve] = loose.curves
        point_dir = label.rsplit("/", 1)[1]
        by_dir = {p.dir: p for p in curve.points}
        good = by_dir[point_dir]
        # Every request of an honest run meets a limit it cannot miss: goodput is the
        # point's re-counted throughput.
        assert good.slo_attainment == 1.0 and good.goodput_requests == log.requests
        assert good.goodput_tps == pytest.approx(recount["system_tps"], rel=1e-3)
        others = [p for d, p in by_dir.items() if d != point_dir and p.offline != "dedicated"]
        assert others and all(p.goodput_missing == NO_EVENTS for p in others)

        # At the point's own TTFT P90, about nine requests in ten meet it.
        own = _query(session, ttft_p90_max_ms=str(recount["ttft_p90_ms"]))
        share = {p.dir: p for p in own.curves[0].points}[point_dir].slo_attainment
        assert share is not None and 0.85 <= share <= 1.0
        impossible = _query(session, ttft_p90_max_ms="0.000001")
        nothing = {p.dir: p for p in impossible.curves[0].points}[point_dir]
        assert nothing.slo_attainment == 0.0 and nothing.goodput_tps == 0.0

        ranked = _query(session, ttft_p90_max_ms="1000000", rank_by="goodput")
        assert ranked.rank_by == "goodput"
        [row] = ranked.ranking
        assert row.point == point_dir and row.goodput_tps == good.goodput_tps
        assert row.throughput == good.goodput_tps

        # A later re-count is a new version: the released cohort keeps the record it
        # showed, and the next publication shows the new one (issue 26: frozen numbers).
        assert good.recount is not None and good.recount.request_log == log.id
        [again] = request_retokenization(
            session=session, queue=queue, submission=submission, point_label=label
        )
        session.commit()
        assert again.job_id is not None
        run_retokenization(session=session, settings=settings, job_id=again.job_id)
        newer = session.scalars(select(RequestLogRow).order_by(RequestLogRow.id.desc())).first()
        assert newer is not None and newer.id != log.id

        def shown_log(**params: str) -> int | None:
            answer = _query(session, ttft_p90_max_ms="1000000", **params)
            frozen = {p.dir: p for p in answer.curves[0].points}[point_dir].recount
            return frozen.request_log if frozen else None

        assert shown_log(cohort="2026-12-C0") == log.id
        assert shown_log() == log.id  # nothing published since
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 9))  # fmt: skip
        session.commit()
        assert shown_log() == newer.id
        assert shown_log(cohort="2026-12-C0") == log.id
