"""Audits (rules §11.12, SR §10): each quarter one nominated audit, chosen by a ranked vote
of the committee, and one random audit (a die roll per round, then a uniform pick); 8 a
year at most, 2 a quarter. A result may be nominated from 4 weeks after it first
appeared; an audit runs on fixed deadlines from its selection; a material failure moves
the result to RDI or removes it.

Pure: the quarter's calendar, the ranked-choice tally, the quota, the deadlines.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass

from app.core.policy import AuditTerms

NONE_SELECTED = "none"  # "No Audit Selected This Quarter" (rules §11.12)


class Way(enum.StrEnum):
    VOTE = "vote"  # the committee's ranked vote
    CHAIRS = "chairs"  # no majority: the chairs picked at random from the nominations
    RANDOM = "random"  # the die


class NominationKind(enum.StrEnum):
    """Who puts a result on the quarter's slate, and on what grounds (rules §11.12)."""

    COMMITTEE = "committee"  # a committee member, from 4 weeks after publication
    # A committee member showing a deviation beyond the reproducibility margins, within
    # the late-concern window; screened by the chair and neutral members (SR §10.4).
    REPRODUCIBILITY = "reproducibility"
    NEW_ACCELERATOR = "new-accelerator"  # the chairs add a system with a new accelerator


class SlateState(enum.StrEnum):
    SCREENING = "screening"  # a reproducibility nomination, with the neutral members
    ON_SLATE = "on-slate"  # ranked in the vote
    REJECTED = "rejected"  # the chair kept it off the slate


@dataclass(frozen=True)
class ReproducibilityCase:
    """What a reproducibility nomination shows (SR §10.4)."""

    points: tuple[str, ...]  # the points reproduced, by label
    reproduction: str  # how they were reproduced
    deviation: str  # the deviation found, beyond 10 % (5 % on the same system)
    rule_cited: str

    def problem(self) -> str | None:
        """What the case leaves out, if anything."""
        missing = [
            name for name, value in (
                ("the points", self.points), ("how they were reproduced", self.reproduction),
                ("the deviation beyond the margins (10 %, 5 % on the same system; accuracy "
                 "needs none)", self.deviation), ("the rule", self.rule_cited),
            )
            if not value or (isinstance(value, str) and not value.strip())
        ]  # fmt: skip
        return f"a reproducibility nomination names {', '.join(missing)}" if missing else None


def screening_problem(findings: int, terms: AuditTerms) -> str | None:
    """Why the chair cannot yet put a reproducibility nomination on the slate or off it."""
    needed = terms.reproducibility_screeners
    if findings < needed:
        return f"{needed} neutral members screen it first ({findings} so far)"
    return None


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED_RDI = "failed-rdi"  # a material failure: moved to RDI
    FAILED_REMOVED = "failed-removed"  # a material failure: removed


def quarter_of(day: dt.date) -> str:
    return f"{day.year}-Q{(day.month - 1) // 3 + 1}"


def nomination_problem(
    first_public: dt.date | None, today: dt.date, terms: AuditTerms, after_days: int | None = None
) -> str | None:
    """Why a result cannot be nominated today, if it cannot (*after_days*: how long after
    its publication; the policy's by default)."""
    if first_public is None:
        return "only a published result is nominated for audit"
    days = terms.nominable_after_days if after_days is None else after_days
    opens = first_public + dt.timedelta(days=days)
    if today < opens:
        return f"nominations open 4 weeks after publication: on {opens} (rules §11.12)"
    return None


def quota_problem(
    selected_this_year: int, selected_this_quarter: Counter[str], way: Way, terms: AuditTerms
) -> str | None:
    """Why one more audit cannot be selected this way, if it cannot: 8 a year, 2 a quarter
    (one nominated, one random)."""
    if selected_this_year >= terms.per_year:
        return f"the year's {terms.per_year} audits are selected already"
    kind = "random" if way == Way.RANDOM else "nominated"
    if sum(selected_this_quarter.values()) >= terms.per_quarter:
        return f"the quarter's {terms.per_quarter} audits are selected already"
    if selected_this_quarter[kind]:
        return f"the quarter has its {kind} audit already"
    return None


@dataclass(frozen=True)
class Tally:
    """A ranked-choice count: the winner (a nomination id, NONE_SELECTED) or None when no
    option reached a majority; each round's first-choice counts, for the record."""

    winner: str | None
    rounds: list[dict[str, int]]


def ranked_choice(ballots: Sequence[Sequence[str]]) -> Tally:
    """Instant run-off (rules §11.12: ranked choice, simple majority): each round counts
    every ballot for its highest-ranked option still standing; an option with more than
    half of the ballots that still count wins; else the one with the fewest is dropped
    (ties: all of the fewest at once). No winner when nothing is left."""
    standing = {option for ballot in ballots for option in ballot}
    rounds = []
    while standing:
        counts: Counter[str] = Counter()
        for ballot in ballots:
            choice = next((o for o in ballot if o in standing), None)
            if choice is not None:
                counts[choice] += 1
        counted = sum(counts.values())
        rounds.append(dict(sorted(counts.items())))
        if counted == 0:
            break
        leader, votes = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if votes * 2 > counted:
            return Tally(leader, rounds)
        fewest = min(counts.get(o, 0) for o in standing)
        standing -= {o for o in standing if counts.get(o, 0) == fewest}
    return Tally(None, rounds)


def drawable(
    candidates: Mapping[str, Collection[Hashable]], audited_last_round: Collection[Hashable]
) -> list[str]:
    """The results the die may pick (rules §11.12): none equivalent to a system audited in
    the previous round (*candidates* and *audited_last_round*: each result's systems, as
    the caller tells them equivalent)."""
    return sorted(key for key, systems in candidates.items()
                  if not set(systems) & set(audited_last_round))  # fmt: skip


def die_selects(roll: int, terms: AuditTerms) -> bool:
    """The die selects the round on one face (rules §11.12: probability 1 in 6)."""
    return roll == terms.random_odds


def pick(candidates: Sequence[str], choose: Callable[[Sequence[str]], str]) -> str | None:
    """A uniform pick among *candidates* (sorted, so a seeded draw repeats)."""
    return choose(sorted(candidates)) if candidates else None


@dataclass(frozen=True)
class AuditDeadlines:
    auditor_by: dt.date
    nda_provided_by: dt.date
    nda_executed_by: dt.date
    report_by: dt.date | None  # from the NDAs' execution
    redacted_by: dt.date | None  # from the report
    complete_by: dt.date


def audit_deadlines(
    selected: dt.date,
    terms: AuditTerms,
    nda_executed: dt.date | None = None,
    reported: dt.date | None = None,
) -> AuditDeadlines:
    def days(start: dt.date | None, n: int) -> dt.date | None:
        return start + dt.timedelta(days=n) if start is not None else None

    return AuditDeadlines(
        auditor_by=selected + dt.timedelta(days=terms.auditor_days),
        nda_provided_by=selected + dt.timedelta(days=terms.nda_provided_days),
        nda_executed_by=selected + dt.timedelta(days=terms.nda_executed_days),
        report_by=days(nda_executed, terms.report_days),
        redacted_by=days(reported, terms.redacted_days),
        complete_by=selected + dt.timedelta(days=terms.complete_days),
    )
