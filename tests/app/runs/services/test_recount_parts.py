"""A large point counted in parts by several jobs: the same numbers as one job, the
parent waits and is released exactly once, and a lost, broken or cancelled part ends the
point's re-count with the reason."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import JobState
from app.db.models import Job, RecountPart, Retokenization, Submission
from app.db.session import Database
from app.jobs.queue import release_parent
from app.jobs.recovery import recover_jobs
from app.pipeline import JOB_KINDS, run_checks
from app.runs.services.recount_parts import RECOUNT_PART
from app.runs.services.retokenization import (
    RETOKENIZE_POINT,
    cancel_retokenization,
    findings_of,
    request_retokenization,
)
from app.settings import Settings
from app.storage import artifact_store
from app.submissions.services.artifacts import register_events, store_events_file
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.submissions import accept
from tests.support.sweeps import make_sweep

# PostgreSQL too: parts are claimed and released across transactions.
pytestmark = pytest.mark.postgresql

PARTS = 3


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, Path]], Path]:
    return make_sweep(tmp_path_factory.mktemp("sweep"))


@dataclass
class Env:
    database: Database
    settings: Settings  # splits every point into PARTS parts of 20-line blocks
    queue: RecordingQueue
    submission_id: int
    events: list[tuple[str, Path]]

    def recount(self, label: str, path: Path, settings: Settings | None = None) -> str:
        """Store *path* as the point's events and queue its re-count: the re-count's id."""
        with self.database.session() as session:
            submission = session.get(Submission, self.submission_id)
            assert submission is not None
            stored = store_events_file(settings or self.settings, path)
            register_events(session, submission, label, stored, "upload")
            [retok] = request_retokenization(
                session=session, queue=self.queue, submission=submission, point_label=label
            )
            session.commit()
            return retok.public_id

    def planned(self, label: str, path: Path) -> tuple[str, int]:
        """A re-count whose job has queued its parts: its id and its job's; the parts'
        jobs are in the queue."""
        public_id = self.recount(label, path)
        [(job_id, kind)] = self.queue.sent
        self.queue.sent.clear()
        self.run(job_id, kind)
        return public_id, job_id

    def run(self, job_id: int, kind: str, settings: Settings | None = None) -> None:
        with self.database.session() as session:
            JOB_KINDS[kind].run(
                session=session, settings=settings or self.settings, job_id=job_id, queue=self.queue
            )

    def drain(self, settings: Settings | None = None, parts_last_first: bool = False) -> None:
        """Run what was sent, in order, as workers would, until nothing is left; the
        parts sent together run last-first when asked (the order must not matter)."""
        while self.queue.sent:
            batch, self.queue.sent = self.queue.sent, []
            if parts_last_first:
                batch.sort(key=lambda sent: (sent[1] != RECOUNT_PART, -sent[0]))
            for job_id, kind in batch:
                self.run(job_id, kind, settings)

    def retok(self, session: Session, public_id: str) -> Retokenization:
        return session.scalars(
            select(Retokenization).where(Retokenization.public_id == public_id)
        ).one()


@pytest.fixture
def env(settings: Settings, database: Database, swept, tmp_path: Path) -> Env:  # type: ignore[no-untyped-def]
    archive, events, tokenizer_dir = swept
    registry = tmp_path / "tokenizers.json"
    registry.write_text(json.dumps({"llama3_1-8b": {"location": str(tokenizer_dir)}}))
    settings = settings.model_copy(
        update={
            "tokenizer_registry": registry,
            "retokenize_split_bytes": 1,
            "retokenize_max_parts": PARTS,
            "retokenize_block_lines": 20,
        }
    )
    queue = RecordingQueue()
    submission_id, _ = accept(database, settings, queue, archive)
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
    queue.sent.clear()
    return Env(database, settings, queue, submission_id, events)


def _outcome(session, retok: Retokenization) -> dict[str, object]:  # type: ignore[no-untyped-def]
    recount = dict(retok.recount or {})
    recount.pop("tokens_per_s")  # how fast, not what
    return {
        "recount": recount,
        "timeseries": retok.timeseries,
        "steady_state": retok.steady_state,
        "findings": [(f.rule, f.severity, f.message) for f in findings_of(session, retok)],
    }


def test_a_point_counted_in_parts_gives_the_numbers_one_job_gives(env: Env) -> None:
    label, path = max(env.events, key=lambda e: e[1].stat().st_size)
    split = env.recount(label, path)
    env.drain(parts_last_first=True)
    whole_settings = env.settings.model_copy(update={"retokenize_split_bytes": 1 << 40})
    whole = env.recount(label, path, whole_settings)
    env.drain(whole_settings)
    with env.database.session() as session:
        parted, single = env.retok(session, split), env.retok(session, whole)
        assert must(parted.job).state == must(single.job).state == JobState.SUCCEEDED
        assert [p.part for p in parted.parts] == list(range(PARTS)) and single.parts == []
        assert all(must(p.job).state == JobState.SUCCEEDED for p in parted.parts)
        # Each part counted its own blocks: the work really was shared.
        responses = [p.responses or 0 for p in parted.parts]
        assert sum(1 for r in responses if r > 0) >= 2
        assert sum(responses) == must(parted.recount)["n_samples_completed"]
        assert "counted in 3 parts" in (must(parted.job).stage or "")
        assert _outcome(session, parted) == _outcome(session, single)
        problems = [f for f in findings_of(session, parted) if f.severity != "info"]
        assert problems == []  # an honest run re-counts to its own numbers
    assert _saved_counts(env.settings) == []  # merged, then removed from the store


def test_the_point_waits_for_its_parts_and_is_released_once(env: Env) -> None:
    label, path = env.events[0]
    public_id, job_id = env.planned(label, path)
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        assert must(retok.job).state == JobState.WAITING and must(retok.job).attempts == 0
        assert "counting in 3 parts" in (must(retok.job).stage or "")
        part_jobs = [p.job_id for p in retok.parts]
        # One re-count of a point at a time: asking again while it waits starts none.
        again = request_retokenization(
            session=session, queue=env.queue, submission=retok.submission, point_label=label
        )
        assert again == []
    assert env.queue.sent == [(j, RECOUNT_PART) for j in part_jobs]
    env.queue.sent.clear()

    # Long after: the recovery sweep leaves the waiting job alone, and sends the part
    # jobs no worker took.
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    with env.database.session() as session:
        sent = recover_jobs(
            session=session,
            settings=env.settings,
            queue=env.queue,
            kinds=JOB_KINDS,
            clock=lambda: later,
        )
    assert sorted(sent) == sorted(part_jobs) and job_id not in sent
    env.queue.sent.clear()

    for part_job in part_jobs[:-1]:
        env.run(part_job, RECOUNT_PART)
    assert env.queue.sent == []  # a part is still out
    env.run(part_jobs[-1], RECOUNT_PART)
    assert env.queue.sent == [(job_id, RETOKENIZE_POINT)]
    with env.database.session() as session:
        parent = session.get(Job, job_id)
        assert parent is not None and parent.state == JobState.QUEUED
        assert parent.stage == "merging the 3 parts"
        # Every part in: a second release finds the point's job no longer waiting.
        child = session.get(Job, part_jobs[0])
        assert child is not None
        assert release_parent(session, env.queue, child, stage="again") is False
    assert env.queue.sent == [(job_id, RETOKENIZE_POINT)]
    env.drain()
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        assert must(retok.job).state == JobState.SUCCEEDED and retok.finished_at is not None


def test_a_release_lost_with_its_worker_is_made_by_the_recovery_sweep(env: Env) -> None:
    label, path = env.events[0]
    public_id = env.recount(label, path)
    env.drain()
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        # As if the last part's worker died between its success and the release.
        must(retok.job).state = JobState.WAITING
        retok.finished_at = None
        session.commit()
        job_id = must(retok.job).id
        sent = recover_jobs(
            session=session, settings=env.settings, queue=env.queue, kinds=JOB_KINDS
        )
    assert sent == [job_id] and env.queue.sent == [(job_id, RETOKENIZE_POINT)]


def test_a_part_lost_too_often_fails_the_point_with_the_part_named(env: Env) -> None:
    label, path = env.events[0]
    public_id, _job = env.planned(label, path)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        first, second, third = (must(p.job) for p in retok.parts)
        # Part 2's worker died on every attempt; part 1 was done, part 3 never taken.
        env.run(first.id, RECOUNT_PART)
        session.refresh(first)
        second.state, second.attempts = JobState.RUNNING, env.settings.job_max_attempts
        second.heartbeat_at = dt.datetime.now(dt.UTC)
        session.commit()
        recover_jobs(
            session=session,
            settings=env.settings,
            queue=env.queue,
            kinds=JOB_KINDS,
            clock=lambda: later,
        )
        session.expire_all()
        retok = env.retok(session, public_id)
        assert must(retok.job).state == JobState.FAILED and retok.finished_at is not None
        assert must(must(retok.job).error).startswith(
            "part 2 of 3 could not be counted: gave up after"
        )
        assert [must(p.job).state for p in retok.parts] == [
            JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED,
        ]  # fmt: skip
        third_id = third.id
    # The cancelled part, if a worker still gets its message, does nothing; the
    # recovery round removes the counts nobody will merge.
    env.run(third_id, RECOUNT_PART)
    with env.database.session() as session:
        recover_jobs(session=session, settings=env.settings, queue=env.queue, kinds=JOB_KINDS)
    assert _saved_counts(env.settings) == []


def test_doctored_part_counts_are_refused_at_the_merge(env: Env) -> None:
    label, path = env.events[0]
    public_id, _job = env.planned(label, path)
    with env.database.session() as session:
        part_jobs = [p.job_id for p in env.retok(session, public_id).parts]
    for part_job in part_jobs:
        env.run(part_job, RECOUNT_PART)
    with env.database.session() as session:
        sha256 = env.retok(session, public_id).parts[1].counts_sha256
    assert sha256 is not None and len(_saved_counts(env.settings)) == 3
    saved = env.settings.blobs_dir / sha256[:2] / f"{sha256}.npz"
    saved.write_bytes(saved.read_bytes() + b"\0")
    env.drain()
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        assert must(retok.job).state == JobState.FAILED and retok.recount is None
        assert must(retok.job).error == "the counts of part 2 of 3 are not the file its job saved"


def test_cancelling_a_waiting_recount_stops_its_parts(env: Env) -> None:
    label, path = env.events[0]
    public_id, _job = env.planned(label, path)
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        first = retok.parts[0].job
        first.state = JobState.RUNNING  # taken by a worker, still counting
        first.heartbeat_at = dt.datetime.now(dt.UTC)
        session.commit()
        cancel_retokenization(session=session, retok=retok, actor="chair@mlcommons.example")
        session.commit()
        session.expire_all()
        retok = env.retok(session, public_id)
        assert must(retok.job).state == JobState.CANCELLED and retok.finished_at is not None
        assert [must(p.job).state for p in retok.parts] == [
            JobState.CANCELLING, JobState.CANCELLED, JobState.CANCELLED,
        ]  # fmt: skip
    # What workers still receive for the cancelled parts does nothing; the counting
    # part's worker died before its next report (its message went with it): the recovery
    # sweep sends it again, and it ends as cancelled without counting.
    env.queue.sent = [(job, kind) for job, kind in env.queue.sent if job != first.id]
    env.drain()
    with env.database.session() as session:
        assert env.retok(session, public_id).parts[0].job.state == JobState.CANCELLING
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    with env.database.session() as session:
        sent = recover_jobs(
            session=session,
            settings=env.settings,
            queue=env.queue,
            kinds=JOB_KINDS,
            clock=lambda: later,
        )
        first_id = env.retok(session, public_id).parts[0].job_id
    assert sent == [first_id]
    env.drain()
    with env.database.session() as session:
        retok = env.retok(session, public_id)
        assert [must(p.job).state for p in retok.parts] == [JobState.CANCELLED] * PARTS
        assert session.scalars(select(RecountPart.counts_sha256)).all() == [None] * PARTS
        assert retok.recount is None


def _saved_counts(settings: Settings) -> list[str]:
    """The parts' counts in the artifact store."""
    return [key for key in artifact_store(settings).keys() if key.endswith(".npz")]
