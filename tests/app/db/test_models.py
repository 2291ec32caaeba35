"""The schema's state and status columns hold only their enums' values."""

from __future__ import annotations

import pytest
from sqlalchemy import exc, text

from app.core.lifecycle import JobState
from app.db.models import Job
from app.db.session import Database

# PostgreSQL too: the column types and constraints are the database's own.
pytestmark = pytest.mark.postgresql


def test_a_state_column_reads_back_as_its_enum_and_refuses_any_other_value(
    database: Database,
) -> None:
    with database.session() as session:
        job = Job(kind="check_submission")
        session.add(job)
        session.commit()
        job_id = job.id
    with database.session() as session:
        queued = session.get(Job, job_id)
        assert queued is not None and queued.state is JobState.QUEUED
        # Stored as the plain value: the schema did not change.
        raw = session.scalar(text("SELECT state FROM jobs WHERE id = :id"), {"id": job_id})
        assert raw == "queued"
        queued.state = "nearly-done"  # type: ignore[assignment]
        with pytest.raises(exc.StatementError, match="nearly-done"):
            session.commit()
        session.rollback()
        again = session.get(Job, job_id)
        assert again is not None and again.state is JobState.QUEUED
