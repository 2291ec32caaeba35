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
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, user_by_email
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import (
    chairs,
    committee,
    members_of,
    neutral_members,
    notify,
)
from app.audit import policy_in_force, record
from app.core.authorization import Action, may
from app.core.lifecycle import RecordStatus, Screening, SubmissionState
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
    System,
)
from app.publishing.domain.standing import Remedy
from app.publishing.services.previews import first_public_cohort
from app.publishing.services.standing import similar_systems
from app.review.domain.audits import (
    NONE_SELECTED,
    NominationKind,
    Outcome,
    ReproducibilityCase,
    SlateState,
    Way,
    audit_deadlines,
    die_selects,
    drawable,
    nomination_problem,
    pick,
    quarter_of,
    quota_problem,
    ranked_choice,
    screening_problem,
)
from app.review.services.decisions import decide, reclassify
from app.review.services.review import first_time, late_window, on_committee
from app.settings import Settings, review_clock, review_policy
from app.submissions.services.points import find_point

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
    kind: str = NominationKind.COMMITTEE,
    case: ReproducibilityCase | None = None,
) -> AuditNomination:
    """Put a finalized, published result on the round's slate: a committee member's
    nomination of another organisation's result (from 4 weeks after publication), a
    reproducibility nomination (within the late-concern window, with its *case*; it goes
    to the neutral members' screening first), or a chair's addition of a system with a
    new accelerator (rules §11.12, SR §10.4)."""
    _open(round_)
    if kind not in tuple(NominationKind):
        raise AuditRefused("bad-kind", f"a nomination is one of {', '.join(NominationKind)}",
                           Kind.INVALID)  # fmt: skip
    org = _nominating_org(session, settings, who, submission, NominationKind(kind), at)
    if kind == NominationKind.REPRODUCIBILITY:
        _reproducible_case(session, settings, submission, case, at)
    else:
        first = first_public_cohort(session, submission)
        today = review_clock(settings).local_date(at)
        days = 0 if kind == NominationKind.NEW_ACCELERATOR else None
        problem = nomination_problem(first.date if first else None, today,
                                     review_policy(settings).audits, days)  # fmt: skip
        if problem is not None:
            raise AuditRefused("not-nominable", problem)
    if any(n.submission_id == submission.id for n in round_.nominations):
        raise AuditRefused("nominated", "the result is nominated in this round already")
    if not reason.strip():
        raise AuditRefused("reason-required", "say why it should be audited", Kind.INVALID)
    screened = case if kind == NominationKind.REPRODUCIBILITY else None  # checked above
    nomination = AuditNomination(
        submission=submission, nominated_by=who.email, organization_id=org,
        reason=reason.strip(), at=at, kind=kind,
        state=SlateState.SCREENING if screened else SlateState.ON_SLATE,
        **(_case_columns(screened) if screened else {}),
    )  # fmt: skip
    round_.nominations.append(nomination)
    record(session, submission, action="nominated for audit", actor=who.email,
           reason=f"{round_.quarter} ({kind}): {nomination.reason}", at=at)  # fmt: skip
    session.flush()
    if screened:
        notify(session, [*neutral_members(session), *chairs(session)],
               f"Reproducibility nomination to screen ({round_.quarter})",
               f"{who.email}: {nomination.reason}", "/review/audits")  # fmt: skip
    return nomination


def _case_columns(case: ReproducibilityCase) -> dict[str, Any]:
    """A reproducibility nomination's case as its row keeps it, no screening yet."""
    return {
        "points": list(case.points), "reproduction": case.reproduction.strip(),
        "deviation": case.deviation.strip(), "rule_cited": case.rule_cited.strip(),
        "screenings": [],
    }  # fmt: skip


def _nominating_org(
    session: Session,
    settings: Settings,
    who: Principal,
    submission: Submission,
    kind: NominationKind,
    at: dt.datetime,
) -> int | None:
    """Who may nominate: a committee member, another organisation's result; a chair, a
    system with a new accelerator. The nominating organisation."""
    if kind == NominationKind.NEW_ACCELERATOR:
        _chair(who)
        org = who.organization_id
        if not new_accelerator(session, submission):
            raise AuditRefused(
                "not-new-accelerator",
                "the chairs add a system with a new accelerator: an earlier published result "
                "ran each of this one's accelerators; a committee member nominates it instead",
            )
    else:
        org = _member_org(session, settings, who, at)
        if submission.organization_id == org:
            raise AuditRefused("own-result", "an organisation does not nominate its own result")
    if submission.state != SubmissionState.FINALIZED:
        raise AuditRefused("not-finalized", "only a finalized, published result is audited")
    return org


