"""The review committee's policy values (rules §15) as configuration: one TOML file in the
format of ``review_policy.toml`` beside this module (the values the rules state today),
or the operator's own copy. Read strictly: every key required, none unknown, each of its
kind, so a broken file stops the portal at start naming the entry. Each policy has a
digest that decisions and versions of the record carry, so which values applied is on
the record.

Pure: the file in, the values out.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import asdict, dataclass, fields
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from app.core.clocks import Penalty, ReviewRules
from app.core.config_files import read_config


@dataclass(frozen=True)
class DisputeTerms:
    """A dispute's deadlines in business days (calendar days for the appeal), rules §11.6."""

    certify_business_days: int = 2  # after Week 6 closes: certify and name the panel
    statements_business_days: int = 10  # after the parties are notified
    convene_business_days: int = 15  # after notification
    recommend_business_days: int = 5  # after the panel convenes
    decide_business_days: int = 5  # after the recommendation
    extension_business_days: int = 10  # the one investigation extension
    silent_submitter_business_days: int = 10  # past the statements' deadline: withdrawn
    appeal_days: int = 14


@dataclass(frozen=True)
class AuditTerms:
    """The audit rule's numbers (rules §11.12)."""

    per_year: int = 8
    per_quarter: int = 2
    nominable_after_days: int = 28  # nominations open 4 weeks after publication
    random_odds: int = 6  # a round is selected on one face of a six-sided die
    complete_days: int = 60
    auditor_days: int = 28
    nda_provided_days: int = 7
    nda_executed_days: int = 14
    report_days: int = 30  # after the NDAs are executed
    redacted_days: int = 7  # after the report
    reproducibility_screeners: int = 2  # neutral members who screen such a nomination


# What each of the portal's labels may mean in the rules' terms (rules §11.11, open
# question B6: the rules define neither word). verified and provisional have one reading
# each, the API's and the record's vocabulary; unverified has the two the spec lists.
STATUS_READINGS: dict[str, tuple[str, ...]] = {
    "verified": ("finalized",),  # finalized by peer review and published (SR §6.4)
    "provisional": ("peer-review-pending",),  # provisional publication in review (SR §6.2.3)
    "unverified": ("outside-review", "confidential-review"),
}


@dataclass(frozen=True)
class StatusMapping:
    """The portal's labels in the rules' terms (rules §11.11); the values are readings of
    :data:`STATUS_READINGS`."""

    verified: str = "finalized"
    provisional: str = "peer-review-pending"
    unverified: str = "outside-review"

    @property
    def lists_outside_review(self) -> bool:
        """Uploads outside MLCommons review are public, as unverified, from their cohort;
        under the other reading the label is taken and they stay with their organisation."""
        return self.unverified == "outside-review"

    def keeps_private(self, was_public: bool) -> bool:
        """Whether an upload outside review stays with its organisation: under the other
        reading, unless it was public before the reading changed."""
        return not was_public and not self.lists_outside_review

    @property
    def confidential_badge(self) -> str:
        """What the committee's and the organisation's pages call a result in confidential
        review (never public, rules §11.2 A)."""
        return "unverified" if self.unverified == "confidential-review" else "confidential"


@dataclass(frozen=True)
class ReviewPolicy:
    review: ReviewRules = ReviewRules()
    late_objection_days: int = 90
    disputes: DisputeTerms = DisputeTerms()
    fraud_neutral_screeners: int = 2
    max_points: int = 32
    committee_window_months: int = 6
    committee_window_cohorts: int = 12
    con_reachable_days: int = 90
    audits: AuditTerms = AuditTerms()
    statuses: StatusMapping = StatusMapping()

    @property
    def digest(self) -> str:
        """SHA-256 of the values (canonical JSON): the same values, the same digest."""
        text = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


class PolicyInvalid(ValueError):
    """The policy file is not usable; the message names the file, the entry and why."""


