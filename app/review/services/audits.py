"""Audits over stored results (rules §11.12): the chair opens a quarter's round; committee
members nominate published results and their organisations rank them; the chair tallies
(ranked choice; no majority: the chairs pick at random among the nominations) and draws
the random audit (a die, then a uniform pick within a cohort); the chair records each
step against its deadline and the outcome, a material failure moving the result to RDI
or removing it through the chair's own decisions. The arithmetic is
``app.review.domain.audits``'s; the numbers are the policy's.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, committee, members_of, notify
from app.audit import policy_in_force, record
from app.core.authorization import Action, may
from app.core.lifecycle import RecordStatus, SubmissionState
from app.core.refusals import Kind, Refused
from app.core.views import Timestamp
from app.db.models import (
    Audit,
    AuditBallot,
    AuditNomination,
    AuditRound,
    Organization,
    Publication,
    Submission,
)
from app.publishing.domain.standing import Remedy
from app.publishing.services.previews import first_public_cohort
from app.publishing.services.standing import similar_systems
from app.review.domain.audits import (
    NONE_SELECTED,
    Outcome,
    Way,
    audit_deadlines,
    die_selects,
    drawable,
    nomination_problem,
    pick,
    quarter_of,
    quota_problem,
    ranked_choice,
)
from app.review.services.decisions import decide, reclassify
from app.review.services.review import first_time, on_committee
from app.settings import Settings, review_clock, review_policy

QUARTER = re.compile(r"\d{4}-Q[1-4]")
# The steps the chair records, in order (rules §11.12).
STEPS = ("auditor", "nda-provided", "nda-executed", "report", "redacted-report")
Chooser = Callable[[Sequence[str]], str]


class AuditRefused(Refused):
    default_kind = Kind.CONFLICT


def _chair(who: Principal) -> None:
    if (refusal := may(actor_of(who, None), Action.DECIDE)) is not None:
        raise AuditRefused(refusal.code, "only the chairs run the audit rounds", refusal.kind)


def _member_org(session: Session, settings: Settings, who: Principal, at: dt.datetime) -> int:
    """The organisation *who* nominates or votes for: a committee seat (rules §11.12)."""
    org = session.get(Organization, who.organization_id) if who.organization_id else None
    if org is None or not on_committee(session, settings, org, at):
        raise AuditRefused(
            "not-on-committee", "only review-committee members nominate and vote", Kind.FORBIDDEN
        )
    return org.id


def _open(round_: AuditRound) -> None:
    if round_.tallied_at is not None:
        raise AuditRefused("tallied", f"the {round_.quarter} vote is tallied")


def open_round(*, session: Session, who: Principal, quarter: str, at: dt.datetime) -> AuditRound:
    _chair(who)
    if not QUARTER.fullmatch(quarter):
        raise AuditRefused("bad-quarter", f"a quarter is written 2027-Q1, not {quarter!r}",
                           Kind.INVALID)  # fmt: skip
    if session.scalar(select(AuditRound).where(AuditRound.quarter == quarter)) is not None:
        raise AuditRefused("exists", f"the {quarter} round is open already")
    round_ = AuditRound(quarter=quarter, opened_at=at, opened_by=who.email)
    session.add(round_)
    session.flush()
    notify(session, committee(session), f"Audit nominations open ({quarter})",
           "Nominate published results for audit, with your reason (rules §11.12).",
           "/review/audits")  # fmt: skip
    return round_


def nominate(
    *,
    session: Session,
    settings: Settings,
    round_: AuditRound,
    who: Principal,
    submission: Submission,
    reason: str,
    at: dt.datetime,
) -> AuditNomination:
    """A committee member nominates a published result of another organisation."""
    org = _member_org(session, settings, who, at)
    _open(round_)
    if submission.organization_id == org:
        raise AuditRefused("own-result", "an organisation does not nominate its own result")
    if submission.state != SubmissionState.FINALIZED:
        raise AuditRefused("not-finalized", "only a finalized, published result is audited")
    first = first_public_cohort(session, submission)
    today = review_clock(settings).local_date(at)
    problem = nomination_problem(first.date if first else None, today,
                                 review_policy(settings).audits)  # fmt: skip
    if problem is not None:
        raise AuditRefused("not-nominable", problem)
    if any(n.submission_id == submission.id for n in round_.nominations):
        raise AuditRefused("nominated", "the result is nominated in this round already")
    if not reason.strip():
        raise AuditRefused("reason-required", "say why it should be audited", Kind.INVALID)
    nomination = AuditNomination(
        submission=submission, nominated_by=who.email, organization_id=org,
        reason=reason.strip(), at=at,
    )  # fmt: skip
    round_.nominations.append(nomination)
    record(session, submission, action="nominated for audit", actor=who.email,
           reason=f"{round_.quarter}: {nomination.reason}", at=at)  # fmt: skip
    session.flush()
    return nomination


def cast_ballot(
    *,
    session: Session,
    settings: Settings,
    round_: AuditRound,
    who: Principal,
    ranking: list[str],
    at: dt.datetime,
) -> AuditBallot:
    """One ranking per committee organisation (a new one replaces its last): nomination
    ids and "none" (No Audit Selected This Quarter), most wanted first."""
    org = _member_org(session, settings, who, at)
    _open(round_)
    known = {n.public_id for n in round_.nominations} | {NONE_SELECTED}
    if not ranking or len(set(ranking)) != len(ranking) or not set(ranking) <= known:
        raise AuditRefused(
            "bad-ranking",
            "rank this round's nominations (by id) and 'none', each at most once",
            Kind.INVALID,
        )
    ballot = next((b for b in round_.ballots if b.organization_id == org), None)
    if ballot is None:
        ballot = AuditBallot(organization_id=org, ranking=ranking, cast_by=who.email, at=at)
        round_.ballots.append(ballot)
    else:
        ballot.ranking, ballot.cast_by, ballot.at = ranking, who.email, at
    session.flush()
    return ballot


def _draw(settings: Settings, salt: str) -> random.Random:
    """Unpredictable, or repeatable from the configured seed (rehearsals, tests)."""
    if settings.reviewer_draw_seed is None:
        return random.SystemRandom()
    return random.Random(f"{settings.reviewer_draw_seed}:audit:{salt}")


def _select(
    session: Session,
    settings: Settings,
    round_: AuditRound,
    submission: Submission,
    way: Way,
    at: dt.datetime,
) -> Audit:
    year = round_.quarter[:4]
    audits = session.scalars(select(Audit).join(AuditRound)).all()
    this_year = sum(1 for a in audits if a.round.quarter.startswith(year))
    this_quarter = Counter(
        "random" if a.way == Way.RANDOM else "nominated" for a in audits if a.round_id == round_.id
    )
    problem = quota_problem(this_year, this_quarter, way, review_policy(settings).audits)
    if problem is not None:
        raise AuditRefused("quota", problem)
    audit = Audit(round_id=round_.id, submission=submission, way=way, selected_at=at, steps={})
    session.add(audit)
    record(session, submission, action="selected for audit", reason=f"{round_.quarter} ({way})",
           at=at, policy=policy_in_force(session, settings))  # fmt: skip
    notify(session, [*members_of(session, submission.organization_id), *committee(session)],
           f"Selected for audit: {submission.organization.name} "
           f"submission {submission.public_id[:8]}",
           "Keep the benchmarked system in its submitted configuration until the audit "
           "completes (rules §11.12).", f"/submissions/{submission.public_id}")  # fmt: skip
    session.flush()
    return audit


def tally(
    *, session: Session, settings: Settings, round_: AuditRound, who: Principal, at: dt.datetime
) -> Audit | None:
    """The ranked-choice count: the nominated audit, none (the committee's majority for
    No Audit Selected), or, with no majority, the chairs' random pick among the
    nominations."""
    _chair(who)
    _open(round_)
    counted = ranked_choice([b.ranking for b in round_.ballots])
    round_.tally, round_.tallied_at = counted.rounds, at
    by_id = {n.public_id: n for n in round_.nominations}
    if counted.winner == NONE_SELECTED:
        return None
    if counted.winner is not None:
        return _select(session, settings, round_, by_id[counted.winner].submission, Way.VOTE, at)
    chosen = pick(list(by_id), _draw(settings, round_.quarter).choice)
    if chosen is None:
        return None
    return _select(session, settings, round_, by_id[chosen].submission, Way.CHAIRS, at)


def draw(
    *,
    session: Session,
    settings: Settings,
    round_: AuditRound,
    who: Principal,
    cohort: str,
    at: dt.datetime,
) -> Audit | None:
    """The random audit: the die is rolled once for the round; on its face a result is
    picked uniformly among *cohort*'s verified results not audited before and not on a
    system equivalent to one the previous round audited (``SimilarSystem``)."""
    _chair(who)
    if round_.drawn_at is not None:
        raise AuditRefused("drawn", f"the {round_.quarter} die was rolled already")
    rng = _draw(settings, f"{round_.quarter}:{cohort}")
    round_.roll, round_.drawn_at, round_.drawn_cohort = rng.randint(1, 6), at, cohort
    if not die_selects(round_.roll, review_policy(settings).audits):
        return None
    audits = session.scalars(select(Audit).join(AuditRound).order_by(AuditRound.quarter)).all()
    audited = {a.submission_id for a in audits}
    earlier = [a for a in audits if a.round.quarter < round_.quarter]
    last_round = (
        [a for a in earlier if a.round.quarter == earlier[-1].round.quarter] if earlier else []
    )
    candidates = {
        p.submission.public_id: p.submission
        for p in session.scalars(
            select(Publication).where(
                Publication.cohort == cohort,
                Publication.status == RecordStatus.VERIFIED,
                Publication.in_record(),
            )
        )
        if p.submission_id not in audited
    }
    excluded = {s for a in last_round for s in similar_systems(a.submission)}
    systems = {key: similar_systems(sub) for key, sub in candidates.items()}
    chosen = pick(drawable(systems, excluded), rng.choice)
    if chosen is None:
        return None
    return _select(session, settings, round_, candidates[chosen], Way.RANDOM, at)


def record_step(
    *,
    session: Session,
    audit: Audit,
    who: Principal,
    step: str,
    on: dt.date,
    note: str,
    at: dt.datetime,
) -> Audit:
    """The chair records an audit's step (the auditor chosen, the NDA provided and
    executed, the report, the redacted report forwarded) on the day it happened."""
    _chair(who)
    if step not in STEPS:
        raise AuditRefused("bad-step", f"the step is one of {', '.join(STEPS)}", Kind.INVALID)
    if audit.outcome is not None:
        raise AuditRefused("decided", "the audit's outcome is recorded")
    audit.steps = {**audit.steps, step: on.isoformat()}
    if step == "auditor":
        audit.auditor = note.strip() or audit.auditor
    said = f"{step} on {on}" + (f": {note.strip()}" if note.strip() else "")
    record(session, audit.submission, action="audit step", actor=who.email, reason=said, at=at)
    session.flush()
    return audit


def decide_audit(
    *,
    session: Session,
    settings: Settings,
    audit: Audit,
    who: Principal,
    outcome: str,
    reason: str,
    at: dt.datetime,
) -> Audit:
    """The outcome: passed; or a material failure, the result moved to RDI (a
    reclassification) or removed (invalidated)."""
    _chair(who)
    if outcome not in tuple(Outcome):
        raise AuditRefused("bad-outcome", f"one of {', '.join(Outcome)}", Kind.INVALID)
    if audit.outcome is not None:
        raise AuditRefused("decided", "the audit's outcome is recorded")
    if not reason.strip():
        raise AuditRefused("reason-required", "say why", Kind.INVALID)
    why = f"audit {audit.public_id[:8]}: {reason.strip()}"
    if outcome == Outcome.FAILED_RDI:
        to_rdi = Remedy(availability="RDI")
        reclassify(session=session, settings=settings, submission=audit.submission,
                   actor=who.email, reason=why, remedy=to_rdi, at=at)  # fmt: skip
    elif outcome == Outcome.FAILED_REMOVED:
        decide(session=session, settings=settings, submission=audit.submission,
               action="invalidate", actor=who.email, reason=why, at=at)  # fmt: skip
    else:
        record(session, audit.submission, action="audit passed", actor=who.email, reason=why,
               at=at, policy=policy_in_force(session, settings))  # fmt: skip
    audit.outcome, audit.outcome_reason, audit.decided_at = outcome, reason.strip(), at
    session.flush()
    return audit


def tick_audits(session: Session, settings: Settings, now: dt.datetime) -> list[str]:
    """The audits' clock: each step still not recorded past its deadline tells the chairs
    and the audited organisation once (in the inbox, and by e-mail where it is set up)."""
    today = review_clock(settings).local_date(now)
    done = []
    for audit in session.scalars(select(Audit).where(Audit.outcome.is_(None))):
        view = audit_view(settings, audit)
        for step, due in view.due.items():
            if due is None or today <= due or step in audit.steps:
                continue
            key = f"{audit.public_id[:8]} {step}"
            if not first_time(session, audit.submission, "audit overdue", key):
                continue
            said = f"audit {key} was due on {due} (rules §11.12)"
            record(session, audit.submission, action="audit overdue", reason=said, at=now)
            notify(session, [*chairs(session),
                             *members_of(session, audit.submission.organization_id)],
                   f"Audit step overdue: {audit.submission.organization.name}", said,
                   "/review/audits")  # fmt: skip
            done.append(said)
    return done


@dataclass(frozen=True)
class AuditFields:
    """What an act on the audits is taken with (each act reads its own)."""

    quarter: str = ""
    audit: str = ""  # an audit's id
    submission: Submission | None = None  # the result nominated
    reason: str = ""
    ranking: tuple[str, ...] = ()
    cohort: str = ""
    step: str = ""
    on: dt.date | None = None
    note: str = ""
    outcome: str = ""


#: The acts, as the API's paths and the page's form name them.
ROUND_ACTS = ("nominations", "ballots", "tally", "draw")
AUDIT_ACTS = ("steps", "outcome")


def act_on_audits(
    act: str,
    fields: AuditFields,
    *,
    session: Session,
    settings: Settings,
    who: Principal,
    at: dt.datetime,
) -> object:
    """One act on the audits by name: ``open`` a round, an act on a round
    (:data:`ROUND_ACTS`) or on an audit (:data:`AUDIT_ACTS`)."""
    if act == "open":
        return open_round(session=session, who=who, quarter=fields.quarter, at=at)
    if act in ROUND_ACTS:
        found = round_by_quarter(session, fields.quarter)
        if found is None:
            raise AuditRefused("no-round", f"no audit round {fields.quarter!r}", Kind.NOT_FOUND)
        return _round_act(act, found, fields, session=session, settings=settings, who=who, at=at)
    if act in AUDIT_ACTS:
        audit = audit_by_id(session, fields.audit)
        if audit is None:
            raise AuditRefused("no-audit", f"no audit {fields.audit!r}", Kind.NOT_FOUND)
        if act == "steps":
            return record_step(session=session, audit=audit, who=who, step=fields.step,
                               on=fields.on or at.date(), note=fields.note, at=at)  # fmt: skip
        return decide_audit(session=session, settings=settings, audit=audit, who=who,
                            outcome=fields.outcome, reason=fields.reason, at=at)  # fmt: skip
    raise AuditRefused("bad-act", f"no audit act {act!r}", Kind.NOT_FOUND)


def _round_act(
    act: str,
    round_: AuditRound,
    fields: AuditFields,
    *,
    session: Session,
    settings: Settings,
    who: Principal,
    at: dt.datetime,
) -> object:
    if act == "nominations":
        if fields.submission is None:
            raise AuditRefused("submission-required", "name the result", Kind.INVALID)
        return nominate(session=session, settings=settings, round_=round_, who=who,
                        submission=fields.submission, reason=fields.reason, at=at)  # fmt: skip
    if act == "ballots":
        return cast_ballot(session=session, settings=settings, round_=round_, who=who,
                           ranking=[r for r in fields.ranking if r], at=at)  # fmt: skip
    if act == "tally":
        return tally(session=session, settings=settings, round_=round_, who=who, at=at)
    return draw(session=session, settings=settings, round_=round_, who=who,
                cohort=fields.cohort, at=at)  # fmt: skip


# --- views ---------------------------------------------------------------------------------


class NominationView(BaseModel):
    id: str
    submission: str
    organization: str = Field(description="the nominated result's organisation")
    nominated_by: str
    reason: str
    at: Timestamp


class AuditView(BaseModel):
    id: str
    quarter: str
    submission: str
    organization: str
    way: str = Field(description="vote, chairs (no majority) or random")
    selected_at: Timestamp
    steps: dict[str, str] = Field(description="each step recorded, and its day")
    due: dict[str, dt.date | None] = Field(description="each step's deadline (rules §11.12)")
    outcome: str | None = Field(description="passed, failed-rdi or failed-removed")
    outcome_reason: str | None


class RoundView(BaseModel):
    id: int
    quarter: str
    opened_at: Timestamp
    nominations: list[NominationView]
    ballots: int = Field(description="how many organisations have ranked")
    tallied_at: Timestamp | None
    tally: list[dict[str, int]] | None = Field(description="each count's first choices")
    roll: int | None = Field(description="the die, 1 to 6")
    drawn_cohort: str | None
    audits: list[AuditView]


def audit_view(settings: Settings, audit: Audit) -> AuditView:
    def day(step: str) -> dt.date | None:
        text = audit.steps.get(step)
        return dt.date.fromisoformat(text) if text else None

    selected = review_clock(settings).local_date(audit.selected_at)
    due = audit_deadlines(selected, review_policy(settings).audits, day("nda-executed"),
                          day("report"))  # fmt: skip
    return AuditView(
        id=audit.public_id, quarter=audit.round.quarter, submission=audit.submission.public_id,
        organization=audit.submission.organization.name, way=audit.way,
        selected_at=audit.selected_at, steps=dict(audit.steps),
        due={"auditor": due.auditor_by, "nda-provided": due.nda_provided_by,
             "nda-executed": due.nda_executed_by, "report": due.report_by,
             "redacted-report": due.redacted_by, "complete": due.complete_by},
        outcome=audit.outcome, outcome_reason=audit.outcome_reason,
    )  # fmt: skip


def rounds_view(session: Session, settings: Settings) -> list[RoundView]:
    audits = session.scalars(select(Audit).order_by(Audit.id)).all()
    out = []
    for r in session.scalars(select(AuditRound).order_by(AuditRound.quarter.desc())):
        out.append(RoundView(
            id=r.id, quarter=r.quarter, opened_at=r.opened_at,
            nominations=[
                NominationView(id=n.public_id, submission=n.submission.public_id,
                               organization=n.submission.organization.name,
                               nominated_by=n.nominated_by, reason=n.reason, at=n.at)
                for n in r.nominations
            ],
            ballots=len(r.ballots), tallied_at=r.tallied_at, tally=r.tally, roll=r.roll,
            drawn_cohort=r.drawn_cohort,
            audits=[audit_view(settings, a) for a in audits if a.round_id == r.id],
        ))  # fmt: skip
    return out


def round_by_quarter(session: Session, quarter: str) -> AuditRound | None:
    return session.scalar(select(AuditRound).where(AuditRound.quarter == quarter))


def audit_by_id(session: Session, public_id: str) -> Audit | None:
    return session.scalar(select(Audit).where(Audit.public_id == public_id))


def quarter_now(settings: Settings, at: dt.datetime) -> str:
    return quarter_of(review_clock(settings).local_date(at))
