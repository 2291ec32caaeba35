"""Late objections (rules §11.5) over the real services: after finalization only on the
late grounds (model equivalence among them), only from a review-committee member, and
not on a concern that a newer result on a similar system has answered."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.core.refusals import Refused
from app.db.models import Submission
from app.db.session import Database
from app.review.services.objections import file_objection
from app.settings import Settings
from tests.support.rows import must
from tests.support.submissions import archive_of, finalize_unreviewed, pt, submit, user


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
