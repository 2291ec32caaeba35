"""Peer review with a controllable clock: reviewers, objections, penalties, phases,
embargoes, visibility, result ids and the cohort export (rules §4, §9.7, §11)."""

from __future__ import annotations

import datetime as dt
import json
import tarfile
from pathlib import Path

import pytest
from sqlalchemy import String, select

from app.accounts.services.accounts import Principal, create_user, principal_for_token
from app.core.authorization import Role
from app.db.models import AuditEvent, Notification, Publication, ResultEntry, Submission, User
from app.db.session import Database
from app.publishing.services.publishing import PublishingError
from app.results.services.dataset import cohort_dataset
from app.review.domain.objections import ObjectionRefused
from app.review.services.decisions import decide
from app.review.services.objections import act, file_objection
from app.review.services.releases import publish_cohort
from app.review.services.review import complete_review, finalize
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.visibility import access_to
from tests.support.accounts import ACCOUNTS, PASSWORD, create_accounts
from tests.support.rows import must
from tests.support.submissions import (
    CHECKED,
    archive_of,
    finalize_unreviewed,
    objection,
    pt,
    submit,
    user,
)

# PostgreSQL too: the review's clocks compare stored times, kept by each database its own way.
pytestmark = pytest.mark.postgresql


@pytest.fixture
def tokens(database: Database) -> dict[str, str]:
    return create_accounts(database)


