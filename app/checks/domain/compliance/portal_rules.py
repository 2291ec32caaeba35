"""The portal's own rules: what the official checker cannot know.

Each rule is catalogued in :mod:`app.checks.domain.rules` (its id never collides with an
official one); here is one check function per rule, returning findings of the common
shape.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from app.checks.domain.compliance.official import OfficialReport
from app.checks.domain.datasets import OFFICIAL_DATASETS, plain_name
from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.core.cohorts import BusinessCalendar, Cohort


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
    # The dataset catalogue (app.checks.domain.datasets) the declared datasets must name.
    datasets: frozenset[str] = OFFICIAL_DATASETS


def _check_duplicate(ctx: PortalContext) -> list[Finding]:
    if ctx.earlier_uploads is None:
        return []
    rule = portal_rule("duplicate-upload")
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
    rule = portal_rule("target-cohort-cutoff")
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


def _check_datasets(ctx: PortalContext) -> list[Finding]:
    rule = portal_rule("dataset-name")
    findings = []
    for name in sorted({p.dataset for p in ctx.official.points if p.dataset}):
        points = ", ".join(p.label for p in ctx.official.points if p.dataset == name)
        if not plain_name(name):
            findings.append(
                rule.finding(
                    Severity.ERROR,
                    f"dataset {name!r} (point.yaml of {points}) is not a dataset name: a "
                    "name has lower-case letters, digits, '_', '-' and '.', and no path",
                )
            )
        elif name not in ctx.datasets:
            findings.append(
                rule.finding(
                    Severity.WARNING,
                    f"dataset {name!r} (point.yaml of {points}) is not in the catalogue "
                    f"({', '.join(sorted(ctx.datasets))}): the official minimum query count "
                    "is not checked for it, and the portal cannot reproduce or re-check its "
                    "points",
                    fix="Declare the benchmark's dataset by its catalogue name",
                )
            )
    return findings


# The portal's own automated checks, in the order they run (their titles, clauses and
# explanations are in the rule catalogue).
CHECKS: tuple[Callable[[PortalContext], list[Finding]], ...] = (
    _check_duplicate,
    _check_cutoff,
    _check_datasets,
)


def run_portal_rules(ctx: PortalContext) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(ctx)]
