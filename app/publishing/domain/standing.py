"""A published result's standing over time: its publication status (Available, Preview,
RDI, rules §11.10) and the clocks that run on it, the rules' tags, the newer result that
supersedes it (§11.8), and the basis each point's numbers rest on (§2.3–2.4).

One module every surface asks (architecture, decision 20): the record's read path, the
review's Preview extensions and the clocks, the checks' findings and the tracker all call
these functions, so a date or a tag is worked out in one place. Pure: dates in, facts out.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.cohorts import Cohort
from app.core.divisions import (
    Availability,
    Division,
    Scenario,
    availability_of,
    division_of,
    scenario_of,
)
from app.core.names import organisation_key


def result_name(division: str | None, availability: str | None = None) -> str:
    """How the rules name a result (rules §8 table; §11.10: a Preview result is referred
    to as "MLPerf Endpoints Preview"); an undeclared division reads as Standardized."""
    base = {
        Division.SERVICED: "MLPerf Endpoints Serviced",
        Division.RDI: "MLPerf Endpoints RDI",
    }.get(division_of(division) or Division.STANDARDIZED, "MLPerf Endpoints")
    return f"{base} Preview" if availability == Availability.PREVIEW else base


# --- classification: what a result is declared, and what the chair made of it --------------


@dataclass(frozen=True)
class Classification:
    """A system's division, publication status and (for Preview) committed date, as
    declared or as the chair reclassified them; words as declared (the checker says what
    it makes of an unknown one)."""

    division: str | None
    availability: str | None
    target_date: dt.date | None

    @property
    def status(self) -> Availability | None:
        return availability_of(self.availability, self.division)


@dataclass(frozen=True)
class Remedy:
    """One reclassification by the chair: the fields it names (None: unchanged)."""

    division: str | None = None
    availability: str | None = None
    available_by: dt.date | None = None


def classified(declared: Classification, remedies: Sequence[Remedy]) -> Classification:
    """*declared* after the chair's reclassifications, in the order decided: the latest
    that names a field holds; a Preview's date goes with the status that set it."""
    division, availability, target = declared.division, declared.availability, declared.target_date
    for remedy in remedies:
        division = remedy.division or division
        if remedy.availability:
            availability, target = remedy.availability, remedy.available_by
    return Classification(division, availability, target)


# Publication statuses from the highest (rules §11.10): reclassification only moves down.
_STATUS_ORDER = (Availability.AVAILABLE, Availability.PREVIEW, Availability.RDI)


def remedy_problem(current: Classification, remedy: Remedy, window_end: dt.date) -> str | None:
    """Why *remedy* cannot reclassify a result that stands as *current*, if it cannot:
    another division, or a lower publication status (Available to Preview or RDI,
    Preview to RDI; rules §11.4, §11.5); a result becomes Available by a new submission.
    A Preview names its date, within the window that ends on *window_end*; an RDI
    division is RDI."""
    if remedy.division is None and remedy.availability is None:
        return "name the division or the publication status the result moves to"
    if remedy.division is not None and division_of(remedy.division) is None:
        return f"the division is one of {', '.join(Division)}, not {remedy.division!r}"
    wanted = availability_of(remedy.availability, None) if remedy.availability else None
    if remedy.availability is not None and wanted is None:
        return f"the status is one of {', '.join(Availability)}, not {remedy.availability!r}"
    after = classified(current, [remedy])
    if division_of(after.division) == Division.RDI and wanted not in (None, Availability.RDI):
        return "an RDI result is always RDI (rules §11.10)"
    before, status = current.status, after.status
    if before is not None and status is not None:
        if _STATUS_ORDER.index(status) < _STATUS_ORDER.index(before):
            return (
                f"a {before} result does not become {status} by reclassification: it is "
                "submitted anew (rules §11.10)"
            )
    if remedy.available_by is not None and wanted != Availability.PREVIEW:
        return "a committed date goes only with the Preview status"
    if status == Availability.PREVIEW and before != Availability.PREVIEW:
        if remedy.available_by is None:
            return "a Preview result names the date it will be Available (rules §11.10)"
        if remedy.available_by > window_end:
            return (
                f"the Preview's date {remedy.available_by} is past its window, which ends "
                f"on {window_end} (rules §11.10)"
            )
    if (division_of(after.division), status) == (division_of(current.division), before):
        return "the result is classified so already"
    return None


