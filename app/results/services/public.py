"""The public record: what is public, as of a cohort, for one visitor.

Every public surface reads here, and only here (an import-linter contract holds the
results page, compare, history, the agentic chart, the home page, the embeds and the
cohort export to it): the curves come from the publications (the snapshots a release
froze, :func:`published_record`), never from the live submission rows, so no view can
show what another does not. On top of what a cohort showed, the decisions taken since
apply at once, on every view alike:

- a result withdrawn or invalidated after finalization leaves every curve: it keeps its
  status (and history its "withdrawn on DATE"), never its points;
- a point the chair invalidated is gone from every curve of its result, in every cohort;
- a rejected (or withdrawn-in-review) result is nowhere;
- a provisional result carries "peer review pending" (``peer_review_pending``, and the
  footnote);
- a result's disclosures are shown to a visitor only where the submission page shows
  them (rules §11.9: not during peer review), by the one visibility rule.

A later status (provisional to verified) is a new version: it shows from its own cohort
on, and what an earlier cohort showed of the result stays as it was.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, Field
from sqlalchemy import String, Text, cast, func, select, type_coerce
from sqlalchemy.orm import Session, selectinload

from app.accounts.services.accounts import Principal
from app.core.caching import remember
from app.core.cohorts import Cohort
from app.core.divisions import Availability, availability_of, division_of
from app.core.figures import figure
from app.core.pareto import step_curve
from app.core.refusals import Kind, Refused
from app.core.regions import Offline
from app.core.views import AS_STORED, Timestamp
from app.db.models import (
    CohortRelease,
    Publication,
    PublishedCurve,
    RequestLogRow,
    Submission,
)
from app.publishing.domain.point_table import PackedCurve, packed_now, packed_or_packing
from app.publishing.domain.snapshot import (
    CurveSnapshot,
    InvalidatedPoint,
    PublishedPoint,
    read_snapshot,
    read_stored_snapshot,
)
from app.publishing.domain.standing import (
    Contender,
    SystemIdentity,
    result_name,
    superseded,
    tags_of,
)
from app.publishing.services.cohorts import PublicationView, publication_view
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.visibility import access_to

STATUSES = ("verified", "provisional", "unverified")
DEFAULT_STATUSES = ("verified", "provisional")  # unverified is off by default
PRELIMINARY_FOOTNOTE = (
    "Results tagged \u201cpeer review pending\u201d are preliminary and subject to change "
    "until peer review completes."
)


def peer_review_pending(status: str) -> bool:
    """A provisional result is preliminary until peer review completes (rules §11.2): the
    one rule every chart, table, export, embed and API field states it by."""
    return status == "provisional"


@dataclass(frozen=True)
class VisibleCurve:
    """A published curve as buyers see it: plain data, safe to keep between requests."""

    id: int
    submission: str
    status: str
    published_in: str
    result_id: str | None
    benchmark_model: str
    dataset: str | None
    is_agentic: bool
    system_name: str
    organization: str
    division: str | None
    availability: str | None
    accelerator_model: str | None
    accelerator_count: int | None
    provisioned_power_kw: float | None
    system_dir: str
    stored: bytes  # the snapshot as JSON: a view of thousands of curves keeps few objects
    # The status this version was published with (``status`` is the one decided since).
    published_status: str = ""
    # Its standing (app.publishing.domain.standing): the scenario, a Preview's committed
    # date, power partly from the rules' defaults, the cohort it became verified in, the
    # cohort of the newer result of the same system that supersedes it, and its tags.
    scenario: str | None = None
    available_by: dt.date | None = None
    power_estimated: bool = False
    verified_in: str | None = None
    version_in: str = ""  # the cohort this version joined
    superseded_by: str | None = None
    tags: tuple[str, ...] = ()
    # Disclosed facets buyers filter on: precision, accelerator_memory, interconnect,
    # serving_software, nodes (app.publishing.domain.facts).
    facts: Mapping[str, str] = field(default_factory=dict)

    @property
    def result_name(self) -> str:
        """How the rules name the result: "MLPerf Endpoints Serviced", "... RDI"."""
        return result_name(self.division, self.availability)

    @property
    def current(self) -> bool:
        """Not superseded by a newer finalized result of the same system (rules §11.8)."""
        return self.superseded_by is None

    @property
    def snapshot(self) -> CurveSnapshot:
        """The published curve, read from its JSON (the ones drawn lately are kept)."""
        kept = _SNAPSHOTS.get(self.id)
        if kept is None or kept[0] is not self.stored:
            read = CurveSnapshot.model_validate_json(self.stored, context=AS_STORED)
            kept = remember(_SNAPSHOTS, _SNAPSHOTS_SIZE, self.id, (self.stored, read))
        return kept[1]


# Curve id → (its JSON, read): a published curve never changes; the JSON tells one
# database's curve from another's with the same id.
_SNAPSHOTS: dict[int, tuple[bytes, CurveSnapshot]] = {}
_SNAPSHOTS_SIZE = 1024


def result_ref(result_id: str | None, curve_id: int) -> str:
    """A result's reference (its report's address): its result id (rules §9.7), or for a
    result that has none (unverified) its curve's id."""
    return result_id or str(curve_id)


