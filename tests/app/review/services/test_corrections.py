"""Corrections of a submission's non-result content (rules §11.7) over the real services:
the archive read by the reading child, compared file by file with the submitted one,
checked by the official checker in the worker's job, applied in review at once, after
finalization on the chair's approval with a new version of the record and the result's
public change log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, principal_of_user
from app.core.lifecycle import CorrectionState, PointState
from app.core.refusals import Refused
from app.db.models import AuditEvent, Correction, Notification, Publication, Submission
from app.db.session import Database
from app.publishing.services.change_log import change_log
from app.publishing.services.ledger import entries_after
from app.review.services.corrections import (
    add_correction,
    decide_correction,
    file_correction,
    run_correction_check,
)
from app.review.services.decisions import set_point_state
from app.review.services.releases import publish_cohort
from app.settings import Settings
from app.submissions.services.storage import receive_local
from tests.support.accounts import create_accounts
from tests.support.corrections import (
    Bundles,
    add_docs,
    add_launch_notes,
    bundles,
    change_result,
    change_snapshot,
    drop_last_point,
    fix_readme,
    label_of,
    no_docs,
    other_division,
    point_dirs,
    rename_system,
)
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.submissions import finalize_unreviewed, pt, submit, user

FILED = pt(2026, 12, 3, 9)


@pytest.fixture
def tree(database: Database, settings: Settings, tmp_path: Path) -> tuple[Bundles, int]:
    """Acme's bundle on disk and its submission, in review (checked 2026-11-30)."""
    create_accounts(database)
    made = bundles(tmp_path)
    sid = submit(database, settings, made.archive("submitted"))
    return made, sid


def _file(
    session: Session, settings: Settings, queue: RecordingQueue, sid: int, archive: Path,
    who: str = "submitter", reason: str = "the README's launch flags",
) -> Correction:  # fmt: skip
    submission = must(session.get(Submission, sid))
    return file_correction(
        session=session, settings=settings, queue=queue, submission=submission,
        who=_as(session, who), reason=reason, at=FILED,
        received=receive_local(archive, settings.tmp_dir, settings.max_upload_bytes),
    )  # fmt: skip


def _as(session: Session, key: str) -> Principal:
    return principal_of_user(user(session, key))


def _run(session: Session, settings: Settings, queue: RecordingQueue) -> None:
    """The worker's job, as the worker runs the last one sent."""
    run_correction_check(session=session, settings=settings, job_id=queue.sent[-1][0],
                         clock=lambda: pt(2026, 12, 3, 10))  # fmt: skip


def _state(correction: Correction) -> CorrectionState:
    """Its state now (read again after the worker's job, which the test cannot show)."""
    return correction.state


def _corrections(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Correction)) or 0


