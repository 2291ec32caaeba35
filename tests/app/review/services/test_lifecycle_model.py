"""The published record always agrees with the review: a stateful model test.

Hypothesis drives the real services on a real database (SQLite, and PostgreSQL where it
runs) through random sequences of uploads in each publication mode, check outcomes,
re-checks, objections and their answers, reviewer assignment, the chair's decisions,
point withdrawals and invalidations, the submitter's withdrawal, clock ticks across phase
ends, cohort dates, US holidays and the DST change, and publication attempts (early, on
time, past, future). After every step it checks the invariants of architecture
decision 11 (the README states them as the promise to buyers).

Bounded and deterministic: a fixed seed (derandomize) and example budget; a failure
prints the sequence of steps that led to it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import principal_for_token
from app.checks.services.checks import retry_check
from app.core.cohorts import Cohort
from app.core.lifecycle import TERMINAL, CorrectionState, PublicationMode, SubmissionState
from app.core.refusals import Refused
from app.db.models import (
    AuditEvent,
    CohortRelease,
    Objection,
    Publication,
    ResultEntry,
    Submission,
    User,
)
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec
from app.demo.tokenizer import DemoTokenCounter
from app.main import create_app
from app.pipeline import run_checks
from app.publishing.domain.cohorts import current_cohort
from app.publishing.domain.ledger import (
    VERSION_KINDS,
    SignedEntry,
    decode_signature,
    key_id_of,
    load_public_pem,
    read_keys,
    verify_chain,
)
from app.publishing.domain.standing import Remedy
from app.publishing.services.standing import granted_extension, published_standing
from app.results.services.public import ARCHIVED, visible_curves
from app.review.domain.objections import ACTIONS
from app.review.domain.policy import may_recheck
from app.review.services.audits import decide_audit, nominate, open_round, tally
from app.review.services.corrections import (
    corrections_of,
    decide_correction,
    file_correction,
    run_correction_check,
    undecided,
)
from app.review.services.decisions import decide, set_point_state, withdraw
from app.review.services.objections import act, file_objection
from app.review.services.policy import facts_of
from app.review.services.releases import publish_cohort
from app.review.services.review import (
    FINALIZED_UNREVIEWED,
    assign_reviewer,
    change_embargo,
    complete_review,
    curves_short,
    on_committee,
)
from app.review.services.ticks import advance_clocks
from app.runs.services.retokenization import request_retokenization, run_retokenization
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.intake import accept_upload
from app.submissions.services.storage import receive_local
from app.submissions.services.visibility import access_to
from tests.support.accounts import ACCOUNTS, create_accounts
from tests.support.bundles import broken
from tests.support.checks import check_each_bundle_once, recount_each_events_file_once
from tests.support.corrections import add_docs, edited_archive, fix_readme
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.services import (
    fresh_postgres_database,
    migrated_sqlite,
    postgres_url,
    require,
)

PT = ZoneInfo("America/Los_Angeles")
# Monday before US Thanksgiving; 2026-12-02 is the first cohort, DST ends 2026-11-01 and
# starts 2027-03-14, both within reach of the clock ticks.
START = dt.datetime(2026, 10, 26, 9, 0, tzinfo=PT)
HORIZON = START + dt.timedelta(days=150)  # past a review's dispute backstop
MAX_UPLOADS = 5
# A re-count costs a second of counting. Every example re-counts its provisional result
# from the start (so a release freezes a re-count whatever the draws), and may ask for
# one more later (a later re-count is a new version, never the released one).
MAX_RECOUNTS = 2
# What the examples reached, so the test fails if the sequences stop reaching the states
# that matter (a model test that never publishes proves nothing).
STATS: Counter[str] = Counter()
REFUSED = Refused
CHARTED = ("verified", "provisional", "unverified")
# The explorer's whole view of the model's benchmark: every curve of every charted status.
# (Every publication status too: a result reclassified to RDI is off the default view.)
WHOLE_VIEW = (
    ("benchmark", "llama3_1-8b"), ("limit", "all"), *(("status", s) for s in CHARTED),
    *(("availability", a) for a in ("Available", "Preview", "RDI")),
)  # fmt: skip
# Whose turn each objection action is (the objector is the "reviewer" account's Cumulus).
ANSWERED_BY = {
    "acknowledge": "submitter",
    "contest": "submitter",
    "accept": "reviewer",
    "retract": "reviewer",
    "mark_unresolved": "reviewer",
    "validation_schedule": "reviewer",
    "resolve": "chair",
    "uphold": "chair",
    "comment": "reviewer2",
    "join": "reviewer2",
}


def _archives(folder: Path) -> list[Path]:
    """Distinct passing Acme bundles (8 points: any withdrawal breaks the minimum; 10:
    room to spare) and one the checks reject."""
    folder.mkdir(parents=True, exist_ok=True)
    built = []
    for i in range(MAX_UPLOADS):
        extra = (1, 2, 4, 8, 64, 128, 256, 512, 1024) if i % 2 else None
        factory = BundleFactory(
            system=SystemSpec(name=f"Acme model {i}", saturation_tps=30_000 + 5_000 * i),
            # The concurrency-8 point carries its events, so a re-count can be asked for.
            curves=(CurveSpec(model="llama3_1-8b", concurrencies=extra, events_at=8),),
            submission_id=f"sub-model-{i}",
        )
        good = factory.archive(folder / f"good-{i}.tar.gz")
        built.append(good)
        # The same results with the docs corrected (rules §11.7), and again after
        # finalization.
        edited_archive(good, folder / f"corrected-{i}.tar.gz", add_docs)
        edited_archive(good, folder / f"late-{i}.tar.gz", add_docs, fix_readme)
    bad = BundleFactory(submission_id="sub-model-bad").archive(
        folder / "bad.tar.gz", edits=broken("inflated-system-tps")
    )
    return [*built, bad]


class LifecycleModel(RuleBasedStateMachine):
    """One portal, its people and a clock that only moves forward."""

    # Set by the test for its backend: a fresh database URL per example.
    new_database: Callable[[], str | None]
    archives: list[Path]
    tmp: Path

    submissions = Bundle("submissions")
    objections = Bundle("objections")

    def __init__(self) -> None:
        super().__init__()
        self.data_dir = self.tmp / uuid.uuid4().hex[:10]
        self.data_dir.mkdir(parents=True)
        # Replays must behave the same: the reviewer draw is seeded.
        self.settings = Settings(
            data_dir=self.data_dir,
            database_url=self.new_database(),
            redis_url=None,
            reviewer_draw_seed=7,
            review_policy_file=self.policy_file(),
        )
        if self.settings.database_url is None:
            migrated_sqlite(self.data_dir)  # migrated once per run, copied per example
        self.db = Database(self.settings.effective_database_url)
        self.tokens = create_accounts(self.db)
        self.now = START
        self.uploads = 0
        self.recounts = 0
        self.weeks_passed = False
        self.ever_terminal: dict[int, str] = {}
        self.cohort_views: dict[str, dict[str, tuple[Any, ...]]] = {}
        # Per released cohort, the request record each shown point's numbers rest on.
        self.cohort_frozen: dict[str, dict[tuple[str, str], int | None]] = {}
        self.result_ids: dict[str, tuple[int, str, str]] = {}

    def policy_file(self) -> Path:
        """The rules' policy, but for audits nominable a day after publication: the
        examples' months seldom reach four weeks past a finalized result's release."""
        path = self.tmp / "policy.toml"
        if not path.exists():
            shipped = files("app.core").joinpath("review_policy.toml").read_text("utf-8")
            days = ("nominable_after_days = 28", "nominable_after_days = 1")
            path.write_text(shipped.replace(*days))
        return path

    def teardown(self) -> None:
        if hasattr(self, "client"):
            with self.session() as session:
                self.the_other_views_show_the_record(session)
            self.client.close()
        with self.session() as session:
            for sub in session.scalars(select(Submission)):
                STATS[f"state {sub.state}"] += 1
            for p in session.scalars(select(Publication)):
                STATS[f"publication {p.status}" + (" (removed)" if p.removed_at else "")] += 1
            STATS["releases"] += len(session.scalars(select(CohortRelease)).all())
            STATS["objections"] += len(session.scalars(select(Objection)).all())
        self.db.dispose()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    # --- helpers -------------------------------------------------------------------------

    @contextmanager
    def session(self) -> Iterator:  # type: ignore[type-arg]
        with self.db.session() as session:
            yield session

    def who(self, session, key: str):  # type: ignore[no-untyped-def]
        return principal_for_token(session, self.tokens[key])

    def user(self, session: Session, key: str) -> User:
        return session.scalars(select(User).where(User.email == ACCOUNTS[key][0])).one()

    def attempt(self, session, work: Callable[[], object]) -> bool:  # type: ignore[no-untyped-def]
        """A service call that may be refused; a refusal changes nothing."""
        try:
            work()
        except REFUSED as exc:
            session.rollback()
            STATS[f"refused {exc.code}"] += 1
            return False
        session.commit()
        return True

    def check(self, session, submission: Submission) -> None:  # type: ignore[no-untyped-def]
        queue = RecordingQueue()
        job = retry_check(session=session, queue=queue, submission=submission)
        session.commit()
        run_checks(session=session, settings=self.settings, job_id=job.id, clock=lambda: self.now)

    # --- rules ---------------------------------------------------------------------------

    MODES = st.sampled_from(["confidential", "provisional"])
    EMBARGOES = st.one_of(st.none(), st.integers(3, 45))

    # From the start: two submissions for review, one confidential and one provisional
    # (in either order), an unverified upload and a bundle the checks reject, so every
    # example has a review from the start, a provisional publication within reach and
    # each status to reach, whatever else the example draws.
    @initialize(
        target=submissions,
        modes=st.permutations(["confidential", "provisional"]).map(tuple),
        embargoes=st.tuples(EMBARGOES, EMBARGOES),
    )
    def four_to_start(self, modes: tuple[str, str], embargoes: tuple[int | None, int | None]):  # type: ignore[no-untyped-def]
        reviewed = [self._upload(m, e, True, True) for m, e in zip(modes, embargoes, strict=True)]
        unverified = self._upload("confidential", None, False, True)
        rejected = self._upload("provisional", None, True, False)
        self.recount(reviewed[modes.index("provisional")])
        return multiple(*reviewed, unverified, rejected)

    # An objection from the start, when a review has started, so its answers get played;
    # half the time the submitter has answered it at once (no penalties then).
    @initialize(
        target=objections,
        type_id=st.sampled_from(["compliance", "validity"]),
        answered=st.booleans(),
        on_point=st.one_of(st.none(), st.just(3)),
    )
    def an_early_objection(self, type_id: str, answered: bool, on_point: int | None):  # type: ignore[no-untyped-def]
        with self.session() as session:
            first = session.scalar(
                select(Submission.id)
                .where(Submission.review_eligible_at.is_not(None))
                .order_by(Submission.id)
            )
        filed = multiple() if first is None else self.object(first, type_id, on_point)
        if answered and not isinstance(filed, type(multiple())):
            self.answer(filed, "contest", None)
        return filed

    # Half the time the review running from the start is completed at once, so that the
    # clock's finalization (which needs it) is within reach of the shortest examples.
    @initialize(prompt=st.booleans())
    def a_prompt_review(self, prompt: bool) -> None:
        with self.session() as session:
            first = session.scalar(
                select(Submission.id)
                .where(Submission.review_eligible_at.is_not(None))
                .order_by(Submission.id)
            )
        if prompt and first is not None:
            self.reviewer_completes(first)

    @rule(target=submissions, mode=MODES, embargo_days=EMBARGOES, for_review=st.booleans())
    def upload(self, mode: str, embargo_days: int | None, for_review: bool):  # type: ignore[no-untyped-def]
        """A later upload, checked at whatever time it is now (it may be late)."""
        if self.uploads >= MAX_UPLOADS:
            return multiple()
        return self._upload(mode, embargo_days, for_review, True)

    def _upload(self, mode: str, embargo_days: int | None, for_review: bool, good: bool) -> int:
        archive = self.archives[self.uploads] if good else self.archives[-1]
        self.uploads += good
        with self.session() as session:
            accepted = accept_upload(
                session=session,
                settings=self.settings,
                queue=RecordingQueue(),
                received=receive_local(
                    archive, self.settings.tmp_dir, self.settings.max_upload_bytes
                ),
                filename=archive.name,
                for_review=for_review,
                uploader=self.user(session, "submitter"),
            )
            submission = accepted.submission
            submission.publication_mode = PublicationMode(mode)
            if embargo_days is not None:
                submission.embargo_date = (self.now + dt.timedelta(days=embargo_days)).date()
            session.commit()
            job = submission.jobs[-1]
            run_checks(
                session=session, settings=self.settings, job_id=job.id, clock=lambda: self.now
            )
            return submission.id

    @rule(submission=submissions)
    def recheck(self, submission: int) -> None:
        with self.session() as session:
            sub = session.get(Submission, submission)
            refusal = may_recheck(facts_of(session, sub))
            if refusal is None:
                self.check(session, sub)
            else:  # a check error may always run again; a rejection never
                assert sub.state != "check_error"
                assert sub.state != "rejected" or refusal.code == "rejected"

    @rule(
        target=objections,
        submission=submissions,
        type_id=st.sampled_from(["compliance", "cosmetic", "validity"]),
        on_point=st.one_of(st.none(), st.integers(0, 9)),
    )
    def object(self, submission: int, type_id: str, on_point: int | None):  # type: ignore[no-untyped-def]
        """An objection on the whole submission, or on one of its points (a dispute over
        a point lets the rest finalize, rules §11.6)."""
        with self.session() as session:
            sub = session.get(Submission, submission)
            labels = [f"{c.system.dir_name}/{c.benchmark_model}/{p.dir_name}"
                      for c in sub.curves for p in c.points]  # fmt: skip
            point = labels[on_point % len(labels)] if labels and on_point is not None else None
            try:
                filed = file_objection(
                    session=session,
                    settings=self.settings,
                    submission=sub,
                    filer=self.user(session, "reviewer"),
                    type_id=type_id,
                    title="Point duration",
                    rule_cited="R §6.2",
                    evidence="the Medium point ran 412 s",
                    point_label=point,
                    at=self.now,
                )
            except REFUSED as exc:
                STATS[f"objection refused {exc.code}"] += 1
                session.rollback()
                return multiple()
            session.commit()
            return filed.id

    @rule(
        objection=objections,
        action=st.sampled_from(sorted(ACTIONS)),
        by=st.sampled_from([None, None, "submitter", "reviewer", "reviewer2", "chair"]),
    )
    def answer(self, objection: int, action: str, by: str | None) -> None:
        """An action on an objection by the party it belongs to (None), or by anyone."""
        by = by or ANSWERED_BY[action]
        with self.session() as session:
            found = session.get(Objection, objection)
            taken = self.attempt(
                session,
                lambda: act(
                    session=session,
                    settings=self.settings,
                    objection=found,
                    user=self.user(session, by),
                    action=action,
                    body="schedule: validated by Friday",
                    at=self.now,
                ),
            )
            STATS["objection answered"] += taken

    def on(self, submission: int, call: Callable[..., Any]) -> None:
        """``call(session, submission, **common)``, which the services may refuse."""
        with self.session() as session:
            sub = session.get(Submission, submission)
            common = {"session": session, "settings": self.settings, "submission": sub}
            self.attempt(session, lambda: call(**common))

    @rule(submission=submissions, approve=st.booleans())
    def submitter_corrects(self, submission: int, approve: bool) -> None:
        """The docs corrected (rules §11.7): in review applied once its checks pass; after
        finalization the chair approves it (a new version of the record) or declines it."""
        with self.session() as session:
            sub = must(session.get(Submission, submission))
            late = sub.state == SubmissionState.FINALIZED
            corrected = self.archives[0].with_name(
                sub.original_filename.replace("good", "late" if late else "corrected")
            )
            done = [c for c in corrections_of(session, sub) if c.after_finalization == late]
            if not corrected.exists() or done:
                return  # the bundle the checks reject, or corrected so already
            queue = RecordingQueue()
            received = receive_local(
                corrected, self.settings.tmp_dir, self.settings.max_upload_bytes
            )
            filed = self.attempt(session, lambda: file_correction(
                session=session, settings=self.settings, queue=queue, submission=sub,
                who=self.who(session, "submitter"), received=received, reason="the docs",
                at=self.now))  # fmt: skip
            if not filed:
                return
            checked = {"session": session, "settings": self.settings, "clock": lambda: self.now}
            run_correction_check(**checked, job_id=queue.sent[-1][0])
            correction = undecided(session, sub)
            if correction is not None and correction.state == CorrectionState.REQUESTED:
                self.attempt(session, lambda: decide_correction(
                    session=session, queue=queue, submission=sub, approve=approve,
                    correction_id=correction.public_id, actor=ACCOUNTS["chair"][0],
                    reason="" if approve else "not a correction", at=self.now))  # fmt: skip
                run_correction_check(**checked, job_id=queue.sent[-1][0])
            last = corrections_of(session, sub)[-1]
            STATS[f"correction {last.state}" + (" after finalization" if late else "")] += 1

    @rule(submission=submissions)
    def reassign(self, submission: int) -> None:
        self.on(submission, lambda session, settings, submission: assign_reviewer(
            session, settings, submission, actor="chair", at=self.now))  # fmt: skip

    @rule(
        submission=submissions,
        action=st.sampled_from(["finalize", "reject", "withdraw", "invalidate"]),
        override=st.booleans(),
        undisputed=st.booleans(),
    )
    def chair_decides(self, submission: int, action: str, override: bool, undisputed: bool) -> None:
        """A decision; to finalize, half the time past an incomplete review (an override),
        and half the time the undisputed points only (rules §11.6)."""
        self.on(submission, lambda **common: decide(**common, action=action,
                actor=ACCOUNTS["chair"][0], reason="a finding", at=self.now,
                override=override, undisputed=undisputed))  # fmt: skip

    @rule(submission=submissions, to=st.sampled_from(["RDI", "Serviced", "Preview"]))
    def chair_reclassifies(self, submission: int, to: str) -> None:
        """A remedy short of removal: the RDI status, the Serviced division, or Preview
        with a date a month on (refused where it would not move the result down)."""
        remedy = {
            "RDI": Remedy(availability="RDI"),
            "Serviced": Remedy(division="Serviced"),
            "Preview": Remedy(availability="Preview",
                              available_by=(self.now + dt.timedelta(days=30)).date()),
        }[to]  # fmt: skip
        with self.session() as session:
            sub = session.get(Submission, submission)
            done = self.attempt(session, lambda: decide(
                session=session, settings=self.settings, submission=sub, action="reclassify",
                actor=ACCOUNTS["chair"][0], reason="upheld", remedy=remedy,
                at=self.now))  # fmt: skip
            STATS["reclassified"] += done

    @rule(outcome=st.sampled_from(["passed", "failed-rdi", "failed-removed"]))
    def audited(self, outcome: str) -> None:
        """A round of its own nominates the finalized result published first (refused
        unless 4 weeks ago), no ballot is cast so the chairs pick it, and the audit ends
        (rules §11.12): passed, moved to RDI, or removed."""
        self.rounds = getattr(self, "rounds", 0) + 1
        with self.session() as session:
            sub = session.scalar(
                select(Submission)
                .join(Publication, Publication.submission_id == Submission.id)
                .where(Submission.state == "finalized", Publication.in_record())
                .order_by(Publication.published_at)
                .limit(1)
            )
            if sub is None:
                return
            # A member whose organisation still holds its seat (a missed review loses it).
            seated = [key for key in ("reviewer", "reviewer2") if on_committee(
                session, self.settings, self.user(session, key).organization, self.now,
            )]  # fmt: skip
            if not seated:
                return
            chair, member = self.who(session, "chair"), self.who(session, seated[0])

            def audit() -> None:
                round_ = open_round(session=session, who=chair, quarter=f"{2030 + self.rounds}-Q1",
                                    at=self.now)  # fmt: skip
                nominate(session=session, settings=self.settings, round_=round_, who=member,
                         submission=sub, reason="a new accelerator", at=self.now)  # fmt: skip
                picked = tally(session=session, settings=self.settings, round_=round_,
                               who=chair, at=self.now)  # fmt: skip
                assert picked is not None and picked.submission_id == sub.id
                decide_audit(session=session, settings=self.settings, audit=picked, who=chair,
                             outcome=outcome, reason="the audit", at=self.now)  # fmt: skip

            STATS["audited"] += self.attempt(session, audit)

    @rule(submission=submissions)
    def reviewer_completes(self, submission: int) -> None:
        """The assigned reviewer says the review is done (refused once done, or outside
        the review, or with no reviewer)."""
        with self.session() as session:
            sub = session.get(Submission, submission)
            if sub.reviewer is not None:
                done = self.attempt(session, lambda: complete_review(
                    session=session, submission=sub, reviewer=sub.reviewer, notes="ok",
                    at=self.now))  # fmt: skip
                STATS["review completed"] += done

    @rule(
        submission=submissions,
        index=st.integers(0, 9),
        state=st.sampled_from(["withdrawn", "disputed", "invalidated", "active"]),
        by=st.sampled_from(["submitter", "chair"]),
    )
    def point_state(self, submission: int, index: int, state: str, by: str) -> None:
        def change(session, settings, submission):  # type: ignore[no-untyped-def]
            labels = [
                f"{c.system.dir_name}/{c.benchmark_model}/{p.dir_name}"
                for c in submission.curves
                for p in c.points
            ]
            if labels:
                set_point_state(
                    session=session,
                    settings=settings,
                    submission=submission,
                    point_label=labels[index % len(labels)],
                    state=state,
                    who=self.who(session, by),
                    reason="faulty",
                    at=self.now,
                )

        self.on(submission, change)

    @rule(submission=submissions, days=st.one_of(st.none(), st.integers(1, 40)))
    def move_embargo(self, submission: int, days: int | None) -> None:
        day = None if days is None else (self.now + dt.timedelta(days=days)).date()
        self.on(submission, lambda **common: change_embargo(**common, embargo=day,
                actor=ACCOUNTS["submitter"][0], who=self.who(common["session"], "submitter"),
                at=self.now))  # fmt: skip

    @rule(submission=consumes(submissions))
    def submitter_withdraws(self, submission: int) -> None:
        self.on(submission, lambda **common: withdraw(**common, reason="we found a fault",
                who=self.who(common["session"], "submitter"), at=self.now))  # fmt: skip

    @precondition(lambda self: self.now < HORIZON and self.recounts < MAX_RECOUNTS)
    @rule(submission=submissions)
    def recount(self, submission: int) -> None:
        """Someone asks for a re-count of the point with events; the worker's job runs."""
        with self.session() as session:
            sub = session.get(Submission, submission)
            made = []
            if self.attempt(
                session,
                lambda: made.extend(
                    request_retokenization(session=session, queue=RecordingQueue(), submission=sub)
                ),
            ):
                # The bundles' demo events are counted as the demo's are (one token per
                # character): what is under test is how the record freezes a re-count.
                for retok in made:
                    run_retokenization(session=session, settings=self.settings,
                                       job_id=must(retok.job_id), counter=DemoTokenCounter(),
                                       clock=lambda: self.now)  # fmt: skip
                STATS["re-counts"] += len(made)
                self.recounts += bool(made)

    @rule(hours=st.integers(1, 24 * 8), diligent=st.booleans())
    def tick(self, hours: int, diligent: bool) -> None:
        """Time passes; half the time every reviewer whose review runs completes it first
        (the clock finalizes only a completed review, rules §4.4)."""
        if diligent:
            with self.session() as session:
                running = session.scalars(
                    select(Submission.id).where(
                        Submission.reviewer_id.is_not(None),
                        Submission.review_completed_at.is_(None),
                        Submission.review_eligible_at.is_not(None),
                    )
                ).all()
            for submission in running:
                self.reviewer_completes(submission)
        self.now += dt.timedelta(hours=hours)
        with self.session() as session:
            advance_clocks(session, self.settings, self.now)
            session.commit()

    # Once per example, a review's three weeks pass at once (the reviewers diligent), so
    # the later phases (objection resolution, the clock's finalization) are reached more often.
    @precondition(lambda self: not self.weeks_passed)
    @rule()
    def three_weeks_pass(self) -> None:
        self.weeks_passed = True
        self.tick(24 * 22, diligent=True)

    @precondition(lambda self: self.now < HORIZON)
    @rule(minutes_after=st.integers(-90, 600))
    def publish_due(self, minutes_after: int) -> None:
        """Jump to around the next cohort's publication time and publish it: early (a
        refusal), or on time."""
        upcoming = current_cohort(self.now, PT).next()
        moment = upcoming.publication_at(PT) + dt.timedelta(minutes=minutes_after)
        self.now = max(self.now, moment)
        with self.session() as session:
            advance_clocks(session, self.settings, self.now)
            session.commit()
            self.try_publish(session, upcoming)

    @rule(offset=st.sampled_from([-2, -1, 1, 3]))
    def publish_other(self, offset: int) -> None:
        """A past or future cohort: always refused."""
        cohort = current_cohort(self.now, PT)
        for _ in range(abs(offset)):
            cohort = cohort.next() if offset > 0 else cohort.previous()
        with self.session() as session:
            already = session.scalar(
                select(CohortRelease.id).where(CohortRelease.cohort == str(cohort))
            )
            published = self.try_publish(session, cohort)
            assert not published or already, f"{cohort} published at {self.now}"

    def try_publish(self, session, cohort: Cohort) -> bool:  # type: ignore[no-untyped-def]
        done = self.attempt(
            session,
            lambda: publish_cohort(
                session=session, settings=self.settings, cohort_id=str(cohort), at=self.now
            ),
        )
        if done and str(cohort) not in self.cohort_views:
            shown = self.record(session, str(cohort))
            self.cohort_views[str(cohort)], self.cohort_frozen[str(cohort)] = shown
        return done

    # --- invariants ----------------------------------------------------------------------

    def the_api_shows_the_record(self, records: dict[str | None, Any]) -> None:
        """Every public-record route (``PUBLIC_RECORD_ROUTES``) and page, as an anonymous
        visitor and as a member of another organisation: the same results, statuses,
        result ids and points as the record's one read path (*records*: per cohort, and
        None for the current view), "peer review pending" where provisional. Checked
        again only when the record changed since the last step."""
        views = {cohort: view for cohort, (view, _frozen) in records.items()}
        frozen = {cohort: frozen for cohort, (_view, frozen) in records.items()}
        fingerprint = repr(
            (sorted(views.items(), key=lambda kv: kv[0] or ""),
             sorted(frozen.items(), key=lambda kv: kv[0] or ""))
        )  # fmt: skip
        if fingerprint == getattr(self, "checked", None):
            return
        self.frozen_now = frozen
        self.checked = fingerprint
        if not hasattr(self, "client"):
            self.client = TestClient(create_app(self.settings, queue=RecordingQueue()))
        outsider = {"Authorization": f"Bearer {self.tokens['rival']}"}
        # Every cohort's view as a visitor; the current one as a member of another
        # organisation too (it is the one a member's standing could change).
        shown = {cohort: self.check_results({}, cohort, view) for cohort, view in views.items()}
        to_outsider = self.check_results(outsider, None, views[None])
        for caller, api in (({}, shown[None]), (outsider, to_outsider)):
            self.check_pages(caller, views[None], api)
            self.check_compare_and_history(caller, views, shown[None])
        released = sorted(self.cohort_views)
        listed = self.client.get("/api/v1/cohorts").json()["data"]
        assert sorted(c["id"] for c in listed) == released
        self.check_feed(released, views[None])
        self.check_ledger(released)
        for cohort in released:
            self.check_cohort_record(cohort, views[cohort])
        self.check_home(released[-1] if released else None)

    def the_other_views_show_the_record(self, session) -> None:  # type: ignore[no-untyped-def]
        """The newest cohort's export, as a visitor: at the end of each example (it packs
        the bundles, which costs more than a step allows)."""
        if not hasattr(self, "client") or not self.cohort_views:
            return
        newest = sorted(self.cohort_views)[-1]
        self.check_export({}, newest, self.view(session, newest))
        self.check_points_table({c: self.view(session, c) for c in self.cohort_views})

    def the_record_shows_the_classification(
        self, session: Session, subs: dict[str, Submission]
    ) -> None:
        for curve in visible_curves(session, None):
            sub = subs[curve.submission]
            if curve.status not in CHARTED:
                continue
            system = next(s for s in sub.systems if s.dir_name == curve.system_dir)
            standing = published_standing(sub, system, granted_extension(session, sub))
            assert (curve.division, curve.availability) == (
                standing.division,
                standing.availability,
            ), (curve.submission, [(r.division, r.availability) for r in sub.reclassifications])

    def check_points_table(self, views: dict[str, dict]) -> None:  # type: ignore[type-arg]
        """Every cohort's points table: a row for each point each cohort's record charts
        of its reviewed results, and nothing else."""
        import csv
        import io

        rows = csv.DictReader(io.StringIO(self.client.get("/api/v1/points.csv").text))
        shown = sorted((r["cohort"], r["result_id"], r["dir"]) for r in rows)
        expected = sorted(
            (cohort, rid, point)
            for cohort, view in views.items()
            for curves in view.values()
            for status, rid, points in curves
            if status in ("verified", "provisional")
            for point in points
        )
        assert shown == expected
        STATS["points table checked"] += 1

    def get(self, caller: dict[str, str], path: str, params: Any = None) -> dict[str, Any]:
        answer = self.client.get(path, params=params, headers=caller)
        assert answer.status_code < 500, (path, answer.text)
        body: dict[str, Any] = answer.json()
        return body

    def check_results(self, caller: dict[str, str], cohort: str | None, view: dict) -> Any:  # type: ignore[type-arg]
        """Checks the results API's view (and the plan and accuracy drawn from it); returns
        its answer, which the pages of the same view are checked against."""
        params: Any = [*WHOLE_VIEW]
        if cohort is not None:
            params.append(("cohort", cohort))
        api = self.client.get("/api/v1/results", params=params, headers=caller)
        assert api.status_code < 500, api.text
        body = api.json()
        self.same_curves(body, view, cohort)
        # The numbers beside the points rest on the request records the record froze.
        shown_frozen = {(c["submission"], p["dir"]): (p.get("recount") or {}).get("request_log")
                        for c in body.get("curves", []) for p in c["points"]}  # fmt: skip
        expected_frozen = {
            k: v for k, v in self.frozen_now[cohort].items() if k[0] in charted(view)
        }
        assert shown_frozen == expected_frozen, cohort
        if any(shown_frozen.values()):
            STATS["frozen re-counts checked"] += 1
        # The capacity plan sizes those curves, on their own points.
        plan = self.get(caller, "/api/v1/plan", [*params, ("users", "100")])
        points = {(c["submission"], p["dir"]) for c in body.get("curves", []) for p in c["points"]}
        assert {(r["submission"], r["point"]) for r in plan.get("rows", [])} <= points
        if cohort is None:  # the planner's page shows the API's rows
            planned = self.client.get(
                "/plan", params=[*params, ("users", "100")], headers=caller
            ).text
            shown = re.findall(r'<tr data-submission="([0-9a-f]+)">', planned)
            assert shown == [r["submission"] for r in plan.get("rows", [])], planned[:300]
        # The accuracy view lists those points' accuracy, on its page as in its API (as a
        # visitor, on the current view: it reads the explorer's view, checked above).
        if cohort is None and not caller:
            accuracy = self.get(caller, "/api/v1/accuracy", params)
            rows = [(r["submission"], r["point"]) for r in accuracy.get("rows", [])]
            assert set(rows) <= points
            html = self.client.get("/accuracy", params=params).text
            assert (
                re.findall(r'<tr data-submission="([0-9a-f]+)" data-point="(r\d+)"', html) == rows
            )
        self.check_reports(caller, params, body)
        if cohort is None:
            benchmarks = self.get(caller, "/api/v1/benchmarks")["data"]
            assert [b["id"] for b in benchmarks] == (["llama3_1-8b"] if charted(view) else [])
        if cohort is not None and body.get("curves"):
            STATS["results API of a released cohort checked"] += 1
        return api

    def same_curves(self, body: dict[str, Any], view: dict[str, Any], where: Any) -> None:
        """A results view (the API's, or the data a page draws) shows the record's
        curves: same results, statuses, result ids and points."""
        shown: dict[str, list[tuple[str, str | None, tuple[str, ...]]]] = {}
        for c in body.get("curves", []):
            assert c["peer_review_pending"] == (c["status"] == "provisional")
            points = tuple(sorted(p["dir"] for p in c["points"]))
            shown.setdefault(c["submission"], []).append((c["status"], c["result_id"], points))
        expected = charted(view)
        assert {k: tuple(sorted(v)) for k, v in shown.items()} == expected, where

    def page(self, caller: dict[str, str], path: str, params: Any = None) -> str:
        answer = self.client.get(path, params=params, headers=caller)
        assert answer.status_code == 200, (path, answer.text[:500])
        return answer.text

    def check_feed(self, released: list[str], view: dict) -> None:  # type: ignore[type-arg]
        """The Atom feed names every released cohort, and every result the record shows
        as having left it (withdrawn or invalidated)."""
        feed = self.client.get("/feeds/results.atom").text
        assert sorted(re.findall(r"<title>Cohort (\S+) released</title>", feed)) == released
        gone = [st for curves in view.values() for st, _r, _p in curves if st in ARCHIVED]
        terms = re.findall(r'<category term="(withdrawn|invalidated)" />', feed)
        assert sorted(terms) == sorted(gone), feed[-800:]
        STATS["feeds checked"] += 1

    def check_ledger(self, released: list[str]) -> None:
        """The ledger verifies with the portal's keys, from its genesis to its head: an
        entry for every version of every result's record, every removal and every release,
        each as the entry's own address serves it."""
        keys = read_keys(self.client.get("/.well-known/release-signing-keys.json").json())
        pem = self.client.get("/.well-known/release-signing-key.pem").text
        assert key_id_of(load_public_pem(pem)) in keys
        lines = self.client.get("/api/v1/record/chain.jsonl").text.splitlines()
        chain = [json.loads(line) for line in lines]
        signed = [SignedEntry(c["entry"].encode(), decode_signature(c["signature"])) for c in chain]
        problems, _last = verify_chain(signed, keys)
        assert problems == [], problems
        listed = self.client.get("/api/v1/record/entries", params={"limit": 500}).json()["data"]
        assert [e["seq"] for e in listed] == [c["seq"] for c in chain]
        if chain:
            newest = chain[-1]["seq"]
            assert self.client.get(f"/api/v1/record/entries/{newest}").content == signed[-1].body
            signature = self.client.get(f"/api/v1/record/entries/{newest}/signature").content
            assert signature == signed[-1].signature
        kinds = Counter(e["kind"] for e in listed)
        releases = sorted(e["subject"].removeprefix("release/") for e in listed
                          if e["kind"] == "release")  # fmt: skip
        assert releases == released
        with self.session() as session:
            versions = session.scalar(select(func.count(Publication.id)))
            removed = session.scalar(
                select(func.count(func.distinct(Publication.submission_id))).where(
                    Publication.removed_at.is_not(None)
                )
            )
        assert sum(kinds[k] for k in VERSION_KINDS) == versions, kinds
        assert kinds["removal"] == removed, kinds
        STATS["ledgers verified"] += 1

    def check_reports(self, caller: dict[str, str], params: Any, body: dict[str, Any]) -> None:
        """The results table lists the view's results, and each result's report shows
        the explorer's curve: its status, result id and points."""
        curves = body.get("curves", [])
        table = self.get(caller, "/api/v1/reports", params)
        assert sorted(r["curve"] for r in table.get("rows", [])) == sorted(c["id"] for c in curves)
        for curve in curves:
            ref = curve["result_id"] or str(curve["id"])
            report = self.get(caller, f"/api/v1/results/{ref}", params)["curve"]
            assert (report["status"], report["result_id"], report["points"]) == (
                curve["status"], curve["result_id"], curve["points"]
            )  # fmt: skip
            STATS["result reports checked"] += 1

    def check_pages(self, caller: dict[str, str], view: dict, api: Any) -> None:  # type: ignore[type-arg]
        """The explorer's page and its embed draw the record's curves (the data each
        page charts, its ranking and its footnote), as the results API (*api*) does."""
        params: Any = [*WHOLE_VIEW]
        # The embed is for other sites: no visitor is ever signed in there.
        for path in ("/results", "/embed/results") if not caller else ("/results",):
            answer = self.client.get(path, params=params, headers=caller)
            assert answer.status_code == api.status_code, (path, answer.text[:500])
            if answer.status_code != 200:  # refused alike: nothing of this benchmark yet
                assert not charted(view), path
                continue
            html = answer.text
            if 'id="results-data"' not in html:  # no curve to draw
                assert not api.json()["curves"], path
                continue
            data = page_data(html, "results-data")
            self.same_curves(data, view, path)
            pending = any(c["peer_review_pending"] for c in data["curves"])
            assert ("peer review pending" in html) == pending, path
        # The results table's page lists the same results; the first one's report page
        # shows the explorer's curve.
        table = self.client.get("/reports", params=params, headers=caller).text
        listed = re.findall(r'<tr data-curve="(\d+)">', table)
        assert sorted(map(int, listed)) == sorted(c["id"] for c in api.json().get("curves", []))
        for curve in api.json().get("curves", [])[:1]:
            ref = curve["result_id"] or str(curve["id"])
            report = self.client.get(f"/results/{ref}", params=params, headers=caller).text
            shown = page_data(report, "report-data")["curve"]
            assert (shown["status"], shown["points"]) == (curve["status"], curve["points"])
        STATS["results pages checked"] += 1

    def check_home(self, newest: str | None) -> None:
        """The home page previews the newest cohort's default view (the current one
        before any release, when an embargo released a result): one line per curve the
        explorer draws there."""
        html = self.page({}, "/")
        params = {"benchmark": "llama3_1-8b", **({"cohort": newest} if newest else {})}
        body = self.get({}, "/api/v1/results", params)
        drawn = [c for c in body.get("curves", []) if c["step_line"]]
        assert html.count('<polyline class="step') == len(drawn), newest
        for c in drawn:
            assert f"{c['system']} ({c['organization']}, {c['status']})" in html

    def check_cohort_record(self, cohort: str, view: dict) -> None:  # type: ignore[type-arg]
        """A cohort's record lists the versions it gained; the last of each result, if
        it is the one the cohort shows, counts the points the cohort's view shows."""
        versions = self.get({}, f"/api/v1/cohorts/{cohort}")["data"]
        last = {v["submission"]: v for v in versions}
        for public_id, version in last.items():
            assert public_id in view, (cohort, public_id)
            counts = sorted(c["points"] for c in version["curves"])
            assert counts == sorted(len(p) for _s, _r, p in view[public_id]), (cohort, version)
        STATS["cohort record checked"] += 1

    def check_compare_and_history(self, caller: dict[str, str], views: dict, api: Any) -> None:  # type: ignore[type-arg]
        shown = charted(views[None])
        if len(shown) >= 2:
            pair = sorted(shown)[:2]
            body = self.get(caller, "/api/v1/compare", [("submission", pid) for pid in pair])
            for s in body["submissions"]:
                points = tuple(sorted(p["dir"] for p in s["curve"]["points"]))
                assert (s["result_status"], points) in [
                    (st, p) for st, _r, p in shown[s["submission"]]
                ]
                assert s["peer_review_pending"] == (s["result_status"] == "provisional")
            html = self.page(caller, "/compare", [("submission", pid) for pid in pair])
            drawn = sorted(c["status"] for c in page_data(html, "curves-data")["curves"])
            assert drawn == sorted(s["result_status"] for s in body["submissions"])
            STATS["compare checked"] += 1
        # No agentic curve in the model: the agentic view shows nothing of the record.
        agentic = self.client.get(
            "/api/v1/agentic", params={"organization": "Acme Corp"}, headers=caller
        )
        assert agentic.status_code in (200, 404, 422), agentic.text
        if agentic.status_code == 200:
            assert all(c["submission"] in shown for c in agentic.json().get("curves", []))
        page = self.client.get("/agentic", params={"organization": "Acme Corp"}, headers=caller)
        assert page.status_code == agentic.status_code, page.text[:500]
        names = api.json().get("curves", [])  # the results API's, as a visitor
        for public_id in sorted(shown)[:2]:
            curve = next(c for c in names if c["submission"] == public_id)
            where = {"organization": curve["organization"], "system": curve["system"],
                     "benchmark": "llama3_1-8b"}  # fmt: skip
            body = self.get(caller, "/api/v1/history", where)
            if "entries" not in body:  # history is of released cohorts only
                assert all(public_id not in v for v in self.cohort_views.values()), body
                continue
            mine = [e for e in body["entries"] if e["submission"] == public_id]
            # Each entry shows what the results of its newest cohort show (history is
            # of released cohorts: a version written since shows from the next one on).
            for entry in mine:
                points = tuple(sorted(p["dir"] for p in entry["points"]))
                there = views[entry["cohorts"][-1]][public_id]
                assert (entry["status"], points) in [(st, p) for st, _r, p in there], entry
            html = self.page(caller, "/history", where)
            pending = any(e["peer_review_pending"] for e in body["entries"])
            assert ("peer review pending" in html) == pending
            STATS["history checked"] += 1

    def check_export(self, caller: dict[str, str], cohort: str, view: dict) -> None:  # type: ignore[type-arg]
        import io
        import json
        import tarfile

        answer = self.client.get(f"/api/v1/cohorts/{cohort}/dataset", headers=caller)
        assert answer.status_code == 200, answer.text
        again = self.client.get(f"/api/v1/cohorts/{cohort}/export", headers=caller)
        assert again.content == answer.content
        with tarfile.open(fileobj=io.BytesIO(answer.content)) as tar:
            member = tar.extractfile(f"endpoints-{cohort}/manifest.json")
            assert member is not None
            record = json.loads(member.read())
        shown: dict[str, list[Any]] = {}
        for r in record["results"]:
            points = tuple(sorted(p["dir"] for p in r["points"]))
            shown.setdefault(r["submission"], []).append((r["status"], r["result_id"], points))
        official = {k: tuple(sorted(v)) for k, v in view.items()
                    if all(st != "unverified" for st, _r, _p in v)}  # fmt: skip
        assert {k: tuple(sorted(v)) for k, v in shown.items()} == official, cohort
        STATS["cohort export checked"] += 1

    def view(self, session: Session, cohort: str | None) -> dict[str, tuple[Any, ...]]:
        return self.record(session, cohort)[0]

    def record(self, session: Session, cohort: str | None) -> tuple[dict, dict]:  # type: ignore[type-arg]
        """What the record shows as of *cohort* (None: now), in one read: per result its
        curves' statuses, result ids and points; and the request record each point rests
        on."""
        shown: dict[str, list[Any]] = {}
        frozen: dict[tuple[str, str], int | None] = {}
        for c in visible_curves(session, cohort):
            points = tuple(sorted(p.dir for p in c.snapshot.points))
            shown.setdefault(c.submission, []).append((c.status, c.result_id, points))
            for p in c.snapshot.points:
                frozen[(c.submission, p.dir)] = p.recount.request_log if p.recount else None
        return {k: tuple(sorted(v)) for k, v in shown.items()}, frozen

    def history(self, session: Session, sub: Submission) -> list[tuple[Any, ...]]:
        """What a failure message shows: the record's versions and the audit log."""
        from app.db.models import AuditEvent

        versions = session.scalars(
            select(Publication).where(Publication.submission_id == sub.id).order_by(Publication.id)
        )
        log = session.scalars(
            select(AuditEvent).where(AuditEvent.submission_id == sub.id).order_by(AuditEvent.id)
        )
        return [("version", v.id, v.cohort, v.status, v.removed_at) for v in versions] + [
            ("event", e.at.isoformat(), e.action, e.reason) for e in log
        ]

    @invariant()
    def the_record_agrees_with_the_review(self) -> None:
        if not hasattr(self, "db"):
            return
        with self.session() as session:
            subs = {s.public_id: s for s in session.scalars(select(Submission))}
            cohorts = [None, *self.cohort_views]
            records = {cohort: self.record(session, cohort) for cohort in cohorts}
            # The active page: nothing rejected, withdrawn or invalidated, and only
            # points that are active now; each status as the review says.
            for public_id, curves in records[None][0].items():
                sub = subs[public_id]
                for status, _rid, points in curves:
                    if status not in CHARTED:
                        assert status == sub.state and sub.finalized_at is not None
                        continue
                    if sub.state in TERMINAL:
                        note(f"history of {public_id}: {self.history(session, sub)}")
                    assert sub.state not in TERMINAL, (public_id, sub.state, status)
                    active = {
                        p.dir_name for c in sub.curves for p in c.points if p.state == "active"
                    }
                    assert set(points) <= active, (public_id, points, active)
                    if status == "verified":
                        assert sub.state == "finalized" and sub.for_review
                    elif status == "provisional":
                        assert sub.state == "passed_checks" and sub.for_review
                        assert sub.publication_mode == "provisional"
                        assert sub.review_eligible_at is not None
                    else:
                        assert not sub.for_review and sub.state == "passed_checks"
                        assert all(rid is None for _s, rid, _p in curves)
            for sub in subs.values():
                latest = session.scalar(
                    select(Publication.status)
                    .where(Publication.submission_id == sub.id, Publication.in_record())
                    .order_by(Publication.cohort.desc(), Publication.id.desc())
                    .limit(1)
                )
                # verified ⇔ finalized and published
                if sub.state == "finalized" and latest is not None:
                    assert latest == "verified", (sub.public_id, latest)
                # A terminal state is never left.
                if sub.id in self.ever_terminal:
                    assert sub.state == self.ever_terminal[sub.id]
                if SubmissionState(sub.state) in TERMINAL:
                    self.ever_terminal[sub.id] = sub.state
                # A finalized curve meets the minimum with its active points, and its
                # review was completed or the chair's override is on its timeline.
                if sub.state == "finalized":
                    assert curves_short(sub, 32) is None, (sub.public_id, curves_short(sub, 32))
                if sub.finalized_at is not None and sub.review_completed_at is None:
                    overrides = session.scalars(
                        select(AuditEvent.reason).where(
                            AuditEvent.submission_id == sub.id,
                            AuditEvent.action == FINALIZED_UNREVIEWED,
                        )
                    ).all()
                    assert overrides and all(r and r.startswith("a finding (") for r in overrides)
                # The public never sees a confidential result in review, findings of a
                # provisional one, or the review record.
                seen = access_to(session, None, sub)
                assert seen < Access.REVIEW
                if sub.for_review and sub.finalized_at is None:
                    if sub.publication_mode == "confidential" or sub.state in TERMINAL:
                        assert seen == Access.NONE, (sub.public_id, sub.state, seen)
                    else:
                        assert seen <= Access.RESULTS
            # The active page shows each result's division and status as declared, after
            # the chair's reclassifications.
            self.the_record_shows_the_classification(session, subs)
            # Released cohorts: never before their time; what a released cohort showed is
            # unchanged but for the decisions taken since, which apply at once: a result
            # withdrawn or rejected before finalization leaves no record (rules §11.7),
            # one withdrawn or invalidated after it keeps its tag and no points, and a
            # point invalidated since is gone (the record never contradicts a decision).
            for release in session.scalars(select(CohortRelease)):
                cohort = must(Cohort.parse(release.cohort))
                assert release.published_at >= cohort.publication_at(PT)
            for cohort_id, was in self.cohort_views.items():
                now_shown = records[cohort_id][0]
                for public_id, curves in was.items():
                    sub = subs[public_id]
                    where = (cohort_id, public_id, sub.state)
                    if public_id not in now_shown:
                        assert sub.finalized_at is None and sub.state in ("rejected", "withdrawn")
                        continue
                    now = now_shown[public_id]
                    if sub.finalized_at is not None and sub.state in ("withdrawn", "invalidated"):
                        assert all(s == sub.state and p == () for s, _r, p in now), where
                        continue
                    invalidated = {
                        p.dir_name for c in sub.curves for p in c.points if p.state == "invalidated"
                    }
                    expected = [(s, r, tuple(d for d in p if d not in invalidated))
                                for s, r, p in curves]  # fmt: skip
                    assert list(now) == expected, where
                assert set(now_shown) <= set(was), cohort_id
            # A re-count shows from the next publication on: what a released cohort
            # showed beside its points never changes (a point may only leave).
            for cohort_id, was_frozen in self.cohort_frozen.items():
                now_frozen = records[cohort_id][1]
                assert set(now_frozen) <= set(was_frozen), cohort_id
                assert now_frozen == {k: was_frozen[k] for k in now_frozen}, cohort_id
            # Every public surface shows that record: the results API, as a visitor.
            self.the_api_shows_the_record(records)
            # Result ids: unique in their first four components, never reused.
            entries = session.scalars(select(ResultEntry)).all()
            assert len({(e.scope, e.entry) for e in entries}) == len(entries)
            for e in entries:
                owner = (e.submission_id, e.system_dir, e.benchmark_model)
                assert self.result_ids.setdefault(e.result_id, owner) == owner
            assert set(self.result_ids) == {e.result_id for e in entries}


