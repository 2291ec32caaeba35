"""Dispute resolution (rules §11.6) over the real services and the review clock: an
objection still open when Week 6 closes becomes a dispute; the chair certifies it with a
panel of neutral members; the parties' statements; the panel's word; the chair's ruling
closes the objections; one appeal within 14 days. A silent objector's objection lapses;
a silent submitter is withdrawn 10 business days past the statements' deadline."""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import principal_of_user, user_by_email
from app.core.refusals import Refused
from app.db.models import Dispute, Notification, Objection, Submission
from app.db.session import Database
from app.review.services.disputes import (
    appeal,
    certify,
    dispute_of,
    dispute_view,
    file_statement,
    is_late,
    recommend,
    rule,
)
from app.review.services.objections import file_objection
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.accounts import create_accounts, create_neutral_members
from tests.support.rows import must
from tests.support.submissions import archive_of, in_dispute, pt, user

NEUTRAL = "neutral1@mlcommons.example"


@pytest.fixture
def disputed(database: Database, settings: Settings, tmp_path: Path) -> int:
    create_accounts(database)
    create_neutral_members(database)
    return in_dispute(database, settings, archive_of(tmp_path, "disputed"))


def _as(session: Session, key: str | None, email: str | None = None):  # type: ignore[no-untyped-def]
    found = user_by_email(session, email) if email else user(session, key or "")
    return principal_of_user(must(found))


def _certify(session: Session, settings: Settings, sub: Submission) -> None:
    certify(session=session, settings=settings, submission=sub, who=_as(session, "chair"),
            panel=[NEUTRAL], at=pt(2027, 1, 12, 9))  # fmt: skip


def _state(session: Session, sub: Submission, key: str, on: dt.datetime) -> None:
    file_statement(session=session, submission=sub, who=_as(session, key),
                   body=f"{key}'s statement", at=on)  # fmt: skip


def _recommend(session: Session, sub: Submission, email: str) -> None:
    recommend(session=session, submission=sub, who=_as(session, None, email),
              recommendation="dismiss", note="the logs show 640 s", at=pt(2027, 1, 19))  # fmt: skip


def test_a_dispute_runs_from_certification_to_ruling_and_appeal(
    database: Database, settings: Settings, disputed: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, disputed))
        with pytest.raises(Refused, match="not an active neutral member"):
            certify(session=session, settings=settings, submission=sub,
                    who=_as(session, "chair"), panel=["rev@dune.example"],
                    at=pt(2027, 1, 12))  # fmt: skip
        _certify(session, settings, sub)
        view = dispute_view(session, settings, must(dispute_of(session, sub)))
        # 10 business days after 2027-01-12, Martin Luther King Jr. Day (01-18) aside.
        assert view.panel == [NEUTRAL] and must(view.statements_by).date() == dt.date(2027, 1, 27)
        with pytest.raises(Refused, match="only the submitter or an objector"):
            _state(session, sub, "reviewer2", pt(2027, 1, 13))
        _state(session, sub, "reviewer", pt(2027, 1, 13))
        _state(session, sub, "submitter", pt(2027, 1, 14))
        chair = _as(session, "chair")
        ruling = {"session": session, "settings": settings, "submission": sub, "who": chair,
                  "ruling": "dismiss", "reason": "long enough"}  # fmt: skip
        with pytest.raises(Refused, match="on the panel's recommendation") as early:
            rule(**ruling, at=pt(2027, 1, 15))
        assert early.value.code == "awaiting-panel"
        with pytest.raises(Refused, match="only the dispute's panel"):
            _recommend(session, sub, "neutral2@mlcommons.example")
        _recommend(session, sub, NEUTRAL)
        rule(**ruling, at=pt(2027, 1, 20))
        [on_it] = session.query(Objection).filter_by(submission_id=sub.id).all()
        assert (
            on_it.state == "resolved" and "Dispute ruling: long enough" in on_it.messages[-1].body
        )
        view = dispute_view(session, settings, must(dispute_of(session, sub)))
        assert view.ruling == "dismiss" and must(view.appeal_by).date() == dt.date(2027, 2, 3)
        objector = _as(session, "reviewer")
        appealing = {"session": session, "settings": settings, "submission": sub,
                     "who": objector, "reason": "the panel misread the log"}  # fmt: skip
        with pytest.raises(Refused, match="appeals closed on 2027-02-03"):
            appeal(**appealing, at=pt(2027, 2, 4, 9))
        appeal(**appealing, at=pt(2027, 2, 1))
        with pytest.raises(Refused, match="under appeal already"):
            appeal(**appealing, at=pt(2027, 2, 2))


