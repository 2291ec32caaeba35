"""The Preview lifecycle as a stateful model over the real services (issue 46): one
Preview result, public from 2026-12-C0, and a clock that only moves forward, while its
submitter asks for the extension, the chair decides it, the cohorts are released and its
Available result may come. After every step:

- no released cohort whose date is past the Preview's expiry shows its points, unless
  an Available result shipped it (then it is superseded);
- the tracker says what the record says (its date, its first cohort, its outcome);
- an extension refused by the services is one the standing module's rule refuses.

Bounded and deterministic (derandomized, a fixed budget).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from app.accounts.services.accounts import principal_of_user
from app.core.cohorts import Cohort
from app.core.refusals import Refused
from app.db.models import CohortRelease, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.publishing.domain.cohorts import current_cohort
from app.publishing.domain.standing import PreviewClock, extension_problem
from app.publishing.services.previews import preview_facts
from app.publishing.services.standing import preview_terms
from app.results.services.public import visible_curves
from app.results.services.tracker import preview_tracker
from app.review.services.previews import ask_extension, decide_extension
from app.review.services.releases import publish_cohort
from app.review.services.ticks import advance_clocks
from app.settings import Settings, review_clock
from tests.support.accounts import create_accounts
from tests.support.checks import check_each_bundle_once
from tests.support.rows import must
from tests.support.services import migrated_sqlite
from tests.support.submissions import PT, finalize_unreviewed, pt, submit, user

STATS: Counter[str] = Counter()
PREVIEW = SystemSpec(name="Acme Preview", availability="Preview", saturation_tps=40_000)
SHIPPED = SystemSpec(name="Acme Preview", saturation_tps=41_000)


class PreviewModel(RuleBasedStateMachine):
    archives: tuple[Path, Path]
    tmp: Path

    def __init__(self) -> None:
        super().__init__()
        data_dir = self.tmp / uuid.uuid4().hex[:10]
        data_dir.mkdir(parents=True)
        self.settings = Settings(data_dir=data_dir, database_url=None, redis_url=None)
        migrated_sqlite(data_dir)
        self.db = Database(self.settings.effective_database_url)
        create_accounts(self.db)
        self.sid = submit(self.db, self.settings, self.archives[0])
        with self.db.session() as session:
            finalize_unreviewed(session, self.settings, session.get(Submission, self.sid),
                                pt(2026, 12, 1))  # fmt: skip
            publish_cohort(session=session, settings=self.settings, cohort_id="2026-12-C0",
                           at=pt(2026, 12, 2, 8))  # fmt: skip
            session.commit()
        self.now = pt(2026, 12, 2, 9)
        self.shipped_in: str | None = None

    def teardown(self) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            facts = must(preview_facts(session, self.settings, sub))
            STATS["removed"] += facts.removed
            STATS["shipped"] += facts.shipped
            if facts.extension is not None:
                STATS[f"extension {facts.extension.granted}"] += 1
        self.db.dispose()

    def _today(self) -> dt.date:
        return review_clock(self.settings).local_date(self.now)

    @rule(days=st.integers(5, 90))
    def time_passes(self, days: int) -> None:
        self.now += dt.timedelta(days=days)
        with self.db.session() as session:
            advance_clocks(session, self.settings, self.now)
            session.commit()

    @rule()
    def the_due_cohort_is_released(self) -> None:
        due = current_cohort(self.now, PT)
        with self.db.session() as session:
            if session.scalar(select(CohortRelease.id).where(CohortRelease.cohort == str(due))):
                return
            publish_cohort(session=session, settings=self.settings, cohort_id=str(due),
                           at=self.now)  # fmt: skip
            session.commit()

    @rule(extra=st.integers(-10, 75))
    def the_submitter_asks_for_the_extension(self, extra: int) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            facts = must(preview_facts(session, self.settings, sub))
            window = PreviewClock(must(facts.first_cohort).date, preview_terms(self.settings))
            asked = window.window_end + dt.timedelta(days=extra)
            expected = extension_problem(window, self._today(), asked,
                                         asked_before=facts.extension is not None)  # fmt: skip
            if facts.removed or facts.shipped:
                expected = expected or "over"
            try:
                ask_extension(session=session, settings=self.settings,
                              who=principal_of_user(user(session, "submitter")), submission=sub,
                              new_date=asked, reason="parts late", now=self.now)  # fmt: skip
            except Refused:
                assert expected is not None, "refused an extension the rule allows"
                session.rollback()
                return
            assert expected is None or facts.removed or facts.shipped, expected
            session.commit()

    @rule(grant=st.booleans())
    def the_chair_decides(self, grant: bool) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            try:
                decide_extension(session=session, settings=self.settings,
                                 who=principal_of_user(user(session, "chair")), submission=sub,
                                 grant=grant, note=None, now=self.now)  # fmt: skip
            except Refused:
                session.rollback()
                return
            session.commit()

    @precondition(lambda self: self.shipped_in is None)
    @rule()
    def its_available_result_comes(self) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            if sub.preview_expired_at is not None:
                return  # removed: the next result is a new one, not its Available result
        try:
            sid = submit(self.db, self.settings, self.archives[1], checked_at=self.now)
        except AssertionError:
            return  # e.g. checked past a cohort the seed set no longer covers
        with self.db.session() as session:
            finalize_unreviewed(session, self.settings, session.get(Submission, sid), self.now)
            session.commit()
        self.shipped_in = str(current_cohort(self.now, PT))

    @invariant()
    def no_cohort_past_the_expiry_shows_the_preview(self) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            facts = must(preview_facts(session, self.settings, sub))
            expires = must(facts.clock).expires
            for cohort in session.scalars(select(CohortRelease.cohort)):
                if must(Cohort.parse(cohort)).date <= expires:
                    continue
                for curve in visible_curves(session, cohort):
                    if curve.submission != sub.public_id or curve.superseded_by is not None:
                        continue
                    held = facts.awaiting_decision and cohort <= str(current_cohort(self.now, PT))
                    assert not curve.snapshot.points or held, (cohort, expires, curve.status)

    @invariant()
    def the_tracker_says_what_the_record_says(self) -> None:
        with self.db.session() as session:
            sub = must(session.get(Submission, self.sid))
            [curve] = [c for c in visible_curves(session, None) if c.submission == sub.public_id]
            [row] = [p for p in preview_tracker(session, self.settings, self._today()).previews
                     if p.submission == sub.public_id]  # fmt: skip
            assert row.first_cohort == curve.published_in == "2026-12-C0"
            assert row.available_by == curve.available_by
            outcome = ("removed" if curve.status == "removed"
                       else "shipped" if curve.superseded_by else "pending")  # fmt: skip
            assert row.outcome == outcome
            if outcome == "pending":
                assert row.days_left == (row.expires - self._today()).days


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("preview-model")
    return tuple(  # type: ignore[return-value]
        BundleFactory(system=system, submission_id=f"sub-{name}").archive(folder / f"{name}.tar.gz")
        for name, system in (("preview", PREVIEW), ("shipped", SHIPPED))
    )


@pytest.mark.timeout(600)
def test_a_preview_is_never_shown_past_its_expiry_and_the_tracker_follows_the_record(
    archives: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_each_bundle_once(monkeypatch)
    STATS.clear()

    class Model(PreviewModel):
        pass

    Model.archives = archives
    Model.tmp = tmp_path
    run_state_machine_as_test(
        Model,
        settings=settings(
            max_examples=12,
            stateful_step_count=16,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
            phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        ),
    )
    # The budget reaches what matters: removals, shipments, extensions granted and refused.
    for reached in ("removed", "shipped", "extension True", "extension False"):
        assert STATS[reached], dict(STATS)
