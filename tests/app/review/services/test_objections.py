"""Objections over the real services: late ones (rules §11.5) only on the late grounds
(model equivalence among them), only from a review-committee member, and not on a
concern that a newer result on a similar system has answered; a dispute over one point
(§11.6), which lets the rest finalize and returns the point when it ends in the
submitter's favour, or withdraws it when upheld."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.core.refusals import Refused
from app.db.models import Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec
from app.results.services.public import visible_curves
from app.review.services.decisions import decide
from app.review.services.objections import act, file_objection
from app.review.services.releases import publish_cohort
from app.settings import Settings
from app.submissions.services.points import find_point
from tests.support.accounts import create_accounts
from tests.support.rows import must
from tests.support.submissions import archive_of, finalize_unreviewed, pt, submit, user

CHAIR = "chair@mlcommons.example"


def _late(session: Session, settings: Settings, sub: Submission, who: str, type_id: str):  # type: ignore[no-untyped-def]
    return file_objection(session=session, settings=settings, submission=sub,
                          filer=user(session, who), type_id=type_id, title="late concern",
                          rule_cited="SR §6.6", evidence="see the vendor's page",
                          at=pt(2026, 12, 20, 9))  # fmt: skip


def test_a_late_objection_rests_on_a_late_ground_and_comes_from_the_committee(
    database: Database, settings: Settings, published: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        assert _late(session, settings, sub, "reviewer", "model-equivalence").state == "open"
        with pytest.raises(Refused, match="not Methodology"):
            _late(session, settings, sub, "reviewer", "methodology")
        # Dune loses its seat: a reviewer's role alone is no standing after the review.
        dune = user(session, "reviewer2").organization
        assert dune is not None
        dune.committee_appointed = False
        with pytest.raises(Refused, match="comes from a review-committee member") as refused:
            _late(session, settings, sub, "reviewer2", "availability")
        assert refused.value.code == "not-on-committee"


def test_a_newer_result_on_a_similar_system_answers_validity_not_availability(
    database: Database, settings: Settings, published: int, tmp_path: Path
) -> None:
    newer = submit(database, settings, archive_of(tmp_path, "newer"))
    with database.session() as session:
        finalize_unreviewed(session, settings, session.get(Submission, newer), pt(2026, 12, 9))
        sub = must(session.get(Submission, published))
        with pytest.raises(Refused, match="newer finalized result on a similar system") as why:
            _late(session, settings, sub, "reviewer", "validity")
        assert why.value.code == "superseded"
        # Availability, division, model equivalence and fraud are never superseded.
        assert _late(session, settings, sub, "reviewer", "availability").state == "open"
        # Nor is the newer result's own validity.
        newest = must(session.get(Submission, newer))
        assert _late(session, settings, newest, "reviewer", "validity").state == "open"


def _nine_points(tmp_path: Path) -> Path:
    """Acme's curve with a second Ultra Low point (r24): one point may be held in dispute
    and the curve still meets the minimum of 8 (rules §5.2)."""
    curve = CurveSpec(concurrencies=(1, 8, 16, 24, 64, 128, 512, 1024))
    return BundleFactory(system=SystemSpec(name="Acme Nine"), curves=(curve,),
                         submission_id="sub-nine").archive(tmp_path / "nine.tar.gz")  # fmt: skip


def _on_r24(session: Session, settings: Settings, sub: Submission, title: str):  # type: ignore[no-untyped-def]
    """An objection on the point r24 by Cumulus's reviewer, in peer review."""
    label = next(f"{c.system.dir_name}/{c.benchmark_model}/r24" for c in sub.curves)
    filed = file_objection(session=session, settings=settings, submission=sub,
                           filer=user(session, "reviewer"), type_id="methodology", title=title,
                           rule_cited="R §6.3", evidence="the log", point_label=label,
                           at=pt(2026, 12, 2))  # fmt: skip
    return label, filed


def _points_shown(session: Session, sub: Submission, cohort: str | None) -> set[str]:
    [curve] = [c for c in visible_curves(session, cohort) if c.submission == sub.public_id]
    return {p.dir for p in curve.snapshot.points}


def test_the_undisputed_points_finalize_and_a_point_returns_when_its_dispute_ends(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    sid = submit(database, settings, _nine_points(tmp_path))
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        label, on_point = _on_r24(session, settings, sub, "r24 warmed up on the test set")

        def finalize(undisputed: bool) -> None:
            decide(session=session, settings=settings, submission=sub, action="finalize",
                   actor=CHAIR, reason="unreviewed", override=True, undisputed=undisputed,
                   at=pt(2026, 12, 3))  # fmt: skip

        with pytest.raises(Refused, match="finalize the undisputed points") as held:
            finalize(undisputed=False)
        assert held.value.code == "objections-open"
        finalize(undisputed=True)
        point = must(find_point(sub, label))
        assert sub.state == "finalized" and point.state == "disputed"
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        release = pt(2026, 12, 16, 8)  # 2026-12-C1
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1", at=release)
        [first] = [
            c for c in visible_curves(session, "2026-12-C1") if c.submission == sub.public_id
        ]
        assert "r24" not in {p.dir for p in first.snapshot.points}
        # The objectors accept the submitter's answer: the point returns, from the next
        # cohort on; the one released keeps what it showed.
        act(session=session, settings=settings, objection=on_point,
            user=user(session, "submitter"), action="contest", body="the warmup set differs",
            at=pt(2026, 12, 17))  # fmt: skip
        act(session=session, settings=settings, objection=on_point,
            user=user(session, "reviewer"), action="accept", at=pt(2026, 12, 18))  # fmt: skip
        session.commit()
        assert point.state == "active"
        assert "r24" in _points_shown(session, sub, None)
        [now] = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
        assert now.version_in == "2027-01-C0"
        assert "r24" not in _points_shown(session, sub, "2026-12-C1")


def test_an_upheld_objection_on_a_point_withdraws_it(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    sid = submit(database, settings, _nine_points(tmp_path))
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        label, on_point = _on_r24(session, settings, sub, "r24 too short")
        act(session=session, settings=settings, objection=on_point,
            user=user(session, "chair"), action="uphold", body="the run is 412 s",
            at=pt(2026, 12, 4))  # fmt: skip
        point = must(find_point(sub, label))
        assert (on_point.state, point.state) == ("resolved", "withdrawn")
        assert "upheld: r24 too short" in (point.state_reason or "")
