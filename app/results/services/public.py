"""The public record: what is public, as of a cohort, for one visitor.

Every public view that is not the results page itself (compare, history, the agentic
chart) reads here, and only here: the curves come from the publications (the
snapshots a release froze, ``visible_view``), never from the live submission rows, so no
view can show what the results page does not. On top of what a cohort showed, the
decisions taken since apply at once, on every view alike:

- a result withdrawn or invalidated after finalization leaves every curve; its history
  keeps "withdrawn on DATE" without points;
- a point the chair invalidated is gone from every curve of its result, in every cohort;
- a rejected (or withdrawn-in-review) result is nowhere;
- a provisional result carries "peer review pending" (``peer_review_pending``, and the
  footnote);
- a result's disclosures are shown to a visitor only where the submission page shows
  them (rules §11.9: not during peer review), by the one visibility rule.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.accounts.services.accounts import Principal
from app.core.cohorts import Cohort
from app.core.regions import Offline
from app.core.views import Timestamp
from app.db.models import Publication, Submission
from app.publishing.domain.snapshot import PublishedPoint
from app.results.domain.pareto import step_curve
from app.results.services.results import (
    DEFAULT_STATUSES,
    PRELIMINARY_FOOTNOTE,
    STATUSES,
    QueryProblem,
    VisibleCurve,
    cohort_was_released,
    list_cohorts,
    visible_curves,
)
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.visibility import access_to

ARCHIVED = frozenset({"withdrawn", "invalidated"})


class PublicCurve(BaseModel):
    """One published curve as every public view shows it."""

    id: int = Field(description="the published curve's id (a version of a result's curve)")
    submission: str
    organization: str
    system: str
    system_dir: str
    benchmark_model: str
    dataset: str | None
    is_agentic: bool
    x_metric: str = Field(description="tps_per_user, or e2e_avg_interactivity (agentic)")
    status: str = Field(description="verified, provisional or unverified")
    peer_review_pending: bool = Field(description="a provisional result: preliminary")
    result_id: str | None
    published_in: str = Field(description="the cohort the result first appeared in")
    points: list[PublishedPoint] = Field(description="the active points, as published")
    step_line: list[list[float]]

    @property
    def label(self) -> str:
        return self.status + (" · peer review pending" if self.peer_review_pending else "")


def checked_cohort(session: Session, cohort: str | None) -> str | None:
    """*cohort* if it names a released cohort (None: the current record); refused,
    naming the parameter, otherwise."""
    if cohort is None or not cohort.strip():
        return None
    cohort = cohort.strip()
    if Cohort.parse(cohort) is None:
        raise QueryProblem("cohort", f"{cohort!r} is not a cohort id (e.g. 2026-12-C0)")
    if not cohort_was_released(session, cohort):
        released = ", ".join(c.id for c in list_cohorts(session)) or "none yet"
        raise QueryProblem(
            "cohort", f"no cohort {cohort!r} has been published (published: {released})"
        )
    return cohort


def checked_statuses(statuses: Iterable[str]) -> tuple[str, ...]:
    """The statuses asked for, with the results page's default (unverified only when
    asked for)."""
    chosen = tuple(statuses) or DEFAULT_STATUSES
    bad = [s for s in chosen if s not in STATUSES]
    if bad:
        raise QueryProblem("status", f"unknown status {bad[0]!r}; use {', '.join(STATUSES)}")
    return chosen


def checked_name(field: str, value: str | None) -> str | None:
    """A name parameter (organisation, system): None when absent; refused when blank."""
    if value is None:
        return None
    if not value.strip():
        raise QueryProblem(field, f"{field} must not be empty")
    return value.strip()


def _public(curve: VisibleCurve, invalidated: frozenset[str] = frozenset()) -> PublicCurve:
    snapshot = curve.snapshot
    points = [p for p in snapshot.points if p.dir not in invalidated]
    step_line = snapshot.step_line
    if len(points) != len(snapshot.points):  # drawn again without the invalidated ones
        x_key = snapshot.x_metric
        plotted = [
            (getattr(p, x_key), p.system_tps)
            for p in points
            if p.offline != Offline.DEDICATED and getattr(p, x_key) is not None
        ]
        step_line = [list(v) for v in step_curve(plotted).line]
    return PublicCurve(
        id=curve.id,
        submission=curve.submission,
        organization=curve.organization,
        system=curve.system_name,
        system_dir=curve.system_dir,
        benchmark_model=curve.benchmark_model,
        dataset=curve.dataset,
        is_agentic=curve.is_agentic,
        x_metric=snapshot.x_metric,
        status=curve.status,
        peer_review_pending=curve.status == "provisional",
        result_id=curve.result_id,
        published_in=curve.published_in,
        points=points,
        step_line=step_line,
    )


def public_curves(
    session: Session, cohort: str | None = None, statuses: Iterable[str] = DEFAULT_STATUSES
) -> list[PublicCurve]:
    """The active curves of the record as of *cohort* (None: now), of *statuses*."""
    wanted = set(statuses)
    return [_public(c) for c in visible_curves(session, cohort) if c.status in wanted]


def footnotes(curves: Iterable[PublicCurve]) -> list[str]:
    """The footnotes a view of *curves* carries (the results page's wording)."""
    return [PRELIMINARY_FOOTNOTE] if any(c.peer_review_pending for c in curves) else []


class Archived(BaseModel):
    """A result that left the record after it was shown: withdrawn or invalidated."""

    submission: str
    status: str = Field(description="withdrawn or invalidated")
    since: Timestamp = Field(description="when it left the active curves")
    reason: str | None


class Present(BaseModel):
    """What the current record decides about each published result, applied to every
    cohort's view of it: a result that left, and the points the chair invalidated."""

    archived: dict[str, Archived]
    invalidated: dict[str, frozenset[str]]  # submission → point folders


def present_decisions(session: Session) -> Present:
    archived: dict[str, Archived] = {}
    invalidated: dict[str, frozenset[str]] = {}
    for curve in visible_curves(session, None):
        snapshot = curve.snapshot
        if snapshot.invalidated_points:
            gone = frozenset(p.dir for p in snapshot.invalidated_points)
            invalidated[curve.submission] = invalidated.get(curve.submission, frozenset()) | gone
        if curve.status in ARCHIVED and curve.submission not in archived:
            archived[curve.submission] = Archived(
                submission=curve.submission, status=curve.status, since=_since(session, curve),
                reason=None,
            )  # fmt: skip
    if archived:
        for publication in session.scalars(
            select(Publication)
            .join(Submission, Publication.submission_id == Submission.id)
            .where(Submission.public_id.in_(archived), Publication.status.in_(ARCHIVED))
            .options(selectinload(Publication.submission))
        ):
            entry = archived[publication.submission.public_id]
            entry.reason = publication.description or entry.reason
    return Present(archived=archived, invalidated=invalidated)


def _since(session: Session, curve: VisibleCurve) -> dt.datetime:
    published_at = session.scalar(
        select(Publication.published_at)
        .join(Submission, Publication.submission_id == Submission.id)
        .where(Submission.public_id == curve.submission, Publication.status == curve.status)
        .order_by(Publication.id.desc())
        .limit(1)
    )
    assert published_at is not None  # the archive entry the curve was read from
    return published_at


def in_present(curve: VisibleCurve, present: Present) -> PublicCurve:
    """A curve a cohort showed, with what has been decided since applied to it."""
    return _public(curve, present.invalidated.get(curve.submission, frozenset()))


def public_disclosures(
    session: Session,
    settings: Settings,
    who: Principal | None,
    submission_id: str,
    system_dir: str,
) -> dict[str, str] | None:
    """A result's disclosures (the system description, software, counts, power) as the
    visitor may see them: None where the submission page withholds them (peer review
    pending, rules §11.9)."""
    submission = session.scalar(
        select(Submission)
        .where(Submission.public_id == submission_id)
        .options(selectinload(Submission.systems))
    )
    if submission is None or access_to(session, who, submission) < Access.FULL:
        return None
    system = next((s for s in submission.systems if s.dir_name == system_dir), None)
    fields = system_disclosures(settings, submission).get(system_dir, {}).get("fields", {})

    def shown(value: object) -> str | None:
        return None if value is None or value == "" else str(value)

    facts = {
        "Accelerator": shown(system.accelerator_model) if system else None,
        "Accelerators": shown(system.accelerator_count) if system else None,
        "Nodes": shown(system.node_count) if system else None,
        "Provisioned power (kW)": shown(system.provisioned_power_kw) if system else None,
        "Division": shown(system.division) if system else None,
        "Availability": shown(system.availability) if system else None,
        **fields,
    }
    return {k: v for k, v in facts.items() if v is not None}
