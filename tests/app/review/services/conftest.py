"""A published result for the remedies' and the late objections' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.db.models import Submission
from app.db.session import Database
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.submissions import archive_of, finalize_unreviewed, pt, submit


@pytest.fixture
def published(database: Database, settings: Settings, tmp_path: Path) -> int:
    """An Available result, finalized and public from 2026-12-C0."""
    create_accounts(database)
    sid = submit(database, settings, archive_of(tmp_path, "remedy"))
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, sid), pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
    return sid