class QueryProblem(Refused):
    """A results query value that cannot be used; *field* names the parameter."""

    def __init__(self, field: str, message: str, kind: Kind = Kind.INVALID) -> None:
        super().__init__("bad-query" if kind == Kind.INVALID else "not-found", message, kind,
                         field=field)  # fmt: skip
        self.field = field


class CohortView(BaseModel):
    id: str = Field(examples=["2026-12-C0"])
    date: dt.date | None = Field(description="the cohort's Wednesday")
    published_at: Timestamp = Field(description="when the chair released it")
    publications: int = Field(description="the versions of results its record gained")


def list_cohorts(session: Session) -> list[CohortView]:
    """The released cohorts, newest first, with the versions each one's record gained."""
    releases = session.execute(
        select(func.max(CohortRelease.id), func.count(CohortRelease.id))
    ).one()
    key = (*record_version(session), *releases)
    cached = _COHORTS.get(key)
    if cached is not None:
        return list(cached)
    counts = dict(
        session.execute(
            select(Publication.cohort, func.count(Publication.id))
            .where(Publication.in_record())
            .group_by(Publication.cohort)
        ).all()
    )
    out = []
    for release in session.scalars(select(CohortRelease).order_by(CohortRelease.cohort.desc())):
        cohort = Cohort.parse(release.cohort)
        out.append(
            CohortView(
                id=release.cohort,
                date=cohort.date if cohort else None,
                published_at=release.published_at,
                publications=counts.get(release.cohort, 0),
            )
        )
    remember(_COHORTS, _RECORDS_SIZE, key, out)
    return list(out)


_COHORTS: dict[RecordKey, list[CohortView]] = {}


def record_version(session: Session) -> tuple[str, int, int]:
    """What names the public record as it stands: the database, its newest publication
    and how many have been removed. Versions are only ever added (append-only) or removed
    from the record, never changed: any change moves one of the two, and both are read
    from an index, whatever the record's size."""
    newest, removed = session.execute(
        select(
            func.max(Publication.id),
            select(func.count(Publication.id))
            .where(Publication.removed_at.is_not(None))
            .scalar_subquery(),
        )
    ).one()
    return str(session.get_bind().engine.url), newest or 0, removed or 0


def latest_cohort(session: Session) -> str | None:
    """The latest cohort the chair released."""
    return session.scalar(select(func.max(CohortRelease.cohort)))


def cohort_was_released(session: Session, cohort: str) -> bool:
    return (
        session.scalar(select(CohortRelease.id).where(CohortRelease.cohort == cohort)) is not None
    )


RecordKey = tuple[str | int, ...]


@dataclass(frozen=True)
class PublishedRecord:
    """The record as of a cohort: each submission's latest publication up to it, as that
    cohort showed it; ``key`` names it."""

    key: RecordKey
    curves: list[VisibleCurve]
    packed: list[PackedCurve]  # each curve's points as numbers (the snapshot: curve.snapshot)


# Publications never change once written, so what a cohort shows can be kept until a newer
# publication appears; the key carries the newest publication id up to the cohort.
_RECORDS: dict[RecordKey, PublishedRecord] = {}
_RECORDS_SIZE = 16