def _table(
    data: Any, where: str, names: set[str], optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """*data* as a table with exactly the entries *names* (and any of *optional*)."""
    if not isinstance(data, dict):
        raise PolicyInvalid(f"{where}: must be a table")
    unknown = sorted(set(data) - names - optional)
    if unknown:
        raise PolicyInvalid(f"{where}: unknown entr{'y' if len(unknown) == 1 else 'ies'} "
                            f"{', '.join(unknown)}")  # fmt: skip
    missing = sorted(names - set(data))
    if missing:
        raise PolicyInvalid(f"{where}: missing {', '.join(missing)}")
    return data


def _count(data: dict[str, Any], key: str, where: str, least: int = 0) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise PolicyInvalid(f"{where}.{key}: must be a whole number of at least {least}")
    return value


def _counts(data: Any, where: str, kind: type[Any], least: int = 0) -> dict[str, int]:
    names = {f.name for f in fields(kind)}
    table = _table(data, where, names)
    return {name: _count(table, name, where, least) for name in names}


def _penalties(data: Any, where: str) -> tuple[Penalty, ...]:
    if not isinstance(data, list) or not data:
        raise PolicyInvalid(f"{where}: must list at least one penalty")
    out = []
    for n, row in enumerate(data):
        at = f"{where}[{n}]"
        table = _table(row, at, {"business_days", "delay_cohorts"}, frozenset({"withdraw"}))
        withdraw = table.get("withdraw", False)
        if not isinstance(withdraw, bool):
            raise PolicyInvalid(f"{at}.withdraw: must be true or false")
        out.append(Penalty(_count(table, "business_days", at, 1),
                           _count(table, "delay_cohorts", at), withdraw))  # fmt: skip
    days = [p.business_days for p in out]
    if days != sorted(set(days)):
        raise PolicyInvalid(f"{where}: the steps' business_days must rise")
    return tuple(out)


def _statuses(data: Any, where: str) -> StatusMapping:
    table = _table(data, where, set(STATUS_READINGS))
    for label, readings in STATUS_READINGS.items():
        if table[label] not in readings:
            allowed = ", ".join(f'"{r}"' for r in readings)
            raise PolicyInvalid(f"{where}.{label}: must be {'one of ' if len(readings) > 1 else ''}"
                                f"{allowed} (rules §11.11)")  # fmt: skip
    return StatusMapping(**table)


# The [review] table's entries: ReviewRules' fields, the response clocks named as the
# rules name them.
_REVIEW_ENTRIES = {
    "peer_review_days", "resolution_days", "submitter_response_business_days",
    "objector_response_business_days", "penalties", "embargo_max_days",
    "meeting_business_days", "dispute_backstop_weeks",
}  # fmt: skip


def read_policy(text: str, where: str) -> ReviewPolicy:
    """The policy of a TOML *text* (read from *where*, for messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyInvalid(f"{where}: not TOML: {exc}") from exc
    top = _table(data, where, {"review", "late_objections", "disputes", "fraud", "curve",
                               "committee", "availability", "audits", "statuses"})  # fmt: skip
    review = _table(top["review"], f"{where} [review]", _REVIEW_ENTRIES)
    at = f"{where} [review]"
    rules = ReviewRules(
        peer_review_days=_count(review, "peer_review_days", at, 1),
        resolution_days=_count(review, "resolution_days", at, 1),
        submitter_business_days=_count(review, "submitter_response_business_days", at, 1),
        objector_business_days=_count(review, "objector_response_business_days", at, 1),
        penalties=_penalties(review["penalties"], f"{at}.penalties"),
        embargo_max_days=_count(review, "embargo_max_days", at),
        meeting_business_days=_count(review, "meeting_business_days", at, 1),
        dispute_backstop_weeks=_count(review, "dispute_backstop_weeks", at, 1),
    )
    if rules.resolution_days <= rules.peer_review_days:
        raise PolicyInvalid(f"{at}: resolution_days must end after peer_review_days")
    late = _table(top["late_objections"], f"{where} [late_objections]", {"window_days"})
    fraud = _table(top["fraud"], f"{where} [fraud]", {"neutral_screeners"})
    curve = _table(top["curve"], f"{where} [curve]", {"max_points"})
    committee = _table(top["committee"], f"{where} [committee]",
                       {"window_months", "window_cohorts"})  # fmt: skip
    availability = _table(top["availability"], f"{where} [availability]", {"con_reachable_days"})
    return ReviewPolicy(
        review=rules,
        late_objection_days=_count(late, "window_days", f"{where} [late_objections]", 1),
        disputes=DisputeTerms(**_counts(top["disputes"], f"{where} [disputes]", DisputeTerms, 1)),
        fraud_neutral_screeners=_count(fraud, "neutral_screeners", f"{where} [fraud]", 1),
        max_points=_count(curve, "max_points", f"{where} [curve]", 8),
        committee_window_months=_count(committee, "window_months", f"{where} [committee]", 1),
        committee_window_cohorts=_count(committee, "window_cohorts", f"{where} [committee]", 1),
        con_reachable_days=_count(availability, "con_reachable_days", f"{where} [availability]", 1),
        audits=AuditTerms(**_counts(top["audits"], f"{where} [audits]", AuditTerms, 1)),
        statuses=_statuses(top["statuses"], f"{where} [statuses]"),
    )


def review_policy_of(path: Path | None = None) -> ReviewPolicy:
    """The operator's policy (*path*), else the one the portal ships."""
    return _shipped() if path is None else read_config(path, read_policy, PolicyInvalid)


@cache
def _shipped() -> ReviewPolicy:
    shipped = files(__package__).joinpath("review_policy.toml").read_text("utf-8")
    return read_policy(shipped, "review_policy.toml")