def test_in_review_a_corrected_readme_replaces_the_bundle_and_the_review_goes_on(
    database: Database, settings: Settings, tree: tuple[Bundles, int]
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        before = (submission.archive_id, submission.review_eligible_at, submission.content_digest)
        withdrawn = point_dirs(made.root)[-1]
        set_point_state(session=session, settings=settings, submission=submission,
                        point_label=label_of(withdrawn), state="withdrawn",
                        who=_as(session, "submitter"), reason="faulty run", at=FILED)  # fmt: skip
        # The withdrawn point's results no longer count; the README and docs change.
        archive = made.archive("fixed", fix_readme, add_docs, add_launch_notes, change_result)
        correction = _file(session, settings, queue, sid, archive)
        session.commit()
        assert correction.state == CorrectionState.CHECKING
        readme = sorted(made.root.glob("src/*/README.md"))[0].relative_to(made.root).as_posix()
        assert readme in correction.changed_files
        assert "docs/calibration.md" in correction.changed_files
        assert any(
            f.startswith(f"results/{label_of(withdrawn)}/") for f in correction.changed_files
        )
        assert submission.archive_id == before[0], "nothing changes before its checks pass"

        _run(session, settings, queue)
        session.refresh(submission)
        assert _state(correction) == CorrectionState.APPLIED, correction.outcome
        assert submission.archive_id == correction.archive_id != before[0]
        assert submission.content_digest == correction.content_digest != before[2]
        # The review goes on: same state, same clocks, the withdrawal kept.
        assert submission.state == "passed_checks"
        assert submission.review_eligible_at == before[1]
        states = {f"{c.system.dir_name}/{c.benchmark_model}/{p.dir_name}": p.state
                  for c in submission.curves for p in c.points}  # fmt: skip
        assert states.pop(label_of(withdrawn)) == PointState.WITHDRAWN
        assert set(states.values()) == {PointState.ACTIVE}
        actions = session.scalars(select(AuditEvent.action).where(
            AuditEvent.submission_id == sid)).all()  # fmt: skip
        assert "correction filed" in actions and "corrected" in actions


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (change_result, "result_summary.json differs from the submitted one"),
        (change_snapshot, "metrics/final_snapshot.json differs from the submitted one"),
        (drop_last_point, "is left out: a point leaves the curve by its withdrawal"),
    ],
)
def test_a_correction_that_touches_results_is_refused_naming_the_file(
    database: Database,
    settings: Settings,
    tree: tuple[Bundles, int],
    edit: Callable[[Path], None],
    says: str,
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    archive = made.archive("changed", fix_readme, edit)
    with database.session() as session:
        archive_id = must(session.get(Submission, sid)).archive_id
        with pytest.raises(Refused, match=says) as refused:
            _file(session, settings, queue, sid, archive)
        session.rollback()
        assert refused.value.code == "results-changed"
        assert _corrections(session) == 0 and queue.sent == []
        assert must(session.get(Submission, sid)).archive_id == archive_id


def test_the_same_bundle_another_organisation_or_a_second_at_once_is_refused(
    database: Database, settings: Settings, tree: tuple[Bundles, int]
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        with pytest.raises(Refused, match="nothing changes"):
            _file(session, settings, queue, sid, made.archive("same"))
        with pytest.raises(Refused, match="the submitting organisation"):
            _file(session, settings, queue, sid, made.archive("theirs", fix_readme), who="rival")
        with pytest.raises(Refused, match="say what the correction corrects"):
            _file(session, settings, queue, sid, made.archive("why", fix_readme), reason=" ")
        first = _file(session, settings, queue, sid, made.archive("first", fix_readme))
        session.commit()
        with pytest.raises(Refused, match=f"correction {first.public_id} is not decided yet"):
            _file(session, settings, queue, sid, made.archive("second", add_docs))


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (no_docs, "its official checks failed"),
        (other_division, "a division changes only by the chair's reclassification"),
    ],
)
def test_a_correction_the_checks_refuse_leaves_the_bundle_as_it_was(
    database: Database,
    settings: Settings,
    tree: tuple[Bundles, int],
    edit: Callable[[Path], None],
    says: str,
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        archive_id, systems = submission.archive_id, [s.division for s in submission.systems]
        correction = _file(session, settings, queue, sid, made.archive("broken", edit))
        session.commit()
        _run(session, settings, queue)
        session.refresh(submission)
        assert correction.state == CorrectionState.REFUSED
        assert says in (correction.outcome or "")
        assert submission.archive_id == archive_id
        assert [s.division for s in submission.systems] == systems
        told = session.scalars(select(Notification.body).where(
            Notification.user_id == user(session, "submitter").id)).all()  # fmt: skip
        assert any(says in body for body in told)
        # Refused, it is decided: the next correction may come.
        _file(session, settings, queue, sid, made.archive("next", fix_readme))


def test_after_finalization_the_chair_approves_and_the_record_and_change_log_carry_it(
    database: Database, settings: Settings, tree: tuple[Bundles, int]
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        finalize_unreviewed(session, settings, submission, pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
        versions = len(submission.record_versions)
        correction = _file(session, settings, queue, sid, made.archive("late", rename_system))
        session.commit()
        assert correction.after_finalization
        _run(session, settings, queue)
        assert _state(correction) == CorrectionState.REQUESTED
        assert submission.systems[0].system_name == "Acme corr", "not before the chair says so"
        told = session.scalars(select(Notification.subject).where(
            Notification.user_id == user(session, "chair").id)).all()  # fmt: skip
        assert any(s.startswith("Correction requested") for s in told)

        with pytest.raises(Refused, match="say why the correction is declined"):
            decide_correction(session=session, queue=queue, submission=submission,
                              correction_id=correction.public_id, approve=False,
                              actor="chair@example.com", reason="", at=pt(2026, 12, 4))  # fmt: skip
        decide_correction(session=session, queue=queue, submission=submission,
                          correction_id=correction.public_id, approve=True,
                          actor="chair@example.com", reason="a name typo",
                          at=pt(2026, 12, 4))  # fmt: skip
        session.commit()
        assert _state(correction) == CorrectionState.APPROVED
        _run(session, settings, queue)
        session.refresh(submission)
        assert _state(correction) == CorrectionState.APPLIED
        assert submission.state == "finalized"
        assert submission.systems[0].system_name == "Acme corr (corrected)"
        published = session.scalars(select(Publication).where(
            Publication.submission_id == sid).order_by(Publication.id)).all()  # fmt: skip
        assert len(published) > versions
        kinds = [e.kind for e in entries_after(session, 0, 1000)]
        assert kinds[-1] == "correction"
        [entry] = change_log(session, submission.public_id)
        assert (
            entry.what == "the README's launch flags" and entry.approved_by == "chair@example.com"
        )
        assert any(f.endswith("system_desc.json") for f in entry.files)
        with pytest.raises(Refused, match="only a requested one"):
            decide_correction(session=session, queue=queue, submission=submission,
                              correction_id=correction.public_id, approve=True,
                              actor="chair@example.com", reason="", at=pt(2026, 12, 5))  # fmt: skip


def test_the_chair_declines_a_request_and_nothing_changes(
    database: Database, settings: Settings, tree: tuple[Bundles, int]
) -> None:
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        finalize_unreviewed(session, settings, submission, pt(2026, 12, 1))
        correction = _file(session, settings, queue, sid, made.archive("late", fix_readme))
        session.commit()
        _run(session, settings, queue)
        decide_correction(session=session, queue=queue, submission=submission,
                          correction_id=correction.public_id, approve=False,
                          actor="chair@example.com", reason="not a correction",
                          at=pt(2026, 12, 4))  # fmt: skip
        session.commit()
        assert correction.state == CorrectionState.DECLINED
        assert submission.archive_id != correction.archive_id
        assert change_log(session, submission.public_id) == []


@pytest.mark.postgresql
def test_the_database_holds_one_undecided_correction_per_submission(
    database: Database, settings: Settings, tree: tuple[Bundles, int]
) -> None:
    """Two corrections filed at the same instant both pass the service's look: the index
    keeps the second out, and file_correction says so (decided ones are many)."""
    made, sid = tree
    queue = RecordingQueue()
    with database.session() as session:
        first = _file(session, settings, queue, sid, made.archive("first", fix_readme))
        session.commit()

        def another(state: CorrectionState) -> Correction:
            return Correction(
                submission_id=sid, archive_id=first.archive_id, archive_format="tar.gz",
                bundle_root=first.bundle_root, content_digest=first.content_digest,
                changed_files=[], reason="r", filed_by="x", filed_at=FILED, state=state,
            )  # fmt: skip

        with pytest.raises(Refused, match="filed at the same moment"):
            add_correction(session, another(CorrectionState.REQUESTED))
        add_correction(session, another(CorrectionState.REFUSED))
        add_correction(session, another(CorrectionState.DECLINED))
        session.commit()
        assert _corrections(session) == 3
