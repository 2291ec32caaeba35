"""Each way the published record once contradicted the review, as a regression test
(rules §4.1, §4.4, §9.7, §11.1–§11.8)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.refusals import Kind
from app.db.models import Objection, Organization, Publication, Submission
from app.db.session import Database
from app.publishing.services.publishing import PublishingError
from app.results.services.export import cohort_record
from app.results.services.public import (
    visible_curves,
)
from app.review.domain.policy import may_recheck
from app.review.services.decisions import decide, set_point_state
from app.review.services.objections import act
from app.review.services.policy import facts_of
from app.review.services.releases import publish_cohort
from app.review.services.review import committee_organizations, curves_short
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.rows import must
from tests.support.submissions import archive_of, finalize_unreviewed, objection, pt, submit, user

# PostgreSQL too: result ids and the record's uniqueness rest on the database's constraints.
pytestmark = pytest.mark.postgresql


@pytest.fixture
def tokens(database: Database) -> dict[str, str]:
    return create_accounts(database)


def _principal(session: Session, key: str, tokens: dict[str, str]) -> Principal:
    from app.accounts.services.accounts import principal_for_token

    return must(principal_for_token(session, tokens[key]))


def test_a_rejected_submission_stays_rejected_and_off_the_record(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive, mode="provisional")
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        assert visible_curves(session, None)  # provisional, public
        sub = must(session.get(Submission, sid))
        decide(session=session, settings=settings, submission=sub, action="reject",
               actor="chair", reason="fails §6.2", at=pt(2026, 12, 3))  # fmt: skip
        # Off the public view at once, no record kept (§11.7, §11.9).
        assert visible_curves(session, None) == []
        assert visible_curves(session, "2026-12-C0") == []
        # Terminal: no re-check brings it back (§11.1, "resubmit as new").
        refusal = may_recheck(facts_of(session, sub))
        assert refusal is not None and refusal.code == "rejected"
        advance_clocks(session, settings, pt(2027, 2, 1))
        assert sub.state == "rejected"


def test_an_invalidated_point_leaves_the_active_curve_and_the_cohort_keeps_it(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec

    ten = BundleFactory(
        system=SystemSpec(name="Acme ten", saturation_tps=40_000),
        curves=(
            CurveSpec(model="llama3_1-8b", concurrencies=(1, 2, 4, 8, 64, 128, 256, 512, 1024)),
        ),
        submission_id="sub-ten",
    ).archive(tmp_path / "ten.tar.gz")
    sid = submit(database, settings, ten)
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        finalize_unreviewed(session, settings, sub, pt(2026, 12, 7))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        label = f"{sub.curves[0].system.dir_name}/llama3_1-8b/r2"
        set_point_state(session=session, settings=settings, submission=sub, point_label=label,
                        state="invalidated", who=_principal(session, "chair", tokens),
                        reason="wrong token counts", at=pt(2026, 12, 18))  # fmt: skip

        def dirs(cohort: str | None) -> list[str]:
            return [p.dir for c in visible_curves(session, cohort) for p in c.snapshot.points]

        assert "r2" not in dirs(None)  # every active curve, at once
        # and the cohort that showed it too (issue 26: the record never contradicts a
        # decision), where the archive keeps it tagged with the reason (§11.7, §11.8).
        assert "r2" not in dirs("2026-12-C1")
        [shown] = visible_curves(session, "2026-12-C1")
        [tag] = shown.snapshot.invalidated_points
        assert (tag.dir, tag.reason) == ("r2", "wrong token counts")
        latest = visible_curves(session, None)[0]
        assert latest.snapshot.invalidated_points[0].reason == "wrong token counts"
        # The new version joins the record of the cohort being prepared; the result was
        # first published in 2026-12-C1.
        assert latest.status == "verified" and latest.published_in == "2026-12-C1"
        versions = session.scalars(
            select(Publication.cohort).where(Publication.submission_id == sid)
        )
        assert sorted(versions) == ["2026-12-C1", "2027-01-C0"]
        # A finalized curve keeps its minimum: past it, the result as a whole goes.
        refused = []
        for point in [p for p in sub.curves[0].points if p.state == "active"]:
            try:
                set_point_state(session=session, settings=settings, submission=sub,
                                point_label=f"{sub.curves[0].system.dir_name}/llama3_1-8b/"
                                f"{point.dir_name}", state="invalidated",
                                who=_principal(session, "chair", tokens), reason="bad",
                                at=pt(2026, 12, 18))  # fmt: skip
            except PublishingError as exc:
                refused.append(exc.code)
        assert refused and set(refused) == {"curve-incomplete"}
        assert curves_short(sub, 32) is None


def test_cohorts_are_published_at_their_time_and_only_the_one_due(
    database: Database, settings: Settings, tokens: dict[str, str]
) -> None:
    with database.session() as session:
        for cohort, at, code in (
            ("2026-12-C0", pt(2026, 12, 2, 7, 59), "too-early"),
            ("2027-03-C0", pt(2026, 12, 2, 9), "too-early"),
            ("2026-11-C1", pt(2026, 12, 2, 9), "not-current"),
        ):
            with pytest.raises(PublishingError) as refused:
                publish_cohort(session=session, settings=settings, cohort_id=cohort, at=at)
            assert refused.value.code == code and refused.value.kind == Kind.CONFLICT
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip


def test_finalization_removes_the_peer_review_pending_tag_at_once(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive, mode="provisional")
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        finalize_unreviewed(session, settings, must(session.get(Submission, sid)), pt(2026, 12, 24))
        assert [c.status for c in visible_curves(session, None)] == ["verified"]
        assert [c.status for c in visible_curves(session, "2026-12-C0")] == ["provisional"]


def test_a_validation_schedule_is_an_answer_not_silence(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        filed = objection(session, sub, pt(2026, 12, 1, 9))
        submitter, reviewer = user(session, "submitter"), user(session, "reviewer")
        act(session=session, settings=settings, objection=filed, user=submitter,
            action="contest", body="logs attached", at=pt(2026, 12, 2, 9))  # fmt: skip
        act(session=session, settings=settings, objection=filed, user=reviewer,
            action="validation_schedule", body="re-run by Fri", at=pt(2026, 12, 3, 9))  # fmt: skip
        advance_clocks(session, settings, pt(2026, 12, 10, 9))
        assert must(session.get(Objection, filed.id)).state == "validating"


def test_the_submitters_holidays_do_not_count(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    """Filed the Wednesday before US Thanksgiving (2026-11-26): Thursday and Friday are
    not US business days, so the third business day ends on Tuesday, not Monday."""
    sid = submit(database, settings, good_archive, checked_at=pt(2026, 11, 23, 10))
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        objection(session, sub, pt(2026, 11, 25, 9))
        session.commit()
        advance_clocks(session, settings, pt(2026, 12, 1, 0, 1))  # Mon 30 ended: 1 day
        assert sub.penalty_cohorts == 0
        advance_clocks(session, settings, pt(2026, 12, 3, 0, 1))  # Mon, Tue, Wed ended
        assert sub.penalty_cohorts == 1
        # A Canadian submitter: only its own holidays count (Thanksgiving was in October).
        acme = session.scalars(select(Organization).where(Organization.name == "Acme Corp")).one()
        acme.country = "CA"
        from app.review.services.clocks import submitter_clock

        deadline = submitter_clock(settings, sub).business_deadline(pt(2026, 11, 25, 9), 3)
        assert deadline.date() == dt.date(2026, 11, 30)


def test_result_ids_are_numbered_within_four_components_and_unverified_has_none(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    submit(database, settings, archive_of(tmp_path, "r"), mode="provisional")
    unverified_archive = archive_of(tmp_path, "u", 2)
    uid = submit(database, settings, unverified_archive, mode="provisional")
    with database.session() as session:
        must(session.get(Submission, uid)).for_review = False
        session.commit()
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        by_status = {c.status: c.result_id for c in visible_curves(session, None)}
        assert by_status["provisional"] == "1.0.3.llama3_1-8b.cnn_dailymail.1"
        assert by_status["unverified"] is None
        # Chartable, but not part of the cohort's official record.
        record = cohort_record(session, "2026-12-C0")
        assert [r["status"] for r in record["results"]] == ["provisional"]
        # Entry numbers count within <major>.<minor>.<cohort>.<model>, whatever the dataset.
        from app.db.models import ResultEntry

        taken = session.scalars(select(ResultEntry)).one()
        assert (taken.scope, taken.entry) == ("1.0.3.llama3_1-8b", 1)


def test_a_point_withdrawn_during_review_leaves_the_public_curve_and_survives_a_recheck(
    database: Database, settings: Settings, tokens: dict[str, str], tmp_path: Path
) -> None:
    from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec

    curve = CurveSpec(model="llama3_1-8b", concurrencies=(1, 2, 4, 8, 64, 128, 256, 512, 1024))
    ten = BundleFactory(
        system=SystemSpec(name="Acme ten", saturation_tps=40_000), curves=(curve,),
        submission_id="sub-ten",
    ).archive(tmp_path / "ten.tar.gz")  # fmt: skip
    waiting = submit(database, settings, ten, mode="provisional", embargo=dt.date(2027, 1, 20))
    public = submit(database, settings, archive_of(tmp_path, "p"), mode="provisional")
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        shown = must(session.get(Submission, public))
        label = f"{shown.curves[0].system.dir_name}/llama3_1-8b/r1"
        set_point_state(session=session, settings=settings, submission=shown, point_label=label,
                        state="withdrawn", who=_principal(session, "submitter", tokens),
                        reason="a faulty run", at=pt(2026, 12, 3))  # fmt: skip
        on_curve = [p.dir for c in visible_curves(session, None) for p in c.snapshot.points]
        assert "r1" not in on_curve  # off the active page at once (rules §11.7)
        held = must(session.get(Submission, waiting))
        label = f"{held.curves[0].system.dir_name}/llama3_1-8b/r2"
        set_point_state(session=session, settings=settings, submission=held, point_label=label,
                        state="withdrawn", who=_principal(session, "submitter", tokens),
                        reason="a faulty run", at=pt(2026, 12, 3))  # fmt: skip
        session.commit()
        assert may_recheck(facts_of(session, held)) is None  # not yet reviewed nor public
        from app.checks.services.checks import retry_check
        from app.pipeline import run_checks
        from tests.support.fakes import RecordingQueue

        job = retry_check(session=session, queue=RecordingQueue(), submission=held)
        session.commit()
        run_checks(session=session, settings=settings, job_id=job.id, clock=lambda: pt(2026, 12, 4))
        states = {p.dir_name: p.state for p in held.curves[0].points}
        assert states["r2"] == "withdrawn" and held.state == "passed_checks"


def test_the_committee_is_the_organisations_with_finalized_results_or_appointed(
    database: Database, settings: Settings, tokens: dict[str, str], good_archive: Path
) -> None:
    sid = submit(database, settings, good_archive)
    with database.session() as session:
        acme = must(session.get(Submission, sid)).organization
        assert acme.id not in committee_organizations(session, settings, pt(2026, 12, 3))
        finalize_unreviewed(session, settings, must(session.get(Submission, sid)), pt(2026, 12, 7))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        assert acme.id in committee_organizations(session, settings, pt(2026, 12, 17))
        appointed = {o.id for o in session.scalars(select(Organization)) if o.committee_appointed}
        assert appointed <= committee_organizations(session, settings, pt(2026, 12, 17))
        assert session.scalar(select(Publication.status)) == "verified"
