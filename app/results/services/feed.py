"""What happened to the public record, newest first (issue 50, item 3): each cohort
released, and each result that left the record (withdrawn, invalidated, or a Preview
removed at its expiry), from the record's one read path, as a visitor sees it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Publication, Submission
from app.publishing.domain.ledger import LEAVING
from app.publishing.services.ledger import entries_about
from app.results.services.public import (
    ARCHIVED,
    REMOVED,
    QueryProblem,
    list_cohorts,
    result_ref,
    visible_curves,
)
from app.results.services.results import list_benchmarks

SAID = {
    "withdrawn": "withdrawn",
    "invalidated": "invalidated",
    REMOVED: "removed: its Preview window ended without an Available result (rules §11.10)",
}


@dataclass(frozen=True)
class RecordEvent:
    key: str  # unique and stable: the entry's id
    kind: str  # release, withdrawn, invalidated, removed
    at: dt.datetime
    title: str
    summary: str
    path: str  # where it is shown: the cohort's results, or the result's report
    ledger: str  # the ledger entry's subject (release/<cohort>, <kind>/<submission>)
    entry: str | None = None  # where its signed ledger entry is


def record_events(session: Session, benchmark: str | None = None) -> list[RecordEvent]:
    """The record's events, newest first; of one *benchmark*'s results where given."""
    if benchmark is not None and benchmark not in {b.id for b in list_benchmarks(session)}:
        raise QueryProblem("benchmark", f"no published results of benchmark {benchmark!r}")
    events = []
    for cohort in list_cohorts(session):
        query = urlencode({"cohort": cohort.id, **({"benchmark": benchmark} if benchmark else {})})
        events.append(
            RecordEvent(
                key=f"release/{cohort.id}",
                kind="release",
                at=cohort.published_at,
                title=f"Cohort {cohort.id} released",
                summary=f"The record of cohort {cohort.id} ({cohort.date}) is published: "
                f"{cohort.publications} version(s) of results joined it.",
                path=f"/results?{query}",
                ledger=f"release/{cohort.id}",
            )
        )
    left = [
        c
        for c in visible_curves(session, None)
        if (c.status in ARCHIVED or c.status == REMOVED)
        and (benchmark is None or c.benchmark_model == benchmark)
    ]
    written = _leaving_versions(session, {c.submission for c in left})
    for curve in left:
        at, why = written.get((curve.submission, curve.status), (None, None))
        if at is None:
            continue
        ref = result_ref(curve.result_id, curve.id)
        events.append(
            RecordEvent(
                key=f"{curve.status}/{curve.submission}/{curve.system_dir}/{curve.benchmark_model}",
                kind=curve.status,
                at=at,
                title=f"{curve.organization}, {curve.system_name} ({curve.benchmark_model}): "
                f"{curve.status}",
                summary=f"{curve.result_name} {ref} {SAID[curve.status]}"
                + (f". {why}" if why else "."),
                path=f"/results/{ref}",
                ledger=f"{LEAVING[curve.status]}/{curve.submission}",
            )
        )
    signed = entries_about(session, {e.ledger for e in events})
    events = [
        replace(e, entry=f"/api/v1/record/entries/{signed[e.ledger].seq}")
        if e.ledger in signed else e
        for e in events
    ]  # fmt: skip
    return sorted(events, key=lambda e: (e.at, e.key), reverse=True)


def _leaving_versions(
    session: Session, submissions: set[str]
) -> dict[tuple[str, str], tuple[dt.datetime, str | None]]:
    """When each result's leaving version was written, and why (the version's own
    description, which the cohort's record shows too)."""
    if not submissions:
        return {}
    rows = session.execute(
        select(
            Submission.public_id,
            Publication.status,
            Publication.published_at,
            Publication.description,
        )  # fmt: skip
        .join(Submission, Submission.id == Publication.submission_id)
        .where(Submission.public_id.in_(submissions), Publication.in_record())
        .order_by(Publication.id)
    )
    found: dict[tuple[str, str], tuple[dt.datetime, str | None]] = {}
    for public_id, status, at, why in rows:
        found.setdefault((public_id, str(status)), (at, why))  # the first of that status
    return found