def page_data(html: str, element: str) -> dict:  # type: ignore[type-arg]
    """The JSON a page embeds for its chart (``<script id=ELEMENT>``)."""
    import html as entities
    import json
    import re

    found = re.search(rf'<script type="application/json" id="{element}">(.*?)</script>', html, re.S)
    assert found is not None, element
    embedded: dict[Any, Any] = json.loads(entities.unescape(found.group(1)))
    return embedded


def charted(view: dict) -> dict:  # type: ignore[type-arg]
    """The results of a record view a chart shows (the archived ones are on none)."""
    return {k: v for k, v in view.items() if all(st in CHARTED for st, _r, _p in v)}


# The public record's routes: each is asserted after every step of the model above. A new
# public GET route must be added here (and checked) or to NOT_THE_RECORD, with why.
PUBLIC_RECORD_ROUTES = {
    "/api/v1/results", "/api/v1/results/{ref}", "/api/v1/reports",
    "/api/v1/benchmarks", "/api/v1/cohorts", "/api/v1/cohorts/{cohort_id}",
    "/api/v1/cohorts/{cohort_id}/export", "/api/v1/cohorts/{cohort_id}/dataset",
    "/api/v1/points.{fmt}", "/api/v1/compare", "/api/v1/history",
    "/api/v1/agentic", "/api/v1/plan", "/api/v1/accuracy",
    "/api/v1/record/entries", "/api/v1/record/entries/{seq}",
    "/api/v1/record/entries/{seq}/signature", "/api/v1/record/chain.jsonl",
    "/.well-known/release-signing-keys.json", "/.well-known/release-signing-key.pem",
}  # fmt: skip
NOT_THE_RECORD = {
    # One submission's own page of the review, under the access rule (its own tests).
    "/api/v1/submissions", "/api/v1/submissions/{public_id}",
    "/api/v1/submissions/{public_id}/findings", "/api/v1/submissions/{public_id}/objections",
    "/api/v1/submissions/{public_id}/reproductions",
    "/api/v1/submissions/{public_id}/retokenizations", "/api/v1/submissions/{public_id}/status",
    "/api/v1/submissions/{public_id}/timeline", "/api/v1/objections/{objection_id}",
    # Fraud reports: the chairs', the neutral members' and the filer's (their own tests).
    "/api/v1/submissions/{public_id}/fraud-reports", "/api/v1/fraud-reports/{report_id}",
    # The review policy's values (tests/app/core/test_policy.py, test_decisions.py,
    # tests/app/review/web/test_policy_page.py).
    "/api/v1/review-policy", "/api/v1/review-policies", "/api/v1/review-policies/{digest}",
    # The committee's audit rounds (tests/app/review/services/test_audits.py).
    "/api/v1/audit-rounds",
    # A CoN endpoint's checks: the review's members' (test_reachability.py).
    "/api/v1/submissions/{public_id}/endpoints",
    # A dispute: the review's members' (tests/app/review/services/test_disputes.py).
    "/api/v1/submissions/{public_id}/dispute",
    # Corrections: the review's members' (test_corrections.py); the public change log is
    # the result report's.
    "/api/v1/submissions/{public_id}/corrections",
    "/api/v1/submissions/{public_id}/archive",
    "/api/v1/reproductions/{reproduction_id}", "/api/v1/retokenizations/{rid}",
    "/api/v1/retokenizations/{rid}/steady-state", "/api/v1/retokenizations/{rid}/timeseries",
    # A signed-in member's own lists.
    "/api/v1/inbox", "/api/v1/review/queue",
    # Saved views: a member's own names for explorer addresses (tests/app/results/web).
    "/api/v1/saved-views", "/api/v1/saved-views/{view_id}",
    # Webhooks: a member's own subscriptions and deliveries (tests/app/webhooks).
    "/api/v1/webhooks", "/api/v1/webhooks/{webhook_id}",
    # The chair's dry run of a release: nothing published (tests/app/review/web).
    "/api/v1/cohorts/{cohort_id}/plan",
    # The Preview tracker: read from the record, and checked against it by a model of its
    # own (tests/app/review/services/test_preview_model.py).
    "/api/v1/preview-tracker",
    # Catalogues that show no result.
    "/api/v1/rules", "/api/v1/rules/{rule_id}", "/api/v1/objection-types",
    "/api/v1/organizations", "/api/v1/price-presets",
    # The official Submission API: an organisation's own runs and submissions composed
    # from them, under the access rule (their own tests).
    "/submission-api/runs", "/submission-api/runs/{run_id}",
    "/submission-api/runs/{run_id}/archive", "/submission-api/runs/{run_id}/archive/upload-url",
    "/submission-api/submissions", "/submission-api/submissions/{submission_id}",
    "/submission-api/submissions/{submission_id}/archive",
    "/submission-api/submissions/{submission_id}/archive/upload-url",
}  # fmt: skip


