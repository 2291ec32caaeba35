"""Submissions as the tests need them: accepted, or accepted and checked at a set time,
with distinct bundles, and an objection filed against one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import PublicationMode
from app.db.models import Submission, User
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.pipeline import run_checks
from app.review.services.objections import file_objection
from app.review.services.review import finalize
from app.settings import Settings
from app.submissions.services.intake import accept_upload
from app.submissions.services.storage import receive_local
from tests.support.accounts import ACCOUNTS
from tests.support.fakes import RecordingQueue

PT = ZoneInfo("America/Los_Angeles")
# The chair's override for a test whose subject is not the review: finalized without one.
UNREVIEWED = "the test finalizes without a reviewer: the review is not what it checks"


def finalize_unreviewed(
    session: Session, settings: Settings, submission: Submission | None, at: dt.datetime
) -> None:
    """Finalize *submission* at *at* with the chair's override (:data:`UNREVIEWED`)."""
    assert submission is not None
    finalize(session=session, settings=settings, submission=submission, at=at,
             override=UNREVIEWED)  # fmt: skip


CHECKED = dt.datetime(2026, 11, 30, 10, tzinfo=PT)  # Monday; eligible for 2026-12-C0


def pt(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, second, tzinfo=PT)


def user(session: Session, key: str) -> User:
    """The ACCOUNTS user *key* (the test made the accounts)."""
    return session.scalars(select(User).where(User.email == ACCOUNTS[key][0])).one()


def accept(
    database: Database,
    settings: Settings,
    queue: RecordingQueue,
    archive: Path,
    for_review: bool = True,
    uploader: str | None = None,
) -> tuple[int, bool]:
    """Upload *archive* (by the ACCOUNTS user *uploader*, where the test made the
    accounts; else by nobody): the submission's id, and whether it was a duplicate. Its
    check job is left in *queue*."""
    with database.session() as session:
        by = ACCOUNTS[uploader][0] if uploader else None
        account = session.scalar(select(User).where(User.email == by)) if by else None
        accepted = accept_upload(
            session=session,
            settings=settings,
            queue=queue,
            received=receive_local(archive, settings.tmp_dir, settings.max_upload_bytes),
            filename=archive.name,
            for_review=for_review,
            uploader=account,
        )
        session.commit()
        return accepted.submission.id, accepted.duplicate


def submit(
    database: Database,
    settings: Settings,
    archive: Path,
    *,
    mode: str = "confidential",
    embargo: dt.date | None = None,
    checked_at: dt.datetime = CHECKED,
    uploader: str = "submitter",
) -> int:
    """Accepted for review and checked at *checked_at*: the submission's id."""
    queue = RecordingQueue()
    submission_id, _ = accept(database, settings, queue, archive, uploader=uploader)
    with database.session() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        submission.publication_mode = PublicationMode(mode)
        submission.embargo_date = embargo
        session.commit()
        run_checks(
            session=session, settings=settings, job_id=queue.sent[0][0], clock=lambda: checked_at
        )
        assert submission.state == "passed_checks"
        return submission_id


def archive_of(tmp_path: Path, name: str, speed: float = 1.0) -> Path:
    """A distinct passing Acme bundle (distinct content, so never a duplicate)."""
    system = SystemSpec(name=f"Acme {name}", saturation_tps=40_000 * speed)
    return BundleFactory(system=system, submission_id=f"sub-{name}").archive(
        tmp_path / f"{name}.tar.gz"
    )


def objection(session, submission: Submission, at: dt.datetime, type_id: str = "compliance"):  # type: ignore[no-untyped-def]
    filer = user(session, "reviewer")
    assert filer is not None, "an objection needs the test accounts"
    return file_objection(
        session=session,
        settings=Settings(),
        submission=submission,
        filer=filer,
        type_id=type_id,
        title="Duration too short",
        rule_cited="R §6.2",
        evidence="r64 ran 412 s; the Medium region needs 600 s",
        at=at,
    )


def release_then_invalidate(database: Database, settings: Settings, archive: Path) -> int:
    """A finalized result released in 2026-12-C1, the next cohort released, then the
    result invalidated: the record's story in four changes (its id is returned)."""
    from app.review.services.decisions import decide
    from app.review.services.releases import publish_cohort

    sid = submit(database, settings, archive)
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, sid), pt(2026, 12, 7))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id="2027-01-C0",
                       at=pt(2027, 1, 6, 8))  # fmt: skip
        invalidated = session.get(Submission, sid)
        assert invalidated is not None
        decide(session=session, settings=settings, submission=invalidated, action="invalidate",
               actor="chair", reason="tokens miscounted", at=pt(2027, 1, 8))  # fmt: skip
        session.commit()
    return sid


def in_dispute(database: Database, settings: Settings, archive: Path) -> int:
    """*archive* submitted (eligible 2026-11-30) with an objection the objectors are still
    validating when Week 6 closes on 2027-01-10: a dispute from the tick of 2027-01-11
    (rules §11.6). The accounts exist already."""
    from app.review.services.disputes import dispute_of
    from app.review.services.objections import act
    from app.review.services.ticks import advance_clocks

    sid = submit(database, settings, archive)
    with database.session() as session:
        sub = session.get(Submission, sid)
        assert sub is not None
        filed = objection(session, sub, pt(2026, 12, 2))
        act(session=session, settings=settings, objection=filed, user=user(session, "submitter"),
            action="contest", body="the run is long enough", at=pt(2026, 12, 3))  # fmt: skip
        act(session=session, settings=settings, objection=filed, user=user(session, "reviewer"),
            action="validation_schedule", body="we re-run it", at=pt(2026, 12, 4))  # fmt: skip
        advance_clocks(session, settings, pt(2027, 1, 11, 9))
        session.commit()
        assert sub.review_phase == "dispute" and dispute_of(session, sub) is not None
    return sid