def test_review_starts_with_a_reviewer_from_outside_the_organisation(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    with database.session() as session:
        create_user(
            session=session,
            email="rev@acme.example",
            password=PASSWORD,
            role=Role.REVIEWER,
            organization="Acme Corp",
        )
        session.commit()
    ids = [submit(database, settings, archive_of(tmp_path, n, s)) for n, s in (("a", 1), ("b", 2))]
    with database.session() as session:
        first, second = (must(session.get(Submission, i)) for i in ids)
        assert first.review_phase == "peer_review" and first.review_eligible_at == CHECKED
        reviewers = {must(first.reviewer).email, must(second.reviewer).email}
        # Never Acme's own reviewer; rotation without replacement: two different people.
        assert reviewers == {ACCOUNTS["reviewer"][0], ACCOUNTS["reviewer2"][0]}
        inbox = session.scalars(
            select(Notification.subject).where(Notification.user_id == must(first.reviewer).id)
        ).all()
        assert any(s.startswith("You review") for s in inbox)


def test_unanswered_objection_costs_cohorts_then_the_submission(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        objection(session, submission, pt(2026, 12, 1, 9))  # Tuesday
        session.commit()
        assert advance_clocks(session, settings, pt(2026, 12, 4, 23)).actions == []
        advance_clocks(session, settings, pt(2026, 12, 5, 0, 1))  # Wed, Thu, Fri have ended
        assert submission.penalty_cohorts == 1
        advance_clocks(session, settings, pt(2026, 12, 5, 0, 2))  # nothing twice
        assert submission.penalty_cohorts == 1
        advance_clocks(session, settings, pt(2026, 12, 10, 0, 1))  # 6
        assert submission.penalty_cohorts == 2 and submission.state == "passed_checks"
        advance_clocks(session, settings, pt(2026, 12, 15, 23))
        assert submission.state == "passed_checks"
        report = advance_clocks(session, settings, pt(2026, 12, 16, 0, 1))  # 10
        assert submission.state == "withdrawn" and any("withdrawn" in a for a in report.actions)
        session.commit()
        subjects = session.scalars(
            select(Notification.subject).where(
                Notification.user_id == user(session, "submitter").id
            )
        ).all()
        assert sum(s.startswith("Penalty") for s in subjects) == 2
        assert any(s.startswith("Withdrawn") for s in subjects)


def test_an_answer_stops_the_clock_and_the_objectors_silence_retracts(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        filed = objection(session, submission, pt(2026, 12, 1, 9))
        with pytest.raises(ObjectionRefused, match="only the submitter"):
            act(
                session=session,
                settings=settings,
                objection=filed,
                user=user(session, "reviewer"),
                action="contest",
                body="no",
            )
        act(
            session=session,
            settings=settings,
            objection=filed,
            user=user(session, "submitter"),
            action="contest",
            body="The log shows 640 s; see r64/logs/run.log line 12.",
            at=pt(2026, 12, 3, 15),
        )
        assert filed.state == "answered"
        # Chair cannot finalize while it is open.
        with pytest.raises(PublishingError, match="still open"):
            finalize_unreviewed(session, settings, submission, pt(2026, 12, 4))
        advance_clocks(session, settings, pt(2026, 12, 7, 23))  # objectors' 2 days: Fri, Mon
        assert filed.state == "answered" and submission.penalty_cohorts == 0
        advance_clocks(session, settings, pt(2026, 12, 8, 0, 1))
        assert filed.state == "retracted" and filed.messages[-1].author == "system"
        assert submission.state == "passed_checks"  # early finalization is the chair's
        # Peer review closes at the end of day 21 (Dec 20), but the assigned review is not
        # complete: the clock does not finalize; it tells the chair, once.
        report = advance_clocks(session, settings, pt(2026, 12, 21, 0, 1))
        assert submission.state == "passed_checks"
        assert any("review incomplete" in a for a in report.actions)
        again = advance_clocks(session, settings, pt(2026, 12, 21, 1))
        assert not any("review incomplete" in a for a in again.actions)
        session.commit()
        told = session.scalars(
            select(Notification.subject).where(Notification.user_id == user(session, "chair").id)
        ).all()
        assert sum(s.startswith("Review incomplete") for s in told) == 1
        # The reviewer completes it; the next tick finalizes.
        assert submission.reviewer is not None
        complete_review(session=session, submission=submission, reviewer=submission.reviewer,
                        notes="checked", at=pt(2026, 12, 21, 9))  # fmt: skip
        report = advance_clocks(session, settings, pt(2026, 12, 21, 10))
        assert submission.state == "finalized" and any("finalized" in a for a in report.actions)
        assert submission.due_cohort == "2027-01-C0"  # first cohort after Dec 21


def test_objection_windows_parties_and_disputes(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        insider = create_user(
            session=session,
            email="rev@acme.example",
            password=PASSWORD,
            role=Role.REVIEWER,
            organization="Acme Corp",
        )
        refusals = ((user(session, "submitter"), "committee"), (insider, "another organisation"))
        for filer, reason in refusals:
            with pytest.raises(ObjectionRefused, match=reason):
                file_objection(
                    session=session,
                    settings=settings,
                    submission=submission,
                    filer=filer,
                    type_id="compliance",
                    title="t",
                    rule_cited="r",
                    evidence="e",
                    at=pt(2026, 12, 2),
                )
        cosmetic = objection(session, submission, pt(2026, 12, 2), "cosmetic")
        blocking = objection(session, submission, pt(2026, 12, 2))
        act(
            session=session,
            settings=settings,
            objection=blocking,
            user=user(session, "reviewer2"),
            action="join",
        )
        assert len(blocking.by_organizations) == 2
        act(
            session=session,
            settings=settings,
            objection=blocking,
            user=user(session, "submitter"),
            action="acknowledge",
            body="Will re-run r64.",
            at=pt(2026, 12, 3),
        )
        act(
            session=session,
            settings=settings,
            objection=blocking,
            user=user(session, "reviewer2"),
            action="mark_unresolved",
            body="Not enough.",
            at=pt(2026, 12, 4),
        )
        act(
            session=session,
            settings=settings,
            objection=cosmetic,
            user=user(session, "submitter"),
            action="acknowledge",
            body="Typo fixed.",
            at=pt(2026, 12, 3),
        )
        act(
            session=session,
            settings=settings,
            objection=cosmetic,
            user=user(session, "reviewer"),
            action="comment",
            body="Thanks.",
            at=pt(2026, 12, 4),
        )
        assert blocking.state == "unresolved"
        with pytest.raises(ObjectionRefused, match="Weeks 1–3"):
            objection(session, submission, pt(2026, 12, 22))  # after day 21
        assert submission.reviewer is not None  # the review is done in Week 3
        complete_review(session=session, submission=submission, reviewer=submission.reviewer,
                        notes="checked", at=pt(2026, 12, 18))  # fmt: skip
        advance_clocks(session, settings, pt(2027, 1, 11, 0, 1))  # Week 6 ended on Jan 10
        assert submission.review_phase == "dispute"
        chair_inbox = session.scalars(
            select(Notification.subject).where(Notification.user_id == user(session, "chair").id)
        ).all()
        assert any(s.startswith("Dispute") for s in chair_inbox)
        # Still open as Week 5 began: the chair may call a meeting (said once).
        assert sum(s.startswith("Meeting") for s in chair_inbox) == 1
        with pytest.raises(ObjectionRefused, match="late grounds"):
            objection(session, submission, pt(2027, 1, 12))  # compliance: not a late ground
        late = objection(session, submission, pt(2027, 1, 12), "availability")
        act(
            session=session,
            settings=settings,
            objection=late,
            user=user(session, "chair"),
            action="resolve",
            body="Unsubstantiated.",
            at=pt(2027, 1, 12, 1),
        )
        # The cosmetic one was answered; the objectors' silence then retracted it.
        assert cosmetic.state == "retracted"
        act(
            session=session,
            settings=settings,
            objection=blocking,
            user=user(session, "chair"),
            action="resolve",
            body="Re-run accepted.",
        )
        advance_clocks(session, settings, pt(2027, 1, 12, 2))
        assert submission.state == "finalized" and submission.penalty_cohorts == 0


def test_provisional_embargo_holds_publication_and_review_until_its_date(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(
        database, settings, good_archive, mode="provisional", embargo=dt.date(2026, 12, 10)
    )
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        assert submission.review_phase == "awaiting_review"
        at_c0 = pt(2026, 12, 2, 8)
        assert (
            publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0", at=at_c0)
            == []
        )
        assert advance_clocks(session, settings, pt(2026, 12, 10, 7, 59)).actions == []
        # Released at the publication hour of its date (rules §4.1), joining the record
        # of the cohort being prepared: 2026-12-C0 was released already.
        advance_clocks(session, settings, pt(2026, 12, 10, 8, 1))
        publication = must(
            session.scalar(select(Publication).where(Publication.submission_id == sid))
        )
        assert (publication.status, publication.cohort) == ("provisional", "2026-12-C1")
        assert submission.review_phase == "peer_review"
        assert submission.review_eligible_at == pt(2026, 12, 10, 8, 1)


def test_confidential_embargo_releases_the_finalized_result_on_its_date(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive, embargo=dt.date(2027, 1, 12))
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        finalize_unreviewed(session, settings, submission, pt(2026, 12, 7))
        at_c1 = pt(2026, 12, 16, 8)
        assert (
            publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1", at=at_c1)
            == []
        )
        advance_clocks(session, settings, pt(2027, 1, 12, 7, 59))
        assert session.scalar(select(Publication).where(Publication.submission_id == sid)) is None
        advance_clocks(session, settings, pt(2027, 1, 12, 8, 1))
        publication = must(
            session.scalar(select(Publication).where(Publication.submission_id == sid))
        )
        assert (publication.status, publication.cohort) == ("verified", "2027-01-C0")
        advance_clocks(session, settings, pt(2027, 1, 13))  # released once
        assert len(session.scalars(select(Publication)).all()) == 1


def test_visibility_matrix_role_mode_state_and_date(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    """Who sees what (rules §11.9) as a submission moves through modes, states and dates."""
    confidential = submit(database, settings, archive_of(tmp_path, "c"))
    provisional = submit(database, settings, archive_of(tmp_path, "p", 2), mode="provisional")
    embargoed = submit(
        database,
        settings,
        archive_of(tmp_path, "e", 3),
        mode="provisional",
        embargo=dt.date(2026, 12, 20),
    )
    early_out = submit(database, settings, archive_of(tmp_path, "w", 4), mode="provisional")
    with database.session() as session:
        viewers: dict[str, Principal | None] = {
            "anonymous": None,
            **{k: principal_for_token(session, tokens[k]) for k in ("rival", "reviewer", "chair")},
        }
        from app.accounts.services.accounts import issue_token

        narrow = issue_token(
            session=session, user=user(session, "chair"), name="n", scopes=["publish"]
        )
        viewers["publish-only token"] = principal_for_token(session, narrow[1])

        def table() -> dict[str, dict[int, Access]]:
            return {
                name: {
                    sid: access_to(session, who, must(session.get(Submission, sid)))
                    for sid in (confidential, provisional, embargoed, early_out)
                }
                for name, who in viewers.items()
            }

        def public(sid: int) -> Access:
            return table()["anonymous"][sid]

        for name in ("reviewer", "chair"):
            assert set(table()[name].values()) == {Access.REVIEW}, name
        assert set(table()["anonymous"].values()) == {Access.NONE}
        # A member of an organisation that never submitted is not a submitter (§11.9).
        assert table()["rival"] == table()["anonymous"]
        assert table()["publish-only token"] == table()["anonymous"]
        publish_cohort(
            session=session, settings=settings, cohort_id="2026-12-C0", at=pt(2026, 12, 2, 8)
        )
        assert public(provisional) == Access.RESULTS  # peer review pending: no artifacts
        assert public(confidential) == Access.NONE
        assert public(embargoed) == Access.NONE  # before its embargo date
        advance_clocks(session, settings, pt(2026, 12, 20, 7, 59))
        assert public(embargoed) == Access.NONE  # released at the publication hour
        advance_clocks(session, settings, pt(2026, 12, 20, 8, 1))
        assert public(embargoed) == Access.RESULTS
        decide(
            session=session,
            settings=settings,
            submission=must(session.get(Submission, early_out)),
            action="withdraw",
            actor="chair",
            reason="asked",
            at=pt(2026, 12, 20, 9),
        )
        assert public(early_out) == Access.NONE  # no record when withdrawn before finalization
        finalize_unreviewed(
            session, settings, must(session.get(Submission, confidential)), pt(2026, 12, 7)
        )
        assert public(confidential) == Access.NONE  # finalized, not yet published
        publish_cohort(
            session=session, settings=settings, cohort_id="2026-12-C1", at=pt(2026, 12, 16, 8)
        )
        assert public(confidential) == Access.FULL
        decide(
            session=session,
            settings=settings,
            submission=must(session.get(Submission, confidential)),
            action="invalidate",
            actor="chair",
            reason="wrong power",
            at=pt(2026, 12, 21),
        )
        assert public(confidential) == Access.RESULTS  # archive entry, tagged


def test_result_ids_and_the_cohort_export(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    first = submit(database, settings, archive_of(tmp_path, "1"), mode="provisional")
    gone = submit(database, settings, archive_of(tmp_path, "2", 2), mode="provisional")
    with database.session() as session:
        publish_cohort(
            session=session, settings=settings, cohort_id="2026-12-C0", at=pt(2026, 12, 2, 8)
        )
        ids = session.scalars(select(Publication).order_by(Publication.id)).all()
        result_ids = [p.curves[0].result_id for p in ids]
        # 2026-12-C0 is the 4th cohort from 2026-10-C1 (cohort number 3).
        assert result_ids == [
            "1.0.3.llama3_1-8b.cnn_dailymail.1",
            "1.0.3.llama3_1-8b.cnn_dailymail.2",
        ]
        decide(
            session=session,
            settings=settings,
            submission=must(session.get(Submission, gone)),
            action="withdraw",
            actor="chair",
            reason="asked",
            at=pt(2026, 12, 2, 9),
        )
        session.commit()
        # Withdrawn before finalization: no public record, but its id stays taken.
        # The versions stay, removed from every view, for the audit.
        removed = session.scalars(select(Publication).where(Publication.submission_id == gone))
        assert [p.removed_at for p in removed] == [pt(2026, 12, 2, 9)]
        assert session.scalar(select(ResultEntry).where(ResultEntry.submission_id == gone))
    third = submit(database, settings, archive_of(tmp_path, "3", 3), mode="provisional")
    with database.session() as session:
        # 2026-12-C0 is out: a second release is refused quietly; what became public
        # since joins the next cohort's record, with that cohort's number.
        assert (
            publish_cohort(
                session=session, settings=settings, cohort_id="2026-12-C0", at=pt(2026, 12, 3)
            )
            == []
        )
        advance_clocks(session, settings, pt(2026, 12, 3))
        latest = must(session.scalar(select(Publication).where(Publication.submission_id == third)))
        assert (latest.cohort, latest.curves[0].result_id) == (
            "2026-12-C1",
            "1.0.4.llama3_1-8b.cnn_dailymail.1",
        )
        first_sub = must(session.get(Submission, first))
        finalize_unreviewed(session, settings, first_sub, pt(2026, 12, 7))
        publish_cohort(
            session=session, settings=settings, cohort_id="2026-12-C1", at=pt(2026, 12, 16, 8)
        )
        built = cohort_dataset(session, settings, "2026-12-C1")
    with built.file, tarfile.open(fileobj=built.file) as tar:
        names = tar.getnames()
        data = json.load(tar.extractfile("endpoints-2026-12-C1/manifest.json"))  # type: ignore[arg-type]
    statuses = {r["path"]: r["status"] for r in data["results"]}
    assert sorted(statuses.values()) == ["provisional", "verified"]
    # Only the finalized result's code and documents are public (rules §11.9); both
    # carry their result files.
    for folder, status in statuses.items():
        inside = [n.removeprefix(f"endpoints-2026-12-C1/{folder}/") for n in names
                  if n.startswith(f"endpoints-2026-12-C1/{folder}/")]  # fmt: skip
        assert any(n.endswith("result_summary.json") for n in inside), folder
        assert any(n.startswith("src/") for n in inside) == (status == "verified"), inside


def test_a_dispute_reaches_its_backstop_once(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        filed = objection(session, submission, pt(2026, 12, 2))
        act(session=session, settings=settings, objection=filed,
            user=user(session, "submitter"), action="contest", body="We disagree.",
            at=pt(2026, 12, 3))  # fmt: skip
        act(session=session, settings=settings, objection=filed,
            user=user(session, "reviewer"), action="mark_unresolved", body="So do we.",
            at=pt(2026, 12, 4))  # fmt: skip
        advance_clocks(session, settings, pt(2027, 3, 7, 12))  # 8 weeks after Jan 10: not yet
        assert submission.review_phase == "dispute"
        report = advance_clocks(session, settings, pt(2027, 3, 8, 12))
        assert any("backstop" in a for a in report.actions)
        assert not any(
            "backstop" in a for a in advance_clocks(session, settings, pt(2027, 3, 9)).actions
        )
        assert submission.state == "passed_checks"  # the chair decides, not the clock


def test_a_review_missed_at_week_3_costs_the_committee_seat_until_a_finalized_result(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    from app.review.services.review import complete_review, reviewer_pool

    late = submit(database, settings, archive_of(tmp_path, "late"))
    done = submit(database, settings, archive_of(tmp_path, "done", 2))
    with database.session() as session:
        late_sub = must(session.get(Submission, late))
        done_sub = must(session.get(Submission, done))
        with pytest.raises(Exception, match="only the assigned reviewer"):
            complete_review(session=session, submission=done_sub,
                            reviewer=user(session, "chair"), notes="")  # fmt: skip
        complete_review(session=session, submission=done_sub, reviewer=must(done_sub.reviewer),
                        notes="Checked logs and configs.", at=pt(2026, 12, 10))  # fmt: skip
        slacker = must(late_sub.reviewer)
        advance_clocks(session, settings, pt(2026, 12, 20, 23))  # Week 3 still running
        assert not _suspended(slacker)
        advance_clocks(session, settings, pt(2026, 12, 21, 0, 1))
        assert _suspended(slacker)
        assert slacker not in reviewer_pool(session, settings, late_sub)
        assert not _suspended(must(done_sub.reviewer))
        inbox = session.scalars(
            select(Notification.subject).where(Notification.user_id == slacker.id)
        ).all()
        assert any(s.startswith("Review deadline missed") for s in inbox)
        # A newly finalized result of that organisation gives the seat back.
        own = Submission(
            organization=slacker.organization,
            archive=late_sub.archive,
            archive_format="tar.gz",
            original_filename="x.tar.gz",
            bundle_root=late_sub.bundle_root,
            content_digest="0" * 64,
            state="passed_checks",
            for_review=True,
            review_eligible_at=pt(2026, 12, 1),
        )
        session.add(own)
        session.flush()
        finalize_unreviewed(session, settings, own, pt(2026, 12, 22))
        assert not _suspended(slacker)


def _suspended(reviewer: User) -> bool:
    """Whether the reviewer's organisation has lost its committee seat (rules §4.4)."""
    return must(reviewer.organization).committee_suspended_at is not None


def test_every_objection_action_fits_the_audit_trail() -> None:
    """PostgreSQL refuses what SQLite stores: each timeline entry an objection action
    writes must fit the audit column (a long label once failed only on PostgreSQL)."""
    from app.db.models import AuditEvent, ObjectionMessage
    from app.review.domain.objections import ACTIONS, FILED, told

    audit_type = AuditEvent.__table__.c.action.type
    thread_type = ObjectionMessage.__table__.c.action.type
    assert isinstance(audit_type, String) and isinstance(thread_type, String)
    audit, thread = must(audit_type.length), must(thread_type.length)
    for action in [*ACTIONS, FILED]:
        assert len(f"objection {told(action)}") <= audit, action
        assert len(action) <= thread, action


def test_finalizing_needs_the_completed_review_or_the_chairs_override_with_a_reason(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    """Rules §4.4: the chair cannot finalize past an incomplete review by one click; an
    override says why, on the timeline and in every inbox concerned."""
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        submission = must(session.get(Submission, sid))
        assert submission.reviewer is not None and submission.review_completed_at is None
        at = pt(2026, 12, 22, 9)
        with pytest.raises(PublishingError, match="has not completed the assigned review") as no:
            finalize(session=session, settings=settings, submission=submission, at=at)
        assert no.value.code == "review-incomplete"
        with pytest.raises(PublishingError, match="say why") as unsaid:
            finalize(session=session, settings=settings, submission=submission, at=at,
                     override="  ")  # fmt: skip
        assert unsaid.value.code == "reason-required"
        assert submission.state == "passed_checks"
        finalize(session=session, settings=settings, submission=submission, at=at,
                 actor=ACCOUNTS["chair"][0],
                 override="the reviewer left the committee")  # fmt: skip
        session.commit()
        assert submission.state == "finalized"
        [line] = session.scalars(
            select(AuditEvent).where(
                AuditEvent.submission_id == sid, AuditEvent.action == "finalized without review"
            )
        ).all()
        assert line.actor == ACCOUNTS["chair"][0]
        assert line.reason == (
            f"the reviewer left the committee ({submission.reviewer.email} has not completed "
            "the assigned review)"
        )
        # Named as people name it: organisation, system, the bundle's own id; no hex id.
        label = f"{submission.organization.name}: Acme H200 x8 (sub-0001)"
        for who in ("chair", "submitter"):
            subjects = session.scalars(
                select(Notification.subject).where(Notification.user_id == user(session, who).id)
            ).all()
            assert f"Finalized without a completed review: {label}" in subjects
            assert not any(submission.public_id[:8] in s for s in subjects)
        reviewer_told = session.scalars(
            select(Notification.subject).where(Notification.user_id == submission.reviewer_id)
        ).all()
        assert any(s.startswith("Finalized without a completed review") for s in reviewer_told)