def published_record(session: Session, cohort: str | None) -> PublishedRecord:
    """The single visibility rule: each submission's latest version up to *cohort*, as
    that cohort showed it, with what has been decided since applied (None: the latest
    version of every submission). A result withdrawn or invalidated since carries that
    status and no points; a point the chair invalidated since is gone from its curve."""
    shown = _as_published(session, cohort)
    if cohort is None:
        return shown  # the latest versions carry every decision already
    now = _as_published(session, None)
    key = (*shown.key, *now.key[2:])
    cached = _RECORDS.get(key)
    if cached is not None:
        return cached
    return remember(_RECORDS, _RECORDS_SIZE, key, _with_decisions(shown, now, key))


@dataclass(frozen=True)
class Decisions:
    """What has been decided since a version was published, read off the latest versions:
    each result's status now, and the points the chair invalidated, by curve."""

    status: dict[str, str]
    invalidated: dict[tuple[str, str, str], list[InvalidatedPoint]]

    @classmethod
    def of(cls, now: PublishedRecord) -> Decisions:
        invalidated = {
            (curve.submission, curve.system_dir, curve.benchmark_model): (
                curve.snapshot.invalidated_points
            )
            for curve, packed in zip(now.curves, now.packed, strict=True)
            if packed.invalidated
        }
        return cls({c.submission: c.status for c in now.curves}, invalidated)

    def status_of(self, submission: str, published: str) -> str:
        """Only a result's leaving applies at once; a later status (provisional to
        verified) is a new version that shows from its own cohort on."""
        later = self.status.get(submission, published)
        return later if later in ARCHIVED else published

    def tagged(self, submission: str, system_dir: str, benchmark: str) -> list[InvalidatedPoint]:
        return self.invalidated.get((submission, system_dir, benchmark), [])

    def gone(
        self, submission: str, status: str, snapshot: CurveSnapshot, benchmark: str
    ) -> frozenset[str]:
        """The points of *snapshot* no view shows any more: all of a result that left
        the record, else the ones invalidated since."""
        if status in ARCHIVED:
            return frozenset(p.dir for p in snapshot.points)
        return frozenset(p.dir for p in self.tagged(submission, snapshot.system_dir, benchmark))


def _with_decisions(
    shown: PublishedRecord, now: PublishedRecord, key: RecordKey
) -> PublishedRecord:
    decided = Decisions.of(now)
    curves, packed = [], []
    for curve, points in zip(shown.curves, shown.packed, strict=True):
        status = decided.status_of(curve.submission, curve.status)
        tagged = decided.tagged(curve.submission, curve.system_dir, curve.benchmark_model)
        if status != curve.status or tagged:  # else nothing decided since touches it
            snapshot = curve.snapshot
            gone = decided.gone(curve.submission, status, snapshot, curve.benchmark_model)
            if status != curve.status or any(p.dir in gone for p in snapshot.points):
                # The archive keeps an invalidated point tagged, with the chair's reason.
                known = {p.dir for p in snapshot.invalidated_points}
                snapshot = without_points(snapshot, gone).model_copy(
                    update={
                        "invalidated_points": [
                            *snapshot.invalidated_points,
                            *(p for p in tagged if p.dir not in known),
                        ]
                    }
                )
                curve = replace(curve, status=status, stored=snapshot.model_dump_json().encode())
                points = packed_now(snapshot)
        curves.append(curve)
        packed.append(points)
    return PublishedRecord(key, with_standing(curves), packed)


def _official(found: StrEnum | None, written: str | None) -> str | None:
    """A declaration in the official spelling; one the checker did not know, as written
    (publications before the spelling was kept)."""
    return found.value if found is not None else written


_AVAILABILITIES = frozenset(a.value for a in Availability)


def availability_filed_as(availability: str | None) -> str:
    """The publication status a result is filtered as: its own, or, where it is not one
    of the three (never since the checker requires one), Available."""
    return availability if availability in _AVAILABILITIES else Availability.AVAILABLE.value


@functools.lru_cache(maxsize=262_144)  # asked of every curve of a record, every time
def _identity(*named: str | None) -> SystemIdentity:
    return SystemIdentity.of(*named)  # type: ignore[arg-type]


