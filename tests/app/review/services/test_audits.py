"""Audits (rules §11.12) over the real services: a quarter's round, nominations from 4
weeks after publication by committee members, the ranked vote (no majority: the chairs'
random pick), the die, the quota, the steps against their deadlines, and a material
failure moving the result to RDI."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, principal_of_user
from app.core.refusals import Refused
from app.db.models import Notification, Submission
from app.db.session import Database
from app.results.services.public import visible_curves
from app.review.services.audits import (
    audit_view,
    cast_ballot,
    decide_audit,
    draw,
    nominate,
    open_round,
    record_step,
    tally,
)
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.rows import must
from tests.support.submissions import pt, user


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
        with pytest.raises(Refused, match="rank this round's nominations"):
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
