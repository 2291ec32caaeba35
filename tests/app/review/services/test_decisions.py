"""The chair's remedies short of removal (rules §11.4–§11.6, §8.4): a reclassification,
over the real services and database, as an objection's outcome, on the timeline, in a new
version of the public record (the cohort before keeps what it showed) and the ledger."""

from __future__ import annotations

import datetime as dt

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.policy import ReviewPolicy
from app.core.refusals import Refused
from app.db.models import AuditEvent, Publication, RecordEntry, ReviewPolicyRecord, Submission
from app.db.session import Database
from app.main import create_app
from app.publishing.domain.standing import Remedy
from app.results.services.public import visible_curves
from app.review.services.decisions import decide
from app.settings import Settings
from tests.support.rows import must
from tests.support.submissions import objection, pt

CHAIR = "chair@example.com"
# Released in 2026-12-C0 (2026-12-02): a Preview's window ends 180 days on.
WINDOW_END = dt.date(2027, 5, 31)


def _reclassify(session, settings, sub, remedy: Remedy, *, objection_id=None, reason="upheld"):  # type: ignore[no-untyped-def]
    decide(session=session, settings=settings, submission=sub, action="reclassify", actor=CHAIR,
           reason=reason, remedy=remedy, objection=objection_id,
           at=pt(2026, 12, 10, 9))  # fmt: skip


def _shown(session, sub: Submission, cohort: str | None):  # type: ignore[no-untyped-def]
    [curve] = [c for c in visible_curves(session, cohort) if c.submission == sub.public_id]
    return curve


def test_an_upheld_availability_objection_moves_the_result_to_preview(
    database: Database, settings: Settings, published: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        late = objection(session, sub, pt(2026, 12, 8, 9), type_id="availability")
        _reclassify(session, settings, sub, Remedy(availability="Preview",
                    available_by=dt.date(2027, 3, 1)), objection_id=late.public_id,
                    reason="no third party can order it yet")  # fmt: skip
        session.commit()
        # The objection is resolved with the remedy as its outcome.
        assert late.state == "resolved"
        assert late.messages[-1].action == "uphold"
        assert late.messages[-1].body.startswith("Upheld: reclassified to Preview, Available by")
        # The record now: Preview with its tag; the cohort it was Available in is unchanged.
        now = _shown(session, sub, None)
        assert (now.availability, now.available_by) == ("Preview", dt.date(2027, 3, 1))
        assert "Preview \u2014 Available by 2027-03-01" in now.tags and now.status == "verified"
        then = _shown(session, sub, "2026-12-C0")
        assert then.availability == "Available" and not then.tags
        # On the timeline, and sealed in the ledger as a reclassification.
        said = session.scalars(
            select(AuditEvent.reason).where(
                AuditEvent.submission_id == sub.id, AuditEvent.action == "reclassify"
            )
        ).all()
        assert said == [
            "reclassified to Preview, Available by 2027-03-01: no third party can order it yet"
        ]
        kinds = session.scalars(select(RecordEntry.kind).order_by(RecordEntry.seq)).all()
        assert kinds[-1] == "reclassification"
        # The decision and the version it made name the policy in force, whose values
        # are kept (rules §15).
        digest = ReviewPolicy().digest
        assert session.scalars(select(AuditEvent.policy_digest).where(
            AuditEvent.action == "reclassify")).all() == [digest]  # fmt: skip
        latest = session.scalars(select(Publication).order_by(Publication.id.desc())).first()
        assert latest is not None and latest.policy_digest == digest
        kept = must(session.get(ReviewPolicyRecord, digest)).values
        assert kept["late_objection_days"] == 90 and kept["max_points"] == 32
    with TestClient(create_app(settings)) as client:
        shown = client.get(f"/api/v1/review-policies/{digest}").json()
        assert shown["values"]["review"]["peer_review_days"] == 21
        assert client.get("/api/v1/review-policy").json()["digest"] == digest
        # Then RDI, and the division with it: the latest decision naming a field holds.
        _reclassify(session, settings, sub, Remedy(division="RDI"))
        session.commit()
        now = _shown(session, sub, None)
        assert (now.division, now.availability, now.available_by) == ("RDI", "RDI", None)
        assert [r.availability for r in sub.reclassifications] == ["Preview", None]


def test_a_reclassification_is_refused_with_the_rule_it_breaks(
    database: Database, settings: Settings, published: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        refusals = [
            (Remedy(availability="Preview"), "names the date it will be Available"),
            (
                Remedy(availability="Preview", available_by=WINDOW_END + dt.timedelta(days=1)),
                "past its window, which ends on 2027-05-31",
            ),  # fmt: skip
            (Remedy(availability="Available"), "classified so already"),
            (Remedy(division="RDI", availability="Preview"), "always RDI"),
        ]
        for remedy, why in refusals:
            with pytest.raises(Refused, match=why):
                _reclassify(session, settings, sub, remedy)
        with pytest.raises(Refused, match="say why the submission is reclassified"):
            _reclassify(session, settings, sub, Remedy(availability="RDI"), reason=" ")
        with pytest.raises(Refused, match="no objection 'nope'"):
            _reclassify(session, settings, sub, Remedy(availability="RDI"), objection_id="nope")
        assert sub.reclassifications == []  # nothing refused was kept
        _reclassify(session, settings, sub, Remedy(availability="RDI"))
        with pytest.raises(Refused, match="RDI result does not become Preview"):
            _reclassify(session, settings, sub, Remedy(availability="Preview",
                        available_by=WINDOW_END))  # fmt: skip
        decide(session=session, settings=settings, submission=sub, action="withdraw",
               actor=CHAIR, reason="gone", at=pt(2026, 12, 11))  # fmt: skip
        with pytest.raises(Refused, match="not a withdrawn one"):
            _reclassify(session, settings, sub, Remedy(division="Serviced"))
        assert [r.availability for r in sub.reclassifications] == ["RDI"]