def with_standing(curves: list[VisibleCurve]) -> list[VisibleCurve]:
    """*curves* each with the newer result that supersedes it and its tags: worked out
    over the record they are shown in (a cohort's, or the current one)."""
    marks = superseded(
        [
            Contender(
                _identity(
                    c.organization,
                    c.system_name,
                    c.benchmark_model,
                    c.dataset,
                    c.division,
                    c.scenario,
                ),
                c.status == "verified",
                c.verified_in or c.published_in,
            )  # fmt: skip
            for c in curves
        ]
    )
    out = []
    known: dict[tuple[Any, ...], tuple[str, ...]] = {}  # most curves share their tags
    for c, mark in zip(curves, marks, strict=True):
        facts = (c.status, c.availability, c.available_by, c.power_estimated, mark)
        tags = known.get(facts)
        if tags is None:
            tags = known[facts] = tuple(
                tags_of(
                    status=c.status,
                    availability=c.availability,
                    available_by=c.available_by,
                    power_estimated=c.power_estimated,
                    superseded_by=mark,
                )
            )
        if mark != c.superseded_by or tags != c.tags:
            # A record holds thousands: built directly, dataclasses.replace is slower.
            c = VisibleCurve(**{**c.__dict__, "superseded_by": mark, "tags": tags})
        out.append(c)
    return out


def cohort_versions(session: Session, cohort: str) -> list[PublicationView]:
    """The versions a released cohort's record gained, in the order they were written,
    each counting the points it still shows (the decisions taken since apply)."""
    decided = Decisions.of(_as_published(session, None))
    rows = session.scalars(
        select(Publication)
        .where(Publication.cohort == cohort, Publication.in_record())
        .options(selectinload(Publication.curves), selectinload(Publication.submission))
        .order_by(Publication.id)
    ).all()

    def view(p: Publication) -> PublicationView:
        submission = p.submission.public_id
        status = decided.status_of(submission, p.status)

        def shown(curve: PublishedCurve) -> int:
            snapshot = read_snapshot(curve.snapshot_version, curve.data)
            gone = decided.gone(submission, status, snapshot, curve.benchmark_model)
            return sum(point.dir not in gone for point in snapshot.points)

        return publication_view(p, shown)

    return [view(p) for p in rows]


def _shown(status: str, snapshot: CurveSnapshot) -> CurveSnapshot:
    """A result that left the record (withdrawn, invalidated, a Preview removed) is on no
    curve: its entry keeps its status and reason, never its points."""
    if (status in ARCHIVED or status == REMOVED) and snapshot.points:
        return without_points(snapshot, frozenset(p.dir for p in snapshot.points))
    return snapshot


def without_points(snapshot: CurveSnapshot, gone: frozenset[str]) -> CurveSnapshot:
    """*snapshot* without the points *gone*, its step line and frontier drawn again."""
    points = [p for p in snapshot.points if p.dir not in gone]
    plotted = [
        (p.per_user, p.system_tps)
        for p in points
        if p.offline != Offline.DEDICATED and p.per_user is not None
    ]
    steps = step_curve(plotted)
    dedicated = next((p for p in points if p.offline == Offline.DEDICATED), None)
    return snapshot.model_copy(
        update={
            "points": points,
            "step_line": [list(v) for v in steps.line],
            "frontier": [list(v) for v in steps.frontier],
            "offline_ceiling": snapshot.offline_ceiling if dedicated is not None else None,
            "elected_offline": snapshot.elected_offline
            if snapshot.elected_offline not in gone
            else None,
        }
    )


_CURVE_COLUMNS = (
    PublishedCurve.id, PublishedCurve.publication_id, PublishedCurve.result_id,
    PublishedCurve.benchmark_model, PublishedCurve.dataset, PublishedCurve.is_agentic,
    PublishedCurve.system_name, PublishedCurve.organization, PublishedCurve.division,
    PublishedCurve.availability, PublishedCurve.accelerator_model,
    PublishedCurve.accelerator_count, PublishedCurve.provisioned_power_kw,
    PublishedCurve.scenario, PublishedCurve.available_by, PublishedCurve.power_estimated,
    PublishedCurve.facts, PublishedCurve.snapshot_version,
    cast(PublishedCurve.data, Text).label("text"),
    PublishedCurve.point_table, Submission.public_id, Publication.cohort,
    type_coerce(Publication.status, String).label("status"),  # as stored: no enum per row
)  # fmt: skip

