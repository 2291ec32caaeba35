"""The charts' labels in the rules' terms as configuration (rules §11.11, open question B6):
the review policy's ``[statuses]`` reads "unverified" as an upload outside review (the
shipped reading) or as a result in confidential review. A change applies from then on:
what is already public stays, and the versions written after it name the new policy."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from sqlalchemy import select

from app.audit import policy_named
from app.db.models import Publication, Submission
from app.db.session import Database
from app.results.services.public import visible_curves
from app.review.services.releases import publish_cohort
from app.settings import Settings, review_policy
from app.submissions.services.views import submission_summary
from tests.support.accounts import create_accounts
from tests.support.rows import must
from tests.support.submissions import archive_of, pt, submit

SHIPPED = files("app.core").joinpath("review_policy.toml").read_text("utf-8")


def _reading_confidential_review(settings: Settings, tmp_path: Path) -> Settings:
    path = tmp_path / "policy.toml"
    reading = 'unverified = "confidential-review"'
    path.write_text(SHIPPED.replace('unverified = "outside-review"', reading))
    return settings.model_copy(update={"review_policy_file": path})


def _outside_review(database: Database, settings: Settings, archive: Path) -> int:
    sid = submit(database, settings, archive)
    with database.session() as session:
        must(session.get(Submission, sid)).for_review = False
        session.commit()
    return sid


def test_reading_unverified_as_confidential_review_keeps_new_uploads_outside_review_private(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    listed = _outside_review(database, settings, archive_of(tmp_path, "listed"))
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        assert [c.status for c in visible_curves(session, None)] == ["unverified"]
        session.commit()

    changed = _reading_confidential_review(settings, tmp_path)
    assert review_policy(changed).digest != review_policy(settings).digest
    kept = _outside_review(database, changed, archive_of(tmp_path, "kept", 2))
    in_confidence = submit(database, changed, archive_of(tmp_path, "quiet", 3))
    with database.session() as session:
        publish_cohort(session=session, settings=changed, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        # The upload public before the change stays public, as it was; the new one does not
        # join the record, and a confidential result in review never does.
        public = visible_curves(session, None)
        assert [(c.system_name, c.status) for c in public] == [("Acme listed", "unverified")]
        assert session.scalars(select(Publication.submission_id)).all() == [listed]
        # The pages call each what the policy reads.
        badges = {
            sid: submission_summary(must(session.get(Submission, sid)), changed).status_badge
            for sid in (listed, kept, in_confidence)
        }
        assert badges == {listed: "unverified", kept: "unlisted", in_confidence: "unverified"}
        shipped = submission_summary(must(session.get(Submission, in_confidence)), settings)
        assert shipped.status_badge == "confidential"


def test_the_reading_in_force_is_kept_with_the_versions_it_wrote(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    changed = _reading_confidential_review(settings, tmp_path)
    sid = submit(database, changed, archive_of(tmp_path, "open"), mode="provisional")
    with database.session() as session:
        publish_cohort(session=session, settings=changed, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        version = session.scalars(select(Publication).where(Publication.submission_id == sid)).one()
        assert version.status == "provisional"  # the reviewed labels have one reading
        kept = must(policy_named(session, must(version.policy_digest)))
        assert kept.values["statuses"] == {
            "verified": "finalized",
            "provisional": "peer-review-pending",
            "unverified": "confidential-review",
        }
