"""Audits (rules §11.12) over the real services: a quarter's round, nominations from 4
weeks after publication by committee members, the ranked vote (no majority: the chairs'
random pick), the die, the quota, the steps against their deadlines, and a material
failure moving the result to RDI."""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, principal_of_user, user_by_email
from app.core.refusals import Refused
from app.db.models import AuditNomination, AuditRound, Notification, Submission
from app.db.session import Database
from app.results.services.public import visible_curves
from app.review.domain.audits import ReproducibilityCase
from app.review.services.audits import (
    audit_view,
    cast_ballot,
    decide_audit,
    draw,
    nominate,
    open_round,
    record_step,
    round_by_quarter,
    screen_nomination,
    slate_nomination,
    tally,
)
from app.review.services.releases import publish_cohort
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.accounts import create_neutral_members
from tests.support.rows import must
from tests.support.submissions import archive_of, finalize_unreviewed, pt, submit, user


def _as(session: Session, key: str) -> Principal:
    return principal_of_user(user(session, key))


def test_a_round_from_nomination_to_a_failed_audit(
    database: Database, settings: Settings, published: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        with pytest.raises(Refused, match="only the chairs"):
            open_round(session=session, who=_as(session, "reviewer"), quarter="2027-Q1",
                       at=pt(2026, 12, 20))  # fmt: skip
        round_ = open_round(session=session, who=_as(session, "chair"), quarter="2027-Q1",
                            at=pt(2026, 12, 20))  # fmt: skip

        def nominated(key: str, on: dt.datetime):  # type: ignore[no-untyped-def]
            return nominate(session=session, settings=settings, round_=round_,
                            who=_as(session, key), submission=sub, reason="new accelerator",
                            at=on)  # fmt: skip

        # Published in 2026-12-C0 (2026-12-02): nominations open 4 weeks on.
        with pytest.raises(Refused, match="on 2026-12-30"):
            nominated("reviewer", pt(2026, 12, 29))
        with pytest.raises(Refused, match="only review-committee members"):
            nominated("rival", pt(2027, 1, 5))
        nomination = nominated("reviewer", pt(2027, 1, 5))
        with pytest.raises(Refused, match="nominated in this round already"):
            nominated("reviewer2", pt(2027, 1, 6))
        for key, ranking in (("reviewer", [nomination.public_id]), ("reviewer2", ["none"])):
            cast_ballot(session=session, settings=settings, round_=round_,
                        who=_as(session, key), ranking=ranking, at=pt(2027, 1, 7))  # fmt: skip
        with pytest.raises(Refused, match="rank this round's slate"):
            cast_ballot(session=session, settings=settings, round_=round_,
                        who=_as(session, "reviewer"), ranking=["x"], at=pt(2027, 1, 7))  # fmt: skip
        # One for the audit, one for none: no majority, so the chairs pick at random.
        audit = must(tally(session=session, settings=settings, round_=round_,
                           who=_as(session, "chair"), at=pt(2027, 1, 8)))  # fmt: skip
        assert (audit.way, audit.submission_id) == ("chairs", sub.id)
        assert round_.tally == [{"none": 1, nomination.public_id: 1}]
        with pytest.raises(Refused, match="tallied"):
            tally(session=session, settings=settings, round_=round_, who=_as(session, "chair"),
                  at=pt(2027, 1, 9))  # fmt: skip
        chair = _as(session, "chair")
        record_step(session=session, audit=audit, who=chair, step="auditor",
                    on=dt.date(2027, 1, 20), note="Independent Labs",
                    at=pt(2027, 1, 20))  # fmt: skip
        # Past the NDA's deadline (7 days from selection) with no NDA: told once.
        for _ in range(2):
            advance_clocks(session, settings, pt(2027, 1, 17, 9))
        told = session.scalars(select(Notification.subject).where(
            Notification.user_id == user(session, "submitter").id,
            Notification.subject.like("Audit step overdue%"))).all()  # fmt: skip
        assert len(told) == 1
        view = audit_view(settings, audit)
        assert view.steps == {"auditor": "2027-01-20"} and audit.auditor == "Independent Labs"
        assert view.due["auditor"] == dt.date(2027, 2, 5) and view.due["complete"] == dt.date(
            2027, 3, 9
        )
        decide_audit(session=session, settings=settings, audit=audit, who=chair,
                     outcome="failed-rdi", reason="the accelerators differ",
                     at=pt(2027, 2, 20))  # fmt: skip
        session.commit()
        [now] = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
        assert now.availability == "RDI"


def test_the_die_selects_one_round_in_six_and_the_quota_holds(
    database: Database, settings: Settings, published: int
) -> None:
    seeded = settings.model_copy(update={"reviewer_draw_seed": 7})
    with database.session() as session:
        rolls: list[int] = []
        for quarter in ("2027-Q1", "2027-Q2", "2027-Q3", "2027-Q4"):
            round_ = open_round(session=session, who=_as(session, "chair"), quarter=quarter,
                                at=pt(2027, 1, 10))  # fmt: skip
            chair = _as(session, "chair")
            audit = draw(session=session, settings=seeded, round_=round_, who=chair,
                         cohort="2026-12-C0", at=pt(2027, 1, 10))  # fmt: skip
            assert round_.roll is not None and 1 <= round_.roll <= 6
            # Selected on a six only, and never the same result twice.
            assert (audit is not None) == (round_.roll == 6 and not [r for r in rolls if r == 6])
            rolls.append(round_.roll)
            with pytest.raises(Refused, match="rolled already"):
                draw(session=session, settings=seeded, round_=round_, who=_as(session, "chair"),
                     cohort="2026-12-C0", at=pt(2027, 1, 10))  # fmt: skip


# Nine days after the fixture's finalization: late-concern window, not yet 4 weeks.
IN_THE_WINDOW = pt(2026, 12, 10)


def _neutral(session: Session, n: int) -> Principal:
    found = user_by_email(session, f"neutral{n}@mlcommons.example")
    return principal_of_user(must(found))


def test_a_reproducibility_nomination_is_screened_before_it_is_ranked(
    database: Database, settings: Settings, published: int
) -> None:
    """SR §10.4: the points, how they were reproduced, the deviation, the rule; within the
    late-concern window (not 4 weeks on); two neutral members screen it and the chair
    puts it on the slate; until then it is neither ranked nor counted."""
    create_neutral_members(database)
    with database.session() as session:
        sub = must(session.get(Submission, published))
        label = f"{sub.curves[0].system.dir_name}/{sub.curves[0].benchmark_model}/r64"
        chair = _as(session, "chair")
        round_ = open_round(session=session, who=chair, quarter="2027-Q1", at=pt(2026, 12, 8))

        def nominated(case: ReproducibilityCase, on: dt.datetime = IN_THE_WINDOW,
                      in_round: AuditRound = round_) -> AuditNomination:  # fmt: skip
            return nominate(session=session, settings=settings, round_=in_round,
                            who=_as(session, "reviewer"), submission=sub, at=on,
                            reason="r64 ran 14 % slower", kind="reproducibility",
                            case=case)  # fmt: skip

        with pytest.raises(Refused, match="names how they were reproduced, the deviation"):
            nominated(ReproducibilityCase((label,), "", "", "SR §6.6"))
        with pytest.raises(Refused, match="no point 'x/y/r1'"):
            nominated(ReproducibilityCase(("x/y/r1",), "same harness", "-14 %", "SR §6.6"))
        case = ReproducibilityCase((label,), "the harness at c=64, 3 runs", "-14 % system_tps",
                                   "SR §6.6")  # fmt: skip
        nomination = nominated(case)
        assert nomination.state == "screening" and nomination.points == [label]
        told = session.scalars(select(Notification.subject).where(
            Notification.user_id == user(session, "chair").id)).all()  # fmt: skip
        assert any(s.startswith("Reproducibility nomination to screen") for s in told)

        with pytest.raises(Refused, match="rank this round's slate"):
            cast_ballot(session=session, settings=settings, round_=round_,
                        who=_as(session, "reviewer2"), ranking=[nomination.public_id],
                        at=pt(2026, 12, 11))  # fmt: skip
        with pytest.raises(Refused, match="still being screened"):
            tally(session=session, settings=settings, round_=round_, who=chair, at=pt(2026, 12, 11))
        slate = partial(slate_nomination, session=session, settings=settings,
                        nomination=nomination, who=chair, at=pt(2026, 12, 12))  # fmt: skip
        with pytest.raises(Refused, match="2 neutral members screen it first"):
            slate(admit=True, reason="")
        screen = partial(screen_nomination, nomination=nomination, finding="substantiated",
                         note="the runs hold up", at=pt(2026, 12, 11))  # fmt: skip
        with pytest.raises(Refused, match="neutral member"):
            screen(who=_as(session, "reviewer2"))
        screen(who=_neutral(session, 1))
        with pytest.raises(Refused, match="screened this nomination already"):
            screen(who=_neutral(session, 1))
        screen(who=_neutral(session, 2))
        with pytest.raises(Refused, match="say why it stays off the slate"):
            slate(admit=False, reason=" ")
        slate(admit=True, reason="")
        assert nomination.state == "on-slate"
        cast_ballot(session=session, settings=settings, round_=round_,
                    who=_as(session, "reviewer2"), ranking=[nomination.public_id],
                    at=pt(2027, 1, 20))  # fmt: skip
        audit = must(tally(session=session, settings=settings, round_=round_, who=chair,
                           at=pt(2027, 1, 20)))  # fmt: skip
        assert (audit.way, audit.submission_id) == ("vote", sub.id)
        # The window closed at the later of 90 days after finalization and that vote.
        later = open_round(session=session, who=chair, quarter="2027-Q2", at=pt(2027, 3, 5))
        with pytest.raises(Refused, match="closed 2027-03-01: the result is settled"):
            nominated(case, on=pt(2027, 3, 5), in_round=later)


def test_the_chairs_add_a_system_with_a_new_accelerator(
    database: Database, settings: Settings, published: int, tmp_path: Path
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        chair = _as(session, "chair")
        round_ = open_round(session=session, who=chair, quarter="2027-Q1", at=pt(2026, 12, 8))

        def add(who: Principal, result: Submission, on: dt.datetime) -> AuditNomination:
            return nominate(session=session, settings=settings, round_=round_, who=who,
                            submission=result, reason="the first of its accelerator", at=on,
                            kind="new-accelerator")  # fmt: skip

        with pytest.raises(Refused, match="only the chairs"):
            add(_as(session, "reviewer"), sub, pt(2026, 12, 10))
        # On the slate at once, without the committee's 4 weeks.
        assert add(chair, sub, pt(2026, 12, 10)).state == "on-slate"
        session.commit()
    # A later result on the same accelerator is no new accelerator.
    later = submit(database, settings, archive_of(tmp_path, "later"),
                   checked_at=pt(2026, 12, 7, 10))  # fmt: skip
    with database.session() as session:
        second = must(session.get(Submission, later))
        finalize_unreviewed(session, settings, second, pt(2026, 12, 8))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        round_ = must(round_by_quarter(session, "2027-Q1"))
        with pytest.raises(Refused, match="an earlier published result ran each"):
            nominate(session=session, settings=settings, round_=round_,
                     who=_as(session, "chair"), submission=second, reason="r",
                     at=pt(2026, 12, 20), kind="new-accelerator")  # fmt: skip