# --- a client-over-network endpoint (rules §11.10) ------------------------------------------


def owes_reachability(division: str | None, scenario: str | None) -> bool:
    """A Standardized client-over-network result owes a reachable endpoint and a contact
    (rules §11.10; a Serviced one is the provider's own public endpoint)."""
    return division_of(division) == Division.STANDARDIZED and scenario_of(scenario) == Scenario.CON


def con_reachable_until(first_public: dt.date | None, days: int) -> dt.date | None:
    """The last day such an endpoint must stay reachable: *days* (90) after the cohort
    the result first appeared in; None while it is not public."""
    return first_public + dt.timedelta(days=days) if first_public is not None else None


def unreachable_problem(until: dt.date | None, failed_on: dt.date) -> str | None:
    """Why a failed reachability check on *failed_on* breaks the Available test, if it
    does (within the window; after it the endpoint owes nothing)."""
    if until is None or failed_on > until:
        return None
    return (
        f"the endpoint was unreachable on {failed_on}, within the days after publication it "
        f"must stay reachable (until {until}, rules §11.10): the result is not Available"
    )


# --- Preview (rules §11.10) ---------------------------------------------------------------


@dataclass(frozen=True)
class PreviewTerms:
    """The Preview rule's numbers (settings, with the clause beside each)."""

    window_days: int = 180  # Available within 180 calendar days of the first cohort
    extension_max_days: int = 60  # one extension of at most 60 days
    extension_lead_days: int = 30  # asked at least 30 days before expiry
    notice_days: tuple[int, ...] = (30, 7)  # the submitter is told this many days before


@dataclass(frozen=True)
class PreviewClock:
    """A Preview result's clock: it starts at the date of the cohort in which the result
    first appeared publicly, is not reset by updates, and moves only by the one extension."""

    starts: dt.date
    terms: PreviewTerms = PreviewTerms()
    extension_days: int = 0

    @property
    def window_end(self) -> dt.date:
        """The last day of the 180-day window: the latest target availability date."""
        return self.starts + dt.timedelta(days=self.terms.window_days)

    @property
    def expires(self) -> dt.date:
        return self.window_end + dt.timedelta(days=self.extension_days)

    @property
    def extension_deadline(self) -> dt.date:
        """The last day an extension may be asked for (30 days before the expiry)."""
        return self.window_end - dt.timedelta(days=self.terms.extension_lead_days)

    @property
    def latest_extended_date(self) -> dt.date:
        return self.window_end + dt.timedelta(days=self.terms.extension_max_days)

    def removal_cohort(self) -> Cohort:
        """The cohort at which an expired Preview is removed: the first after its expiry."""
        cohort = Cohort.on_or_before(self.expires)
        while cohort.date <= self.expires:
            cohort = cohort.next()
        return cohort

    def days_left(self, today: dt.date) -> int:
        return (self.expires - today).days

    def notices_due(self, today: dt.date) -> list[int]:
        """The notices (days before expiry) whose day has come, while it has not expired."""
        left = self.days_left(today)
        return [days for days in self.terms.notice_days if 0 <= left <= days]

    def extended(self, to: dt.date) -> PreviewClock:
        """The clock once the extension to *to* is granted."""
        return PreviewClock(self.starts, self.terms, max(0, (to - self.window_end).days))


def target_date_problem(target: dt.date | None, clock: PreviewClock) -> str | None:
    """Why a Preview result's target availability date breaks the rule, if it does."""
    if target is None:
        return "a Preview result declares its target_availability_date (rules §11.10)"
    if target > clock.window_end:
        return (
            f"the target availability date {target} is past the Preview window, which ends "
            f"on {clock.window_end} ({clock.terms.window_days} days from the cohort of "
            f"{clock.starts}, rules §11.10)"
        )
    return None


