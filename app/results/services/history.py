"""A system's history: its published curves of one benchmark across the cohorts (the
rolling submissions are the point of Endpoints), with what its disclosures changed."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.per_user import per_user_metric, per_user_title
from app.core.views import Timestamp
from app.publishing.domain.snapshot import PublishedPoint
from app.results.services.compare import Chart, chart_curve
from app.results.services.public import (
    ARCHIVED,
    PRELIMINARY_FOOTNOTE,
    REMOVED,
    QueryProblem,
    checked_name,
    list_cohorts,
    present_decisions,
    public_curve,
    public_disclosures,
    result_names,
    visible_curves,
)
from app.settings import Settings


class Change(BaseModel):
    field: str
    before: str | None
    after: str | None


class HistoryEntry(BaseModel):
    """One published version of the system's curve, with the cohorts that showed it, as
    the record stands now: a point invalidated since is gone from it, and a result that
    left the curves (withdrawn, invalidated) keeps its entry without points."""

    first_cohort: str
    cohorts: list[str]
    submission: str
    status: str = Field(description="verified, provisional, unverified; withdrawn or invalidated")
    peer_review_pending: bool
    availability: str | None = Field(description="Available, Preview or RDI")
    result_name: str = Field(description="as the rules name the result")
    tags: list[str] = Field(description="the rules' tags it carries now (superseded, …)")
    result_id: str | None
    x_metric: str
    points: list[PublishedPoint]
    step_line: list[list[float]]
    left_on: Timestamp | None = Field(
        default=None, description="when a withdrawn or invalidated result left the curves"
    )
    left_because: str | None = None
    changes: list[Change] = Field(
        description="disclosures, and re-counted output tokens, changed since the previous entry"
    )


class History(BaseModel):
    organization: str
    system: str
    benchmark: str
    entries: list[HistoryEntry] = Field(description="oldest first")
    footnotes: list[str]

    def chart(self) -> Chart:
        agentic = bool(self.entries) and self.entries[0].x_metric == per_user_metric(True)
        shown = [e for e in self.entries if e.points]
        # A version with an older one's very figures is drawn over it: its name says so.
        same: dict[int, str] = {}
        for n, e in enumerate(shown):
            older = next((o for o in shown[:n] if o.step_line == e.step_line), None)
            if older is not None:
                same[n] = older.first_cohort
        return Chart(
            title=f"{self.system} · {self.benchmark} across cohorts",
            x_title=per_user_title(agentic),
            curves=[
                chart_curve(
                    f"{e.first_cohort}: {e.status}"
                    + (" · peer review pending" if e.peer_review_pending else "")
                    + (f" ({e.result_id})" if e.result_id else "")
                    + (f" · the figures of {same[n]}" if n in same else ""),
                    e.status,
                    e.step_line,
                    e.points,
                    e.availability,
                    e.tags,
                )
                for n, e in enumerate(shown)
            ],
            caption=f"{result_names(self.entries)} · {self.system} ({self.organization}) · "
            f"{self.benchmark}"
            " · every released cohort",
            footnotes=self.footnotes,
            # One system's versions: each version is its own line on this chart.
        ).coloured([f"{e.first_cohort}\x00{e.submission}" for e in shown])


def system_history(
    session: Session,
    settings: Settings,
    who: Principal | None,
    organization: str,
    system: str,
    benchmark: str,
) -> History:
    """The system's curves of *benchmark* in every released cohort, from the public
    record, with the decisions taken since applied (app.results.services.public)."""
    organization = checked_name("organization", organization) or ""
    system = checked_name("system", system) or ""
    benchmark = checked_name("benchmark", benchmark) or ""

    def same(a: str, b: str) -> bool:
        return a.strip().lower() == b.strip().lower()

    present = present_decisions(session)
    # Each result's tags as the record stands now (superseded since, say).
    now = {c.submission: c.tags for c in visible_curves(session, None)}
    entries: dict[int, HistoryEntry] = {}
    names = (organization, system)
    for cohort in reversed([c.id for c in list_cohorts(session)]):  # oldest first
        for curve in visible_curves(session, cohort):
            if not (
                same(curve.organization, organization)
                and same(curve.system_name, system)
                and curve.benchmark_model == benchmark
            ):
                continue
            names = (curve.organization, curve.system_name)
            entry = entries.get(curve.id)
            if entry is not None:
                entry.cohorts.append(cohort)
                continue
            if curve.published_status in ARCHIVED or curve.published_status == REMOVED:
                continue  # the archive entry itself: its result's entries say it left
            shown = public_curve(curve)
            gone = present.archived.get(curve.submission)
            entries[curve.id] = HistoryEntry(
                first_cohort=cohort,
                cohorts=[cohort],
                submission=curve.submission,
                status=gone.status if gone else shown.status,
                peer_review_pending=shown.peer_review_pending and gone is None,
                availability=shown.availability,
                result_name=shown.result_name,
                tags=list(now.get(curve.submission, shown.tags)),
                result_id=curve.result_id,
                x_metric=shown.x_metric,
                points=[] if gone else shown.points,
                step_line=[] if gone else shown.step_line,
                left_on=gone.since if gone else None,
                left_because=gone.reason if gone else None,
                changes=[],
            )
    if not entries:
        raise QueryProblem(
            "system", f"{organization!r} published no {benchmark} curve for {system!r}"
        )
    ordered = list(entries.values())
    facts = _facts(session, settings, who, ordered, names[1])
    for previous, entry in zip(ordered, ordered[1:], strict=False):
        entry.changes = _recount_change(previous, entry)
        before, after = facts[previous.submission], facts[entry.submission]
        if before is None or after is None:
            continue  # withheld during peer review (rules §11.9)
        entry.changes += [
            Change(field=label, before=before.get(label), after=after.get(label))
            for label in dict.fromkeys([*before, *after])
            if before.get(label) != after.get(label)
        ]
    return History(
        organization=names[0],
        system=names[1],
        benchmark=benchmark,
        entries=ordered,
        footnotes=[PRELIMINARY_FOOTNOTE] if any(e.peer_review_pending for e in ordered) else [],
    )


def _recount_change(previous: HistoryEntry, entry: HistoryEntry) -> list[Change]:
    """A re-count published since the previous version: the re-counted output tokens of
    the points both versions carry, before and after (a publication freezes them)."""
    before = {p.dir: p.recount.output_tokens for p in previous.points if p.recount}
    after = {p.dir: p.recount.output_tokens for p in entry.points if p.recount}
    both = [d for d in before if d in after and before[d] is not None and after[d] is not None]
    old = sum(before[d] or 0 for d in both)
    new = sum(after[d] or 0 for d in both)
    if not both or old == new or old == 0:
        return []
    change = (new - old) / old * 100
    way = "lower" if change < 0 else "higher"
    return [
        Change(
            field="re-counted output tokens",
            before=f"{old:,}",
            after=f"{new:,} ({abs(change):.1f} % {way})",
        )
    ]


def _facts(
    session: Session,
    settings: Settings,
    who: Principal | None,
    entries: list[HistoryEntry],
    system: str,
) -> dict[str, dict[str, str] | None]:
    """Each entry's disclosures, where the visitor may see them."""
    dirs = {
        c.submission: c.system_dir
        for c in visible_curves(session, None)
        if c.system_name.strip().lower() == system.strip().lower()
    }
    out: dict[str, dict[str, str] | None] = {}
    for entry in entries:
        if entry.submission not in out:
            system_dir = dirs.get(entry.submission, "")
            out[entry.submission] = public_disclosures(
                session, settings, who, entry.submission, system_dir
            )
    return out