# A published curve never changes once written (nor does its version's status): each is
# read from the database once, as every view shows it, and a record read again after a
# publication reads only the curves that publication added. By database, then by id (a
# database restored from a backup under a running portal needs the portal restarted).
_WRITTEN: dict[str, dict[int, tuple[VisibleCurve, PackedCurve]]] = {}
_WRITTEN_SIZE = 250_000

_PARAMETERS = 10_000  # the most ids one statement binds


def _curves_of(
    session: Session, database: str, publications: list[int]
) -> tuple[list[tuple[int, int]], dict[int, tuple[VisibleCurve, PackedCurve]]]:
    """The curves of *publications*, (publication, curve id), by publication in the order
    given, then by id; and the written forms by id, each of them among them."""
    written = _WRITTEN.setdefault(database, {})
    ids: list[tuple[int, int]] = []
    for start in range(0, len(publications), _PARAMETERS):
        chunk = publications[start : start + _PARAMETERS]
        ids += [
            (publication, curve)
            for publication, curve in session.execute(
                select(PublishedCurve.publication_id, PublishedCurve.id)
                .where(PublishedCurve.publication_id.in_(chunk))
                .order_by(PublishedCurve.publication_id, PublishedCurve.id)
            )
        ]
    unread = [curve for _p, curve in ids if curve not in written]
    if len(written) + len(unread) > _WRITTEN_SIZE:
        _WRITTEN[database] = written = {}  # a fresh one: a view being built keeps the old
        unread = [curve for _p, curve in ids]
    for start in range(0, len(unread), _PARAMETERS):
        for row in session.execute(
            select(*_CURVE_COLUMNS)
            .join(Publication, Publication.id == PublishedCurve.publication_id)
            .join(Submission, Submission.id == Publication.submission_id)
            .where(PublishedCurve.id.in_(unread[start : start + _PARAMETERS]))
        ):
            written[row.id] = _as_written(row)
    order = {p: n for n, p in enumerate(publications)}
    ids.sort(key=lambda pair: order[pair[0]])  # stable: by id within a publication
    return ids, written


def _as_written(c: Any) -> tuple[VisibleCurve, PackedCurve]:
    """A curve's row as every view shows it (its cohort facts and standing left blank)."""
    text = c.text
    if c.status in ARCHIVED or c.status == REMOVED:  # its entry shows no points
        shown = _shown(c.status, read_stored_snapshot(c.snapshot_version, text))
        text = shown.model_dump_json()
        points = packed_now(shown)
    else:
        points = packed_or_packing(
            c.point_table, lambda: read_stored_snapshot(c.snapshot_version, text)
        )
    curve = VisibleCurve(
        id=c.id,
        submission=c.public_id,
        status=c.status,
        published_in="",
        result_id=c.result_id,
        benchmark_model=c.benchmark_model,
        dataset=c.dataset,
        is_agentic=c.is_agentic,
        system_name=c.system_name,
        organization=c.organization,
        division=_official(division_of(c.division), c.division),
        availability=_official(availability_of(c.availability, c.division), c.availability),
        accelerator_model=c.accelerator_model,
        accelerator_count=c.accelerator_count,
        provisioned_power_kw=c.provisioned_power_kw,
        system_dir=points.system_dir,
        stored=text.encode(),
        published_status=c.status,
        scenario=c.scenario,
        available_by=c.available_by,
        power_estimated=c.power_estimated,
        version_in=c.cohort,
        facts=c.facts or {},
    )
    return curve, points