def extension_problem(
    clock: PreviewClock, asked_on: dt.date, to: dt.date, *, asked_before: bool
) -> str | None:
    """Why an extension of a Preview window to *to*, asked on *asked_on*, cannot be
    granted, if it cannot (rules §11.10: one, at most 60 days, asked 30 days ahead)."""
    if asked_before:
        return "a Preview result has one extension, and this one has been asked for already"
    if asked_on > clock.extension_deadline:
        return (
            f"an extension is asked at least {clock.terms.extension_lead_days} days before "
            f"the expiry ({clock.window_end}): by {clock.extension_deadline}"
        )
    if to <= clock.window_end:
        return f"the new date must be after the window's end, {clock.window_end}"
    if to > clock.latest_extended_date:
        return (
            f"an extension is at most {clock.terms.extension_max_days} days: "
            f"until {clock.latest_extended_date} at the latest"
        )
    return None


def continuity_problems(
    preview: Mapping[int, tuple[float, float | None]],
    available: Mapping[int, tuple[float, float | None]],
    most_drop: float,
) -> list[str]:
    """Where the Available result's throughput dropped by more than *most_drop* from its
    Preview, point by point (by concurrency): ``system_tps`` and ``tps_per_user`` each
    (rules §11.10; latency is not gated). Concurrencies only one of them has are left."""
    problems = []
    for concurrency in sorted(set(preview) & set(available)):
        for name, was, now in zip(
            ("system_tps", "tps_per_user"),
            preview[concurrency],
            available[concurrency],
            strict=True,
        ):
            if was and now is not None and now < was * (1 - most_drop):
                problems.append(
                    f"concurrency {concurrency}: {name} {now:g} is {1 - now / was:.1%} below "
                    f"the Preview's {was:g} (at most {most_drop:.0%})"
                )
    return problems


# --- RDI cooling-off (rules §11.10) --------------------------------------------------------


def cooling_off_until(first_rdi: Cohort, days: int = 221) -> dt.date:
    """The first day a component first published as RDI in *first_rdi* may be submitted
    as Available or Preview: the later of the cohort date after next and *days* days."""
    after_next = first_rdi.next().next().date
    return max(after_next, first_rdi.date + dt.timedelta(days=days))


# --- the rules' tags (rules §11.11) --------------------------------------------------------

PEER_REVIEW_PENDING = "peer review pending"
ESTIMATED_POWER = "MLC Estimated Power"
INVALIDATED = "Invalidated"
WITHDRAWN = "Withdrawn"


def preview_tag(available_by: dt.date) -> str:
    return f"Preview \u2014 Available by {available_by.isoformat()}"


def superseded_tag(cohort: str) -> str:
    return f"Superseded by {cohort}"


def tags_of(
    *,
    status: str,
    availability: str | None,
    available_by: dt.date | None,
    power_estimated: bool,
    superseded_by: str | None,
) -> list[str]:
    """A result's tags in the rules' wording, in the order every surface shows them."""
    tags = []
    if status == "provisional":
        tags.append(PEER_REVIEW_PENDING)
    if availability == Availability.PREVIEW and available_by is not None:
        tags.append(preview_tag(available_by))
    if power_estimated:
        tags.append(ESTIMATED_POWER)
    if status == "invalidated":
        tags.append(INVALIDATED)
    if status == "withdrawn":
        tags.append(WITHDRAWN)
    if superseded_by is not None:
        tags.append(superseded_tag(superseded_by))
    return tags


# --- supersession (rules §11.8) ------------------------------------------------------------


@dataclass(frozen=True)
class SystemIdentity:
    """What makes two results "the same system" for supersession: the organisation, the
    system's name (each normalised as organisations are: case, spacing and punctuation
    aside), the benchmark and its dataset, and the division and scenario (separate
    sub-divisions never supersede each other). Availability is not part of it: an
    Available result supersedes its Preview."""

    organisation: str
    system: str
    benchmark: str
    dataset: str
    division: str
    scenario: str

    @classmethod
    def of(
        cls,
        organisation: str,
        system: str,
        benchmark: str,
        dataset: str | None,
        division: str | None,
        scenario: str | None,
    ) -> SystemIdentity:
        return cls(
            organisation_key(organisation),
            organisation_key(system),
            benchmark,
            dataset or "",
            (division_of(division) or Division.STANDARDIZED).value,
            str(scenario_of(scenario) or ""),
        )


