"""A system's history: its published curves of one benchmark across the cohorts (the
rolling submissions are the point of Endpoints), with what its disclosures changed."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.db.models import Submission
from app.publishing.domain.snapshot import PublishedPoint
from app.results.services.compare import Chart, chart_curve, disclosed_facts, x_title
from app.results.services.results import QueryProblem, list_cohorts, visible_curves
from app.settings import Settings


class Change(BaseModel):
    field: str
    before: str | None
    after: str | None


class HistoryEntry(BaseModel):
    """One published version of the system's curve, with the cohorts that showed it."""

    first_cohort: str
    cohorts: list[str]
    submission: str
    status: str
    result_id: str | None
    x_metric: str
    points: list[PublishedPoint]
    step_line: list[list[float]]
    changes: list[Change] = Field(description="disclosures changed since the previous entry")


class History(BaseModel):
    organization: str
    system: str
    benchmark: str
    entries: list[HistoryEntry] = Field(description="oldest first")

    def chart(self) -> Chart:
        agentic = bool(self.entries) and self.entries[0].x_metric == "e2e_avg_interactivity"
        return Chart(
            title=f"{self.system} · {self.benchmark} across cohorts",
            x_title=x_title(agentic),
            curves=[
                chart_curve(
                    f"{e.first_cohort}: {e.status}" + (f" ({e.result_id})" if e.result_id else ""),
                    e.status,
                    e.step_line,
                    e.points,
                    e.x_metric,
                )
                for e in self.entries
            ],
        )


def system_history(
    session: Session, settings: Settings, organization: str, system: str, benchmark: str
) -> History:
    def same(a: str, b: str) -> bool:
        return a.strip().lower() == b.strip().lower()

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
            entries[curve.id] = HistoryEntry(
                first_cohort=cohort,
                cohorts=[cohort],
                submission=curve.submission,
                status=curve.status,
                result_id=curve.result_id,
                x_metric=curve.snapshot.x_metric,
                points=curve.snapshot.points,
                step_line=curve.snapshot.step_line,
                changes=[],
            )
    if not entries:
        raise QueryProblem(
            "system", f"{organization!r} published no {benchmark} curve for {system!r}"
        )
    ordered = list(entries.values())
    facts = _facts(session, settings, ordered)
    for previous, entry in zip(ordered, ordered[1:], strict=False):
        before, after = facts[previous.submission], facts[entry.submission]
        entry.changes = [
            Change(field=label, before=before.get(label), after=after.get(label))
            for label in dict.fromkeys([*before, *after])
            if before.get(label) != after.get(label)
        ]
    return History(organization=names[0], system=names[1], benchmark=benchmark, entries=ordered)


def _facts(
    session: Session, settings: Settings, entries: list[HistoryEntry]
) -> dict[str, dict[str, str]]:
    ids = {e.submission for e in entries}
    submissions = session.scalars(
        select(Submission)
        .where(Submission.public_id.in_(ids))
        .options(selectinload(Submission.systems), selectinload(Submission.curves))
    ).all()
    out = {}
    for submission in submissions:
        dirs = {c.system.dir_name for c in submission.curves}
        # The submission's system of this history (a bundle may hold several).
        chosen = next(
            (s.dir_name for s in submission.systems if s.dir_name in dirs), next(iter(dirs), "")
        )
        out[submission.public_id] = disclosed_facts(settings, submission, chosen)
    return out