def test_a_silent_objector_lapses_and_a_silent_submitter_is_withdrawn(
    database: Database, settings: Settings, disputed: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, disputed))
        _certify(session, settings, sub)
        _state(session, sub, "reviewer", pt(2027, 1, 13))
        # Past the statements' deadline: the objectors filed, the submitter did not; it is
        # withdrawn 10 business days later (2027-02-10), not before.
        advance_clocks(session, settings, pt(2027, 2, 10, 9))
        assert sub.state == "passed_checks"
        advance_clocks(session, settings, pt(2027, 2, 11, 9))
        session.commit()
        assert sub.state == "withdrawn"


def test_a_silent_objectors_objection_lapses(
    database: Database, settings: Settings, disputed: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, disputed))
        _certify(session, settings, sub)
        _state(session, sub, "submitter", pt(2027, 1, 13))
        advance_clocks(session, settings, pt(2027, 1, 28, 9))
        session.commit()
        [on_it] = session.query(Objection).filter_by(submission_id=sub.id).all()
        assert on_it.state == "retracted" and on_it.messages[-1].action == "lapse"
        assert sub.state == "passed_checks" and sub.review_phase != "dispute"


def test_late_objections_after_finalization_are_handled_by_a_dispute_of_their_own(
    database: Database, settings: Settings, published: int
) -> None:
    """Rules §11.5: late objections are handled via dispute resolution. The clock opens a
    dispute for them (once), its backstop runs from its opening, and a late objection
    after the ruling opens the next one."""
    create_neutral_members(database)
    with database.session() as session:
        sub = must(session.get(Submission, published))

        def late(on: dt.datetime) -> Objection:
            return file_objection(session=session, settings=settings, submission=sub,
                                  filer=user(session, "reviewer"), type_id="availability",
                                  title="not orderable", rule_cited="R §4.5",
                                  evidence="the vendor's page says 2028", at=on)  # fmt: skip

        objection = late(pt(2026, 12, 20, 9))
        for hour in (10, 11):
            advance_clocks(session, settings, pt(2026, 12, 20, hour))
        disputes = session.scalars(select(Dispute).where(Dispute.submission_id == sub.id)).all()
        [first] = disputes
        assert first.opened_at == pt(2026, 12, 20, 10) and is_late(first)
        told = session.scalars(select(Notification.subject).where(
            Notification.user_id == user(session, "chair").id)).all()  # fmt: skip
        assert any(s.startswith("Dispute (late objections)") for s in told)
        chair = _as(session, "chair")
        ruled = partial(rule, session=session, settings=settings, submission=sub, who=chair,
                        ruling="dismiss", reason="the parts ship in March")  # fmt: skip
        with pytest.raises(Refused):  # neither the panel's word nor the backstop yet
            ruled(at=pt(2026, 12, 21))
        _certify(session, settings, sub)
        # The backstop: 8 weeks after the late dispute opened, not after the review.
        ruled(at=pt(2027, 2, 15))
        assert objection.state == "resolved" and first.decided_at is not None
        # A late objection after the ruling: a dispute of its own.
        late(pt(2027, 2, 20, 9))
        advance_clocks(session, settings, pt(2027, 2, 20, 10))
        current = must(dispute_of(session, sub))
        assert current.id != first.id and current.decided_at is None and is_late(current)