def _as_published(session: Session, cohort: str | None) -> PublishedRecord:
    """Each submission's latest version up to *cohort* exactly as it was published."""
    scope = Publication.in_record()
    if cohort is not None:
        scope = scope & (Publication.cohort <= cohort)
    # The record's version names every view of it (a change anywhere makes each cohort's
    # view anew; changes are rare, reads are not); the database is part of it, since one
    # process may serve more than one.
    database, newest, removed = record_version(session)
    key = (database, cohort or "*", newest, removed)
    cached = _RECORDS.get(key)
    if cached is not None:
        return cached
    # Columns, not ORM objects: a record of 20,000 curves is read on a cold start, and
    # only the latest version of each result needs its curves.
    versions = session.execute(
        select(
            Publication.id,
            Publication.submission_id,
            Publication.cohort,
            type_coerce(Publication.status, String).label("status"),
        )
        .where(scope)
        .order_by(Publication.submission_id, Publication.cohort.desc(), Publication.id.desc())
    ).all()
    latest: dict[int, Any] = {}  # submission → its latest version
    first_in: dict[int, str] = {}  # the cohort each result first appeared in
    verified_in: dict[int, str] = {}  # ... and first appeared as verified in
    for version in versions:  # newest first: the last one seen is the earliest
        latest.setdefault(version.submission_id, version)
        first_in[version.submission_id] = version.cohort
        if version.status == "verified":
            verified_in[version.submission_id] = version.cohort
    by_id = {v.id: v.submission_id for v in latest.values()}
    visible, packed = [], []
    pairs, written = _curves_of(session, key[0], list(by_id))
    for publication, curve_id in pairs:
        curve, points = written[curve_id]
        submission = by_id[publication]
        facts = (first_in[submission], verified_in.get(submission))
        if (curve.published_in, curve.verified_in) != facts:
            curve = VisibleCurve(
                **{**curve.__dict__, "published_in": facts[0], "verified_in": facts[1]}
            )
        visible.append(curve)
        packed.append(points)
    visible = with_standing(visible)
    for (_publication, curve_id), curve in zip(pairs, visible, strict=True):
        written[curve_id] = (curve, written[curve_id][1])  # the next view of the scope reuses it
    record = PublishedRecord(key, visible, packed)
    return remember(_RECORDS, _RECORDS_SIZE, key, record)


@dataclass(frozen=True)
class PublishedArchive:
    sha256: str
    suffix: str  # .tar.gz or .zip, as it was uploaded
    bundle_root: str | None  # the bundle's folder inside it: <organisation>/<submission id>


def published_archive(session: Session, public_id: str) -> PublishedArchive | None:
    """The archive of a published submission (the caller asks the visibility rule whether
    the visitor may have it)."""
    submission = session.scalar(
        select(Submission)
        .join(Publication, Publication.submission_id == Submission.id)
        .where(Submission.public_id == public_id, Publication.in_record())
        .limit(1)
    )
    if submission is None or submission.archive is None:
        return None
    suffix = ".zip" if submission.archive_format == "zip" else ".tar.gz"
    return PublishedArchive(submission.archive.sha256, suffix, submission.bundle_root)


def visible_curves(session: Session, cohort: str | None) -> list[VisibleCurve]:
    """The curves the record shows as of *cohort* (None: now)."""
    return published_record(session, cohort).curves


def request_logs(session: Session, ids: Iterable[int]) -> dict[int, bytes]:
    """The stored request records *ids* (the ones publications froze), by id."""
    return dict(
        session.execute(
            select(RequestLogRow.id, RequestLogRow.data).where(RequestLogRow.id.in_(set(ids)))
        ).all()
    )


ARCHIVED = frozenset({"withdrawn", "invalidated"})
# A Preview that expired: removed from the curves and the archive's listings, while what
# earlier cohorts showed of it stays (rules §11.10).
REMOVED = "removed"


STANDING_TAGS = (
    "the rules' tags, in their wording: peer review pending, Preview \u2014 Available by "
    "DATE, MLC Estimated Power, Invalidated, Withdrawn, Superseded by COHORT"
)