def _reproducible_case(
    session: Session,
    settings: Settings,
    submission: Submission,
    case: ReproducibilityCase | None,
    at: dt.datetime,
) -> None:
    """A reproducibility nomination's case, within the late-concern window (rules §11.5,
    §11.12): points of the result, how they were reproduced, the deviation, the rule."""
    case = case or ReproducibilityCase((), "", "", "")
    if (problem := case.problem()) is not None:
        raise AuditRefused("case-incomplete", problem, Kind.INVALID)
    unknown = [label for label in case.points if find_point(submission, label) is None]
    if unknown:
        raise AuditRefused("unknown-point", f"the result has no point {unknown[0]!r}", Kind.INVALID)
    finalized = submission.finalized_at
    closes = late_window(session, settings).closes(finalized) if finalized else None
    if finalized is not None and closes is not None and at > closes:
        raise AuditRefused(
            "window-closed",
            f"reproducibility nominations come within the late-concern window, which closed "
            f"{closes.date()}: the result is settled (rules §11.5)",
        )


def new_accelerator(session: Session, submission: Submission) -> bool:
    """Whether a system of *submission* runs an accelerator that no result published
    before it ran (rules §11.12: the chairs may add such a system to the slate)."""
    models = {s.accelerator_model for s in submission.systems if s.accelerator_model}
    first = session.scalar(
        select(func.min(Publication.published_at)).where(
            Publication.submission_id == submission.id, Publication.in_record()
        )
    )
    if not models or first is None:
        return False
    earlier = session.scalars(
        select(System.accelerator_model)
        .join(Publication, Publication.submission_id == System.submission_id)
        .where(
            System.submission_id != submission.id,
            System.accelerator_model.in_(models),
            Publication.in_record(),
            Publication.published_at < first,
        )
    ).all()
    return bool(models - set(earlier))


def screen_nomination(
    *, nomination: AuditNomination, who: Principal, finding: str, note: str, at: dt.datetime
) -> AuditNomination:
    """A neutral member's finding on a reproducibility nomination, once (SR §10.4)."""
    if (refusal := may(actor_of(who, None), Action.SCREEN_NOMINATION)) is not None:
        raise AuditRefused(refusal.code, refusal.message, refusal.kind)
    if nomination.state != SlateState.SCREENING:
        raise AuditRefused("not-screening", f"the nomination is {nomination.state}")
    done = list(nomination.screenings or [])
    if any(entry["by"] == who.email for entry in done):
        raise AuditRefused("screened", "you screened this nomination already")
    if finding not in tuple(Screening):
        raise AuditRefused("bad-finding", f"the finding is one of {', '.join(Screening)}",
                           Kind.INVALID)  # fmt: skip
    if not note.strip():
        raise AuditRefused("note-required", "say what the screening found", Kind.INVALID)
    done.append({"by": who.email, "finding": finding, "note": note.strip(), "at": at.isoformat()})
    nomination.screenings = done
    return nomination


