"""The Preview rule (rules §11.10) over the real services and database: the clock from
the first public cohort, the one extension asked and decided, the notices, the removal at
the cohort after expiry (not archived, earlier cohorts untouched), the Available result
that ships it, and the checks on a bundle's declared standing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import select

from app.accounts.services.accounts import principal_of_user
from app.core.refusals import Refused
from app.db.models import AuditEvent, CheckRun, Notification, Publication, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.results.services.public import present_decisions, visible_curves
from app.results.services.tracker import preview_tracker
from app.review.services.previews import ask_extension, decide_extension
from app.review.services.releases import publish_cohort
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.rows import must
from tests.support.submissions import finalize_unreviewed, pt, submit, user

PREVIEW = SystemSpec(name="Acme Preview", availability="Preview", saturation_tps=40_000)
# Released 2026-12-C0 (2026-12-02): the window ends 180 days on, on 2027-05-31.
WINDOW_END = dt.date(2027, 5, 31)


def _archive(tmp_path: Path, name: str, system: SystemSpec) -> Path:
    return BundleFactory(system=system, submission_id=f"sub-{name}").archive(
        tmp_path / f"{name}.tar.gz"
    )


@pytest.fixture
def preview(database: Database, settings: Settings, tmp_path: Path) -> int:
    """A Preview result, finalized and public from 2026-12-C0."""
    create_accounts(database)
    sid = submit(database, settings, _archive(tmp_path, "preview", PREVIEW))
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, sid), pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
    return sid


def _tracked(database: Database, settings: Settings, today: dt.date) -> dict[str, str]:
    with database.session() as session:
        return {p.system: p.outcome for p in preview_tracker(session, settings, today).previews}


def test_an_expired_preview_is_removed_at_the_next_cohort_not_archived(
    database: Database, settings: Settings, preview: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, preview))
        [curve] = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
        assert curve.tags == ("Preview \u2014 Available by 2027-03-31",)
        # The notices: 30 days before expiry, then 7 (each once).
        advance_clocks(session, settings, pt(2027, 5, 1, 9))
        advance_clocks(session, settings, pt(2027, 5, 2, 9))
        advance_clocks(session, settings, pt(2027, 5, 24, 9))
        notices = session.scalars(
            select(Notification.subject).where(Notification.subject.like("Preview ends%"))
        ).all()
        assert (
            sorted(set(notices))
            == [
                "Preview ends in 30 days: Acme Corp: Acme Preview (sub-preview)",
                "Preview ends in 7 days: Acme Corp: Acme Preview (sub-preview)",
            ]
            and len(notices) == 2
        )  # each once, to Acme's one member
        publish_cohort(session=session, settings=settings, cohort_id="2027-05-C1",
                       at=pt(2027, 5, 19, 8))  # fmt: skip
        assert _tracked(database, settings, dt.date(2027, 5, 31)) == {"Acme Preview": "pending"}
        # The day after expiry: removed, joining the cohort after it (2027-06-C0).
        advance_clocks(session, settings, pt(2027, 6, 1, 9))
        session.commit()
        assert sub.state == "invalidated" and sub.preview_expired_at is not None
        latest = session.scalars(
            select(Publication).where(Publication.submission_id == sub.id)
            .order_by(Publication.id.desc())
        ).first()  # fmt: skip
        assert latest is not None and (latest.status, latest.cohort) == ("removed", "2027-06-C0")
        assert "Preview expired on 2027-05-31" in (latest.description or "")
        now = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
        assert [c.status for c in now] == ["removed"] and not now[0].snapshot.points
        assert sub.public_id not in present_decisions(session).archived  # no archive listing
        # What the cohorts before showed is not rewritten.
        [then] = [c for c in visible_curves(session, "2027-05-C1") if c.submission == sub.public_id]
        assert then.status == "verified" and then.snapshot.points
    assert _tracked(database, settings, dt.date(2027, 6, 2)) == {"Acme Preview": "removed"}


def test_the_one_extension_is_asked_by_the_submitter_and_decided_by_the_chair(
    database: Database, settings: Settings, preview: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, preview))
        submitter = principal_of_user(user(session, "submitter"))
        rival = principal_of_user(user(session, "rival"))
        chair = principal_of_user(user(session, "chair"))

        def ask(who, day: dt.date, on: dt.datetime):  # type: ignore[no-untyped-def]
            return ask_extension(session=session, settings=settings, who=who, submission=sub,
                                 new_date=day, reason="the parts ship late", now=on)  # fmt: skip

        with pytest.raises(Refused, match="own_organization|submitting organisation"):
            ask(rival, dt.date(2027, 7, 1), pt(2027, 4, 1))
        with pytest.raises(Refused, match="at most 60 days"):
            ask(submitter, dt.date(2027, 8, 1), pt(2027, 4, 1))
        with pytest.raises(Refused, match="by 2027-05-01"):
            ask(submitter, dt.date(2027, 7, 1), pt(2027, 5, 2, 12))
        ask(submitter, dt.date(2027, 7, 15), pt(2027, 4, 1))
        with pytest.raises(Refused, match="one extension"):
            ask(submitter, dt.date(2027, 7, 1), pt(2027, 4, 2))
        with pytest.raises(Refused, match="chair"):
            decide_extension(session=session, settings=settings, who=submitter,
                             submission=sub, grant=True, note=None, now=pt(2027, 4, 3))  # fmt: skip
        decide_extension(session=session, settings=settings, who=chair, submission=sub,
                         grant=True, note="the chair agrees", now=pt(2027, 4, 3))  # fmt: skip
        session.commit()
        [curve] = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
        assert curve.available_by == dt.date(2027, 7, 15)
        assert curve.tags == ("Preview \u2014 Available by 2027-07-15",)
        acts = session.scalars(select(AuditEvent.action).where(AuditEvent.submission_id == sub.id))
        assert {"preview extension asked", "preview extension granted"} <= set(acts)
        # Past the window's end, but within the extension: still there.
        advance_clocks(session, settings, pt(2027, 6, 10, 9))
        session.commit()
        assert sub.preview_expired_at is None and sub.state == "finalized"
    tracker = {p.system: p for p in preview_tracker_of(database, settings)}
    assert tracker["Acme Preview"].extended and tracker["Acme Preview"].expires == dt.date(
        2027, 7, 15
    )


def preview_tracker_of(database: Database, settings: Settings):  # type: ignore[no-untyped-def]
    with database.session() as session:
        return preview_tracker(session, settings, dt.date(2027, 6, 10)).previews


def _findings(database: Database, sid: int, rule: str) -> list[tuple[str, str]]:
    with database.session() as session:
        run = session.scalars(
            select(CheckRun).where(CheckRun.submission_id == sid).order_by(CheckRun.id.desc())
        ).first()
        assert run is not None
        return [(f.severity, f.message) for f in run.findings if f.rule == rule]


def test_the_available_result_ships_its_preview_within_five_percent(
    database: Database, settings: Settings, preview: int, tmp_path: Path
) -> None:
    """A drop of more than 5 % is a finding; a faster Available result passes, and once
    finalized and published it supersedes the Preview: the tracker says it shipped."""
    slower = SystemSpec(name="Acme Preview", saturation_tps=36_000, peak_tps_per_user=180.0)
    with pytest.raises(AssertionError):  # the checks reject it
        submit(database, settings, _archive(tmp_path, "slower", slower),
               checked_at=pt(2027, 1, 4, 10))  # fmt: skip
    with database.session() as session:
        rejected = session.scalars(select(Submission).order_by(Submission.id.desc())).first()
        assert rejected is not None and rejected.state == "rejected"
    errors = _findings(database, rejected.id, "preview-continuity")
    assert errors and all(sev == "error" for sev, _ in errors)
    assert any("below the Preview's" in message for _, message in errors)
    faster = SystemSpec(name="Acme Preview", saturation_tps=41_000)
    sid = submit(database, settings, _archive(tmp_path, "faster", faster),
                 checked_at=pt(2027, 1, 4, 10))  # fmt: skip
    assert [sev for sev, _ in _findings(database, sid, "preview-continuity")] == ["info"]
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, sid), pt(2027, 1, 5))
        publish_cohort(session=session, settings=settings, cohort_id="2027-01-C1",
                       at=pt(2027, 1, 20, 8))  # fmt: skip
        session.commit()
    assert _tracked(database, settings, dt.date(2027, 1, 21)) == {"Acme Preview": "shipped"}
    with database.session() as session:
        old = must(session.get(Submission, preview))
        [curve] = [c for c in visible_curves(session, None) if c.submission == old.public_id]
        assert curve.superseded_by == "2027-01-C1"
        # Shipped: no notice, no removal, whatever the date.
        advance_clocks(session, settings, pt(2027, 6, 10, 9))
        assert old.preview_expired_at is None


def test_the_checks_hold_a_bundle_to_its_declared_standing(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    # An RDI division declared Available: an error (an RDI result is always RDI).
    wrong = SystemSpec(name="Acme Lab", division="RDI", availability="Available")
    with pytest.raises(AssertionError):
        submit(database, settings, _archive(tmp_path, "wrong", wrong))
    with database.session() as session:
        sid = must(session.scalars(select(Submission).order_by(Submission.id.desc())).first()).id
    assert [s for s, _ in _findings(database, sid, "rdi-status")] == ["error"]
    # A Preview date past its window (from the cohort it is eligible for, 2026-12-C0).
    late = SystemSpec(name="Acme Late", availability="Preview", available_by="2027-06-01")
    with pytest.raises(AssertionError):
        submit(database, settings, _archive(tmp_path, "late", late))
    with database.session() as session:
        sid = must(session.scalars(select(Submission).order_by(Submission.id.desc())).first()).id
    [(severity, message)] = _findings(database, sid, "preview-target-date")
    assert severity == "error" and "ends on 2027-05-31" in message
    # An accelerator first published as RDI cools off: not Available before the later of
    # the cohort date after next and 221 days (2026-12-02 + 221 days = 2027-07-11).
    lab = SystemSpec(name="Acme Zeta", accelerator="Zeta X1", division="RDI", availability="RDI")
    first = submit(database, settings, _archive(tmp_path, "zeta", lab))
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, first), pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
    shipped = SystemSpec(name="Acme Zeta Box", accelerator="Zeta X1", saturation_tps=39_000)
    with pytest.raises(AssertionError):
        submit(database, settings, _archive(tmp_path, "zeta-box", shipped),
               checked_at=pt(2027, 3, 1, 10))  # fmt: skip
    with database.session() as session:
        sid = must(session.scalars(select(Submission).order_by(Submission.id.desc())).first()).id
    found = _findings(database, sid, "rdi-cooling-off")
    [hardware] = [m for severity, m in found if severity == "error"]
    assert "accelerator model" in hardware and "from 2027-07-11" in hardware
    assert "first published as RDI in 2026-12-C0" in hardware
    # Its software too appeared first in that RDI result: a warning for the committee.
    warned = [m for severity, m in found if severity == "warning"]
    assert any("serving software" in m for m in warned)
