"""Composing a submission from runs in the browser: the same runs, the official builder
and checker, the same record and intake as the official CLI; the same bundle."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from endpoints_submission_cli.submissions.builder import build_submission_folder
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import ApiSubmission, MeasuredRun, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from app.storage import archive_key, artifact_store
from app.submissions.domain.bundle import content_digest
from tests.support.accounts import ACCOUNTS, PASSWORD, create_accounts, form_token
from tests.support.fakes import RecordingQueue
from tests.support.official_cli import registered_run


@pytest.fixture
def signed_in(
    settings: Settings, database: Database, tmp_path: Path
) -> tuple[TestClient, RecordingQueue, list[str]]:
    create_accounts(database)
    folders = BundleFactory(system=SystemSpec(name="Acme Page"), submission_id="p").run_folders(
        tmp_path / "runs"
    )
    runs = [registered_run(database, settings, ACCOUNTS["submitter"][0], f) for f in folders]
    queue = RecordingQueue()
    client = TestClient(create_app(settings, queue=queue))
    client.post("/login", data={"email": ACCOUNTS["submitter"][0], "password": PASSWORD,
                                "csrf_token": form_token(client)})  # fmt: skip
    return client, queue, runs


def _compose(client: TestClient, runs: list[str], **fields: str):  # type: ignore[no-untyped-def]
    page = client.get("/runs").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    data = {"csrf_token": token, "division": "standardized", "scenario": "cop",
            "availability": "available", **fields}  # fmt: skip
    return client.post("/runs/compose", data={**data, "run_ids": runs}, follow_redirects=False)


@pytest.mark.filterwarnings("ignore:Runs have inconsistent system_info")
def test_a_submission_composed_in_the_browser_is_the_cli_s_bundle_checked_by_the_portal(
    signed_in: tuple[TestClient, RecordingQueue, list[str]],
    settings: Settings,
    database: Database,
    tmp_path: Path,
) -> None:
    client, queue, runs = signed_in
    page = client.get("/runs").text
    assert all(f'data-run="{run}"' in page for run in runs)
    answer = _compose(client, runs)
    assert answer.status_code == 303, answer.text[:2000]
    sid = answer.headers["location"].rsplit("/", 1)[1]
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
        submission = session.scalar(select(Submission).where(Submission.public_id == sid))
        assert submission is not None and submission.state == "passed_checks"
        assert session.scalar(select(ApiSubmission.submission_id)) == submission.id
        # The CLI's builder on the same archives makes the same bundle (its own marker aside).
        store = artifact_store(settings)
        archives = [
            (run.public_id, store.local_path(archive_key(run.archive.sha256)))
            for run in session.scalars(select(MeasuredRun).order_by(MeasuredRun.id))
            if run.archive is not None
        ]
        org = build_submission_folder(archives, "standardized", "available", tmp_path / "cli", sid)
        assert submission.content_digest == content_digest(org / sid)
    assert f"/submissions/{sid}" in client.get("/runs").text  # "in submission"


def test_runs_the_checker_refuses_register_nothing_and_say_why(
    signed_in: tuple[TestClient, RecordingQueue, list[str]], database: Database
) -> None:
    client, queue, runs = signed_in
    answer = _compose(client, runs[:3])  # too few points for a curve
    assert answer.status_code == 422
    assert 'id="checker-errors"' in answer.text and "minimum" in answer.text
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(ApiSubmission)) == 0
        assert session.scalar(select(func.count()).select_from(Submission)) == 0
    assert queue.sent == []