_VERSION = re.compile(r"^v?\d[\w.+-]*$", re.IGNORECASE)


@dataclass(frozen=True)
class SimilarSystem:
    """What makes a result's system "similar" to another's (rules §11.5, a newer result
    on a similar system supersedes reproducibility and validity concerns): the same
    benchmark, the same accelerator model and count, the same host and interconnect
    topology (as far as the record holds it: the node count), and a serving stack that
    differs only in versions. Looser than :class:`SystemIdentity`, which is "the same
    system" for supersession on the record."""

    benchmark: str
    accelerator: str
    accelerator_count: int | None
    node_count: int | None
    software: str

    @classmethod
    def of(
        cls,
        benchmark: str,
        accelerator: str | None,
        accelerator_count: int | None,
        node_count: int | None,
        software: str | None,
    ) -> SimilarSystem:
        words = [w for w in (software or "").split() if not _VERSION.match(w)]
        return cls(
            benchmark,
            organisation_key(accelerator or ""),
            accelerator_count,
            node_count or 1,
            organisation_key(" ".join(words)),
        )


@dataclass(frozen=True)
class Contender:
    """A result as supersession weighs it: which system, whether it is finalized, and
    the cohort it became so (or first appeared in)."""

    identity: SystemIdentity
    finalized: bool
    since: str  # a cohort id: verified since, or first public


def superseded(results: Sequence[Contender]) -> list[str | None]:
    """For each result, the cohort of the newer finalized result of the same system that
    supersedes it, or None: the latest finalized one stands, every older one of the same
    system (finalized before it, or not finalized when it was) gives way."""
    latest: dict[SystemIdentity, tuple[str, int]] = {}
    for n, result in enumerate(results):
        if result.finalized:
            held = latest.get(result.identity)
            if held is None or (result.since, n) > held:
                latest[result.identity] = (result.since, n)
    out: list[str | None] = []
    for n, result in enumerate(results):
        held = latest.get(result.identity)
        newer = held is not None and held[1] != n and (result.since, n) < held
        out.append(held[0] if newer and held is not None else None)
    return out


# --- the reporting basis (rules §2.3, §2.4) ------------------------------------------------


@dataclass(frozen=True)
class ReportingBasis:
    """What a point's numbers rest on: the steady-state window (``steady``), or not."""

    status: str | None
    verdict: str | None
    steady: bool
    label: str


_VERDICT_LABELS = {
    "drifting_up": "local plateau only (drifting up)",
    "drifting_down": "drifting down",
    "not found": "no steady state: whole run",
}
_STATUS_LABELS = {
    "insufficient_duration": "low confidence: window shorter than the §6.2 minimum",
    "insufficient_passes": "low confidence: fewer than 4 super-passes",
    "partial_dataset": "whole run only: less than one super-pass",
}


def reporting_basis(status: str | None, verdict: str | None) -> ReportingBasis | None:
    """The basis a point declares (point.yaml ``steady_state``), in words; None where it
    declares none (an Offline or agentic run: the whole run, by the rules)."""
    if status is None and verdict is None:
        return None
    if status not in (None, "windowable"):  # None: declared before the status was kept
        label = _STATUS_LABELS.get(status or "", f"not the official basis ({status})")
        return ReportingBasis(status, verdict, False, label)
    if verdict == "STEADY STATE":
        return ReportingBasis(status, verdict, True, "steady state")
    if verdict == "anomaly":
        return ReportingBasis(status, verdict, True, "steady state, first plateau (level shift)")
    label = _VERDICT_LABELS.get(verdict or "", f"not the official basis ({verdict})")
    return ReportingBasis(status, verdict, False, label)
