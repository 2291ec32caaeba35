"""Reproductions of a published point show as its spread from the next version of the
record on, frozen as published, on the explorer's points and ranking."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import Point, Reproduction, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.pipeline import run_checks
from app.publishing.services.publishing import sync_record
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.fakes import RecordingQueue
from tests.support.submissions import accept, pt


def _reproduced(session, submission: Submission, point: Point, tps: float, at: dt.datetime) -> str:  # type: ignore[no-untyped-def]
    """A reproduction's row as a finished run leaves it (the run itself is tested in
    tests/app/runs/services/test_reproductions.py)."""
    curve = point.curve
    run = Reproduction(
        submission=submission, point_id=point.id,
        point_label=f"{curve.system.dir_name}/{curve.benchmark_model}/{point.dir_name}",
        endpoint_url="http://127.0.0.1:9", model=curve.benchmark_model,
        concurrency=point.concurrency, time_cap_s=60, finished_at=at,
        system_tps=tps, tps_per_user=point.tps_per_user, n_completed=100, n_failed=0,
    )  # fmt: skip
    session.add(run)
    session.flush()
    return run.public_id


def test_a_reproduced_point_shows_its_runs_from_the_next_version(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    archive = BundleFactory(system=SystemSpec(name="Acme R"), submission_id="rep",
                            target_cohort="2026-11-C0").archive(tmp_path / "r.tar.gz")  # fmt: skip
    queue = RecordingQueue()
    accept(database, settings, queue, archive, for_review=False)
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0],
                   clock=lambda: pt(2026, 10, 28, 10))  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id="2026-11-C0",
                       at=pt(2026, 11, 4, 9))  # fmt: skip
        submission = session.scalars(select(Submission)).one()
        point = next(p for c in submission.curves for p in c.points if p.dir_name == "r16")
        submitted = point.system_tps
        ids = [
            _reproduced(session, submission, point, submitted * f, pt(2026, 11, 5, h))
            for h, f in ((10, 0.96), (11, 1.02))
        ]
        session.commit()
        # Only time passes: the record takes the runs in a new version, saying why.
        version = sync_record(session, settings, submission, pt(2026, 11, 6, 9),
                              points_changed=False)  # fmt: skip
        session.commit()
        assert version is not None and "reproduced since the last version" in (
            version.description or ""
        )
        assert sync_record(session, settings, submission, pt(2026, 11, 6, 10),
                           points_changed=False) is None  # fmt: skip  # nothing new since

    params = {"benchmark": "llama3_1-8b", "status": "unverified", "limit": "all"}
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        body = client.get("/api/v1/results", params=params).json()
    [curve] = [c for c in body["curves"] if c["system"] == "Acme R"]
    shown = {p["dir"]: p.get("repeatability") for p in curve["points"]}
    runs = shown["r16"]
    assert runs is not None and runs["runs"] == 3 and runs["reproductions"] == ids
    spread = runs["system_tps"]
    assert spread["min"] == pytest.approx(submitted * 0.96, abs=1e-3)
    assert spread["max"] == pytest.approx(submitted * 1.02, abs=1e-3) and spread["cv"] > 0
    assert spread["ci95"][0] < spread["mean"] < spread["ci95"][1]
    assert all(v is None for d, v in shown.items() if d != "r16")  # the others: one run
