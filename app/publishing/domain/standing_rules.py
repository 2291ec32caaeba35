"""The checks a bundle's declared standing must pass (rules §11.10): an RDI result is RDI,
a Preview's date is within its window, a component first published as RDI waits out its
cooling-off, and the Available result that ships a Preview keeps its throughput. Pure:
the declarations and the record's facts come in, findings of the catalogued rules go
out."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.core.cohorts import Cohort
from app.core.divisions import Availability, Division, availability_of, division_of
from app.core.names import organisation_key
from app.publishing.domain.standing import (
    PreviewClock,
    continuity_problems,
    cooling_off_until,
    target_date_problem,
)

# A point's throughput: system_tps and tps_per_user, by concurrency.
Throughput = Mapping[int, tuple[float, float | None]]


@dataclass(frozen=True)
class DeclaredSystem:
    """What a bundle declares of one system (its first readable system_desc.json)."""

    dir_name: str
    name: str
    division: str | None
    declared: str | None  # system_availability_status as written
    target_date: dt.date | None
    accelerator: str | None
    software: str | None  # the serving framework

    @property
    def status(self) -> Availability | None:
        return availability_of(self.declared, self.division)


Component = tuple[str, str]  # (what it is, its normalised name)


def components(system: DeclaredSystem, organisation: str) -> list[Component]:
    """The components cooling-off watches: the accelerator model, the system itself (the
    organisation's), and the serving software, each normalised."""
    found = []
    if system.accelerator:
        found.append(("accelerator model", organisation_key(system.accelerator)))
    found.append(("system", organisation_key(f"{organisation} {system.name}")))
    if system.software:
        found.append(("serving software", organisation_key(system.software)))
    return found


def rdi_status_findings(systems: Iterable[DeclaredSystem]) -> list[Finding]:
    rule = portal_rule("rdi-status")
    out = []
    for system in systems:
        if division_of(system.division) != Division.RDI:
            continue
        declared = availability_of(system.declared, None)
        if declared not in (None, Availability.RDI):
            out.append(
                rule.finding(
                    Severity.ERROR,
                    f"{system.dir_name} is in the RDI division but declares "
                    f"{system.declared!r}: an RDI result is always RDI",
                )
            )
    return out


def preview_date_findings(systems: Iterable[DeclaredSystem], clock: PreviewClock) -> list[Finding]:
    """*clock*: the window the Preview's date is held to (from its first public cohort,
    or the cohort it is eligible for before it has appeared)."""
    rule = portal_rule("preview-target-date")
    out = []
    for system in systems:
        if system.status != Availability.PREVIEW:
            continue
        problem = target_date_problem(system.target_date, clock)
        out.append(
            rule.finding(Severity.ERROR, f"{system.dir_name}: {problem}")
            if problem
            else rule.finding(
                Severity.INFO,
                f"{system.dir_name}: Available by {system.target_date}, within the window "
                f"that ends on {clock.window_end}",
            )
        )
    return out


def cooling_off_findings(
    systems: Iterable[DeclaredSystem],
    organisation: str,
    first_rdi: Mapping[Component, Cohort],
    today: dt.date,
    days: int,
) -> list[Finding]:
    """A system declared Available or Preview whose component was first published as RDI
    (*first_rdi*: the cohort of that first publication) before its cooling-off ends. The
    hardware (the accelerator, the system) is an error; the serving software a warning
    for the committee, since an RDI result may run public software that nothing had shown
    before."""
    rule = portal_rule("rdi-cooling-off")
    out = []
    for system in systems:
        if system.status not in (Availability.AVAILABLE, Availability.PREVIEW):
            continue
        for what, key in components(system, organisation):
            cohort = first_rdi.get((what, key))
            if cohort is None:
                continue
            until = cooling_off_until(cohort, days)
            if today < until:
                out.append(
                    rule.finding(
                        Severity.WARNING if what == "serving software" else Severity.ERROR,
                        f"{system.dir_name}: its {what} was first published as RDI in "
                        f"{cohort}; it may be submitted as {system.status} from {until}",
                    )
                )
    return out


def continuity_findings(
    model: str, system_dir: str, preview: Throughput, available: Throughput, most_drop: float
) -> list[Finding]:
    """The Available curve of *model* against its Preview's, point by point."""
    rule = portal_rule("preview-continuity")
    problems = continuity_problems(preview, available, most_drop)
    if problems:
        return [
            rule.finding(Severity.ERROR, f"{system_dir}/{model}: {problem}") for problem in problems
        ]
    shared = len(set(preview) & set(available))
    return [
        rule.finding(
            Severity.INFO,
            f"{system_dir}/{model}: within {most_drop:.0%} of its Preview at the {shared} "
            "concurrencies both have",
        )
    ]