def standing_fields(curve: VisibleCurve) -> dict[str, Any]:
    """A curve's standing as every public model carries it (the same names everywhere)."""
    return {
        "division": curve.division,
        "availability": curve.availability,
        "scenario": curve.scenario,
        "result_name": curve.result_name,
        "tags": list(curve.tags),
        "available_by": curve.available_by,
        "power_estimated": curve.power_estimated,
        "superseded_by": curve.superseded_by,
    }


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
    division: str | None = Field(description="Standardized, Serviced or RDI")
    availability: str | None = Field(description="Available, Preview or RDI")
    scenario: str | None = Field(description="CoP or CoN (rules §2.1); null: not declared")
    result_name: str = Field(description='as the rules name it: "MLPerf Endpoints RDI", …')
    tags: list[str] = Field(description=STANDING_TAGS)
    available_by: dt.date | None = Field(description="a Preview result's committed date")
    power_estimated: bool = Field(description="its power comes partly from the rules' defaults")
    superseded_by: str | None = Field(description="the cohort that superseded it (§11.8)")
    accelerator_model: str | None = Field(default=None, description="as the record has it")
    accelerator_count: int | None = Field(default=None, description="as the record has it")
    provisioned_power_kw: float | None = Field(default=None, description="as the record has it")
    points: list[PublishedPoint] = Field(description="the active points, as published")
    step_line: list[list[float]]

    def record_facts(self) -> dict[str, str]:
        """What the public record says of the system, whoever asks (the ranking shows it):
        its accelerators, provisioned power, division and publication status."""
        facts = {
            "Accelerator": self.accelerator_model,
            "Accelerators": self.accelerator_count,
            "Provisioned power (kW)": (
                figure(self.provisioned_power_kw, "kw") if self.provisioned_power_kw else None
            ),
            "Division": self.division,
            "Availability": self.availability,
        }
        return {k: str(v) for k, v in facts.items() if v is not None and v != ""}

    @property
    def label(self) -> str:
        """Its status as a chart's legend says it, with a publication status other than
        Available beside it."""
        label = self.status + (" · peer review pending" if self.peer_review_pending else "")
        if self.availability not in (None, Availability.AVAILABLE):
            label += f" · {self.availability}"
        return label


class Named(Protocol):
    @property
    def result_name(self) -> str: ...


def result_names(curves: Iterable[Named]) -> str:
    """The results of a view named as the rules name them ("MLPerf Endpoints",
    "MLPerf Endpoints RDI", …), each once: what a caption starts with."""
    names = list(dict.fromkeys(c.result_name for c in curves))
    return " / ".join(names) or "MLPerf Endpoints"


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


def public_curve(curve: VisibleCurve) -> PublicCurve:
    """A curve of the record in the one shape every public view shows (the record has
    applied the decisions taken since)."""
    snapshot = curve.snapshot
    points, step_line = snapshot.points, snapshot.step_line
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
        peer_review_pending=peer_review_pending(curve.status),
        result_id=curve.result_id,
        published_in=curve.published_in,
        **standing_fields(curve),
        accelerator_model=curve.accelerator_model,
        accelerator_count=curve.accelerator_count,
        provisioned_power_kw=curve.provisioned_power_kw,
        points=list(points),
        step_line=step_line,
    )


def public_curves(
    session: Session, cohort: str | None = None, statuses: Iterable[str] = DEFAULT_STATUSES
) -> list[PublicCurve]:
    """The active curves of the record as of *cohort* (None: now), of *statuses*."""
    wanted = set(statuses)
    return [public_curve(c) for c in visible_curves(session, cohort) if c.status in wanted]


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
    """The results that left the record since they were shown, by submission."""

    archived: dict[str, Archived]


def present_decisions(session: Session) -> Present:
    archived: dict[str, Archived] = {}
    for curve in visible_curves(session, None):
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
    return Present(archived=archived)


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
    disclosed = system_disclosures(settings, submission).get(system_dir, {})
    fields = disclosed.get("fields", {})
    # A client-over-network result's endpoint and its contact (rules §11.10): a buyer may
    # try it; shown as text, never followed.
    endpoint = disclosed.get("endpoint") or {}

    def shown(value: object) -> str | None:
        return None if value is None or value == "" else str(value)

    facts = {
        "Accelerator": shown(system.accelerator_model) if system else None,
        "Accelerators": shown(system.accelerator_count) if system else None,
        "Nodes": shown(system.node_count) if system else None,
        "Provisioned power (kW)": (
            figure(system.provisioned_power_kw, "kw")
            if system and system.provisioned_power_kw is not None
            else None
        ),
        "Division": shown(system.division) if system else None,
        "Availability": shown(system.availability) if system else None,
        **fields,
        "Endpoint": shown(endpoint.get("url")),
        "Endpoint contact": shown(endpoint.get("contact")) if endpoint.get("url") else None,
    }
    return {k: v for k, v in facts.items() if v is not None}