def slate_nomination(
    *,
    session: Session,
    settings: Settings,
    nomination: AuditNomination,
    who: Principal,
    admit: bool,
    reason: str,
    at: dt.datetime,
) -> AuditNomination:
    """The chair, once the neutral members have screened it, puts a reproducibility
    nomination on the slate or keeps it off (with a reason); the nominator is told."""
    _chair(who)
    _open(nomination.round)
    if nomination.state != SlateState.SCREENING:
        raise AuditRefused("not-screening", f"the nomination is {nomination.state}")
    terms = review_policy(settings).audits
    if (problem := screening_problem(len(nomination.screenings or []), terms)) is not None:
        raise AuditRefused("screening-incomplete", problem)
    if not admit and not reason.strip():
        raise AuditRefused("reason-required", "say why it stays off the slate", Kind.INVALID)
    nomination.state = SlateState.ON_SLATE if admit else SlateState.REJECTED
    nomination.decided_by, nomination.decided_at = who.email, at
    nomination.decision_reason = reason.strip() or None
    said = "on the slate" if admit else f"kept off the slate: {reason.strip()}"
    nominator = user_by_email(session, nomination.nominated_by)
    notify(session, [nominator] if nominator else [],
           f"Your audit nomination ({nomination.round.quarter}) is {nomination.state}",
           f"{who.email}: {said}", "/review/audits")  # fmt: skip
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
    known = {n.public_id for n in _slate(round_)} | {NONE_SELECTED}
    if not ranking or len(set(ranking)) != len(ranking) or not set(ranking) <= known:
        raise AuditRefused(
            "bad-ranking",
            "rank this round's slate (nominations by id) and 'none', each at most once",
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


def _slate(round_: AuditRound) -> list[AuditNomination]:
    """The nominations the committee ranks: all but those in screening or kept off."""
    return [n for n in round_.nominations if n.state == SlateState.ON_SLATE]


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
    if screening := [n for n in round_.nominations if n.state == SlateState.SCREENING]:
        raise AuditRefused(
            "screening-pending",
            f"{len(screening)} reproducibility nomination(s) are still being screened: put "
            "each on the slate or keep it off before the count",
        )
    slate = {n.public_id for n in _slate(round_)} | {NONE_SELECTED}
    counted = ranked_choice([[c for c in b.ranking if c in slate] for b in round_.ballots])
    round_.tally, round_.tallied_at = counted.rounds, at
    by_id = {n.public_id: n for n in _slate(round_)}
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
    kind: str = NominationKind.COMMITTEE
    case: ReproducibilityCase | None = None  # a reproducibility nomination's
    nomination: str = ""  # a nomination's id
    finding: str = ""
    admit: bool = False


#: The acts, as the API's paths and the page's form name them.
ROUND_ACTS = ("nominations", "ballots", "tally", "draw")
AUDIT_ACTS = ("steps", "outcome")
NOMINATION_ACTS = ("screenings", "slate")


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
    (:data:`ROUND_ACTS`), on a nomination (:data:`NOMINATION_ACTS`) or on an audit
    (:data:`AUDIT_ACTS`)."""
    if act == "open":
        return open_round(session=session, who=who, quarter=fields.quarter, at=at)
    if act in NOMINATION_ACTS:
        return _nomination_act(act, fields, session=session, settings=settings, who=who, at=at)
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


def _nomination_act(
    act: str,
    fields: AuditFields,
    *,
    session: Session,
    settings: Settings,
    who: Principal,
    at: dt.datetime,
) -> AuditNomination:
    nomination = nomination_by_id(session, fields.nomination)
    if nomination is None:
        raise AuditRefused("no-nomination", f"no nomination {fields.nomination!r}",
                           Kind.NOT_FOUND)  # fmt: skip
    if act == "screenings":
        return screen_nomination(nomination=nomination, who=who, finding=fields.finding,
                                 note=fields.note, at=at)  # fmt: skip
    return slate_nomination(session=session, settings=settings, nomination=nomination,
                            who=who, admit=fields.admit, reason=fields.reason, at=at)  # fmt: skip


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
                        submission=fields.submission, reason=fields.reason, at=at,
                        kind=fields.kind, case=fields.case)  # fmt: skip
    if act == "ballots":
        return cast_ballot(session=session, settings=settings, round_=round_, who=who,
                           ranking=[r for r in fields.ranking if r], at=at)  # fmt: skip
    if act == "tally":
        return tally(session=session, settings=settings, round_=round_, who=who, at=at)
    return draw(session=session, settings=settings, round_=round_, who=who,
                cohort=fields.cohort, at=at)  # fmt: skip


# --- views ---------------------------------------------------------------------------------


class ScreeningView(BaseModel):
    by: str
    finding: str
    note: str
    at: str


class NominationView(BaseModel):
    id: str
    submission: str
    organization: str = Field(description="the nominated result's organisation")
    nominated_by: str
    reason: str
    at: Timestamp
    kind: NominationKind = Field(description="committee, reproducibility or new-accelerator")
    state: SlateState = Field(description="screening, on-slate (ranked) or rejected")
    points: list[str] | None = Field(description="a reproducibility nomination's points")
    reproduction: str | None
    deviation: str | None
    rule_cited: str | None
    screenings: list[ScreeningView]
    decided_by: str | None = Field(description="the chair who put it on the slate or off")
    decision_reason: str | None


def nomination_view(n: AuditNomination) -> NominationView:
    return NominationView(
        id=n.public_id, submission=n.submission.public_id,
        organization=n.submission.organization.name, nominated_by=n.nominated_by,
        reason=n.reason, at=n.at, kind=NominationKind(n.kind), state=SlateState(n.state),
        points=n.points, reproduction=n.reproduction, deviation=n.deviation,
        rule_cited=n.rule_cited, screenings=[ScreeningView(**e) for e in n.screenings or []],
        decided_by=n.decided_by, decision_reason=n.decision_reason,
    )  # fmt: skip


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
            nominations=[nomination_view(n) for n in r.nominations],
            ballots=len(r.ballots), tallied_at=r.tallied_at, tally=r.tally, roll=r.roll,
            drawn_cohort=r.drawn_cohort,
            audits=[audit_view(settings, a) for a in audits if a.round_id == r.id],
        ))  # fmt: skip
    return out


def round_by_quarter(session: Session, quarter: str) -> AuditRound | None:
    return session.scalar(select(AuditRound).where(AuditRound.quarter == quarter))


def nomination_by_id(session: Session, public_id: str) -> AuditNomination | None:
    return session.scalar(select(AuditNomination).where(AuditNomination.public_id == public_id))


def audit_by_id(session: Session, public_id: str) -> Audit | None:
    return session.scalar(select(Audit).where(Audit.public_id == public_id))


def quarter_now(settings: Settings, at: dt.datetime) -> str:
    return quarter_of(review_clock(settings).local_date(at))
