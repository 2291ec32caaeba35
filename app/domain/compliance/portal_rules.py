"""The portal's own rules: what the official checker cannot know.

Each rule has a kebab-case id that never collides with an official one, a clause, and
one check function returning findings of the common shape. The registry is the single
list the worker, the CLI and the documentation read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from ..cohorts import BusinessCalendar, Cohort
from ..findings import Finding, Severity, portal_finding
from . import readable
from .official import OfficialReport


@dataclass(frozen=True)
class EarlierUpload:
    """A stored submission whose bundle content equals this one's."""

    reference: str
    uploaded_at: dt.datetime


@dataclass
class PortalContext:
    official: OfficialReport
    evaluated_at: dt.datetime  # when the checks finish: the "passed at" of §4.1
    calendar: BusinessCalendar
    # None: not known here (the local CLI has no database), so the rule does not run.
    earlier_uploads: list[EarlierUpload] | None = None
    # Filled by the cutoff rule for the caller: the cohort the results can join.
    eligible_cohort: Cohort | None = field(default=None)


@dataclass(frozen=True)
class PortalRule:
    id: str
    title: str
    clause: str
    summary: str
    check: Callable[[PortalContext], list[Finding]]

    def finding(self, severity: Severity, message: str, fix: str | None = None) -> Finding:
        return portal_finding(self.id, self.title, self.clause, severity, message, fix=fix)


def _check_duplicate(ctx: PortalContext) -> list[Finding]:
    if ctx.earlier_uploads is None:
        return []
    rule = RULES["duplicate-upload"]
    if not ctx.earlier_uploads:
        return [rule.finding(Severity.INFO, "No earlier upload has the same bundle content")]
    first = min(ctx.earlier_uploads, key=lambda u: u.uploaded_at)
    others = ", ".join(u.reference for u in ctx.earlier_uploads)
    return [
        rule.finding(
            Severity.ERROR,
            f"The bundle's content is identical to submission {first.reference} uploaded "
            f"{first.uploaded_at:%Y-%m-%d %H:%M} UTC (all earlier uploads: {others}); the "
            "same results cannot be submitted twice",
            fix=f"Follow submission {first.reference} instead; to submit new results, "
            "upload the bundle that holds them",
        )
    ]


def _check_cutoff(ctx: PortalContext) -> list[Finding]:
    rule = RULES["target-cohort-cutoff"]
    declared = sorted(
        {p.target_cohort for p in ctx.official.points if p.target_cohort},
    )
    cohorts = [c for c in (Cohort.parse(text) for text in declared) if c is not None]
    if not cohorts:
        return []  # absent or malformed: official target-cohort reports it
    calendar = ctx.calendar
    eligible = calendar.first_eligible_cohort(ctx.evaluated_at)
    local = ctx.evaluated_at.astimezone(calendar.tz)
    findings: list[Finding] = []
    chosen: Cohort | None = None
    for cohort in sorted(set(cohorts)):
        last_day = calendar.last_day_to_pass(cohort)
        if calendar.makes_cohort(ctx.evaluated_at, cohort):
            chosen = chosen or cohort
            findings.append(
                rule.finding(
                    Severity.INFO,
                    f"Checks finished {local:%Y-%m-%d %H:%M %Z}, in time for {cohort} "
                    f"(published {cohort.date:%a %Y-%m-%d} 08:00; last day to pass "
                    f"{last_day:%a %Y-%m-%d})",
                )
            )
        else:
            findings.append(
                rule.finding(
                    Severity.WARNING,
                    f"Checks finished {local:%Y-%m-%d %H:%M %Z}, after the last day to pass "
                    f"for target cohort {cohort} ({last_day:%a %Y-%m-%d}, one business day "
                    f"before its Wednesday {cohort.date:%Y-%m-%d}); the results roll to the "
                    f"next eligible cohort, {eligible}",
                    fix=f"Expect publication in {eligible} or later; if you resubmit, set "
                    f"target_cohort to {eligible} or later and use a seed set adoptable "
                    "for it",
                )
            )
    ctx.eligible_cohort = chosen or eligible
    return findings


RULES: dict[str, PortalRule] = {
    rule.id: rule
    for rule in (
        PortalRule(
            id="duplicate-upload",
            title="Duplicate upload",
            clause="portal",
            summary="The bundle's content equals an earlier upload's (cli_metadata.json aside).",
            check=_check_duplicate,
        ),
        PortalRule(
            id=readable.RULE,
            title=readable.TITLE,
            clause=readable.CLAUSE,
            summary="Every JSON/YAML file under results/ is UTF-8, at most 8 MiB, nests at "
            "most 64 levels, has no alias bomb, no repeated key, no NaN or Infinity and no "
            "integer beyond ±2^64; otherwise the bundle is rejected before the checker runs.",
            check=lambda _ctx: [],  # runs first, in run_compliance, on the files themselves
        ),
        PortalRule(
            id="reproduction-margin",
            title="Reproduction within the margin",
            clause="§11.4",
            summary="A reproduction run of a point measures system tokens/s and tokens/s per "
            "user no more than the reproducibility margin (10%) below the submitted values.",
            check=lambda _ctx: [],  # judged when a reproduction finishes, not at intake
        ),
        PortalRule(
            id="target-cohort-cutoff",
            title="Target cohort cutoff",
            clause="§4.1",
            summary="Automated checks must pass at least one business day before the "
            "target cohort's Wednesday; otherwise the results roll to the next cohort.",
            check=_check_cutoff,
        ),
    )
}


def run_portal_rules(ctx: PortalContext) -> list[Finding]:
    return [finding for rule in RULES.values() for finding in rule.check(ctx)]