# The pages that show the record, each checked by the model the same way.
PUBLIC_RECORD_PAGES = {
    "/", "/results", "/embed/results", "/compare", "/history", "/agentic", "/plan",
    "/accuracy", "/reports", "/results/{ref}", "/feeds/results.atom",
}  # fmt: skip
NOT_THE_RECORD_PAGES = {
    # Forms, sign-in and the rules' catalogue.
    "/login", "/upload", "/rules",
    # A submission's own pages, its files, a re-count and an objection, under the access
    # rule (their own tests), and a member's own lists.
    "/submissions", "/submissions/{public_id}", "/submissions/{public_id}/files",
    "/retokenizations/{rid}", "/objections/{objection_id}", "/review", "/inbox",
    # Accounts: the chair's invitations, an invitation's one-time link, the request form.
    "/invitations", "/join/{secret}", "/request-account",
    # An organisation's own measured runs (the official Submission API's).
    "/runs",
    # The Preview tracker: its own model checks it against the record.
    "/preview-tracker",
    # A saved view's link: a redirect to the explorer's address it names.
    "/views/{view_id}",
    # A member's own webhooks (tests/app/webhooks).
    "/webhooks",
    # The committee's audit rounds (tests/app/review/web/test_pages.py).
    "/review/audits",
    # The review policy's values (tests/app/review/web/test_policy_page.py).
    "/review/policy",
}  # fmt: skip


def test_every_public_get_route_is_checked_by_the_model() -> None:
    from fastapi.routing import APIRoute

    from app.main import FEATURES
    from app.settings import Settings as Plain

    spec = create_app(Plain(demo_data=False), queue=RecordingQueue()).openapi()
    routes = {path for path, operations in spec["paths"].items() if "get" in operations}
    assert routes - PUBLIC_RECORD_ROUTES - NOT_THE_RECORD == set(), "classify the new route"
    assert PUBLIC_RECORD_ROUTES <= routes
    pages = {
        route.path
        for feature in FEATURES
        if feature.__name__.endswith(".pages")
        for route in feature.router.routes
        if isinstance(route, APIRoute) and "GET" in (route.methods or ())
    }
    assert pages - PUBLIC_RECORD_PAGES - NOT_THE_RECORD_PAGES == set(), "classify the new page"
    assert PUBLIC_RECORD_PAGES <= pages


MODEL_SETTINGS = settings(
    max_examples=10,
    stateful_step_count=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    # No "explain" phase: its tracing slows the real services tenfold; the failing
    # sequence of steps is printed all the same.
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    database=None,
)


@pytest.fixture(scope="module")
def model_archives(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _archives(tmp_path_factory.mktemp("model-bundles"))


# The full example budget on the embedded database; PostgreSQL runs the first few of the
# same (derandomized) examples: what differs there is SQL, not the sequences of steps.
EXAMPLES = {"sqlite": MODEL_SETTINGS.max_examples, "postgresql": 3}


# A minute or two on a machine this suite keeps busy (ten examples reach every state the
# list below asks for; fifteen took two minutes more of one core); the five-minute limit
# is for a test that hangs, not for the model's full budget on a slow day.
@pytest.mark.exhaustive
@pytest.mark.timeout(900)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_published_record_always_agrees_with_the_review(
    backend: str, model_archives: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The examples upload the same bundles at the same moments: each is checked for real
    # once, and each point's events re-counted once (tests/support/checks.py); what is
    # under test here is what follows the checks and how the record keeps a re-count.
    checks_run = check_each_bundle_once(monkeypatch)
    recounts_run = recount_each_events_file_once(monkeypatch)
    databases: list[AbstractContextManager[str]] = []

    def new_database() -> str | None:
        if backend == "sqlite":
            return None
        manager = fresh_postgres_database(migrated=True)
        databases.append(manager)
        return manager.__enter__()

    if backend == "postgresql":
        require(postgres_url() is not None, "PostgreSQL (ENDPOINTS_PORTAL_TEST_POSTGRES_URL)")

    class Model(LifecycleModel):
        pass

    Model.new_database = staticmethod(new_database)
    Model.archives = model_archives
    Model.tmp = tmp_path
    try:
        STATS.clear()
        budget = settings(MODEL_SETTINGS, max_examples=EXAMPLES[backend])
        run_state_machine_as_test(Model, settings=budget)
        print(dict(STATS), f"checks run: {checks_run()}, re-counts run: {recounts_run()}")
        reached = {k for k, v in STATS.items() if v}
        # The full budget reaches every state that matters; PostgreSQL's few examples
        # must reach the record's SQL (publications, releases, every public read).
        wanted_states = REACHED if backend == "sqlite" else REACHED_ON_A_FEW
        for wanted in wanted_states:
            assert wanted in reached, (wanted, dict(STATS))
    finally:
        for manager in databases:
            manager.__exit__(None, None, None)


# What the examples must reach (a model test that never publishes proves nothing).
# A verified publication needs a completed review (or the chair's override), the clock
# past peer review and then a release: reached in some examples only, so it is not
# required here; tests/app/results/services/test_public.py and
# tests/app/publishing/services/test_record.py publish verified results on purpose, and
# the invariants above hold for every verified publication the model does reach.
REACHED = (
    "publication provisional",
    "publication unverified",
    "review completed",
    "state finalized",
    "state rejected",
    "state withdrawn",
    "objections",
    "objection answered",
    "reclassified",
    "audited",
    "correction applied",
    "results API of a released cohort checked",
    "compare checked",
    "history checked",
    "results pages checked",
    "cohort record checked",
    "cohort export checked",
    "points table checked",
    "re-counts",
    "frozen re-counts checked",
    "ledgers verified",
)
# The first examples finalize nothing since finalizing needs a completed review or
# the chair's override; a verified publication's SQL on PostgreSQL is
# tests/app/results/services/test_public.py's (finalized, released, read on every surface).
REACHED_ON_A_FEW = (
    "publication unverified",
    "releases",
    "results API of a released cohort checked",
    "compare checked",
    "history checked",
    "results pages checked",
    "cohort record checked",
    "cohort export checked",
)
