"""The public record: what of each submission is public, with which status, in which cohort.

The record is derived from the submission's state (architecture, decision 11): after
every change that can move it (a cohort released, a decision, a point withdrawn or
invalidated, an embargo date reached) :func:`sync_record` computes what the record should
be now and, when that differs from the latest version, appends a new version. Versions
are never rewritten: each joins the cohort being prepared (the current one until the chair
releases it, the next one after), so once a cohort is released what it showed stays as it
was, while the active page (the latest version of every submission) follows at once.

- unverified uploads are public from their cohort, without a result id and outside the
  official export (architecture, decision 7), unless the review policy reads "unverified"
  as a result in confidential review (``[statuses]``, rules §11.11): then an upload not
  yet public stays with its organisation;
- provisional ("peer review pending", rules §11.2 C) from their cohort or their embargo
  date; the tag is removed at finalization;
- finalized results are verified from the first cohort after finalization (delayed by
  penalties) or their embargo date (rules §4.2 B);
- withdrawn after finalization or invalidated: an archive entry tagged so, with the
  reason; rejected, or withdrawn before finalization: no public record at all (§11.7);
- a Preview result that expired without its Available result or an extension: an entry
  saying it was removed and why, on no curve and in no archive listing (§11.10); what
  earlier cohorts showed of it stays.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import SYSTEM, policy_in_force, record
from app.core.accuracy import PointAccuracy
from app.core.cohorts import Cohort
from app.core.finish import FinishReasons
from app.core.lifecycle import (
    PublicationMode,
    RecordStatus,
    ResultStatus,
    SubmissionState,
    result_status,
)
from app.core.per_user import per_user
from app.core.refusals import Refused
from app.core.regions import Offline
from app.core.run_summary import NewerSummaryFields
from app.db.models import (
    CohortRelease,
    Curve,
    Point,
    Publication,
    PublishedCurve,
    Reproduction,
    RequestLogRow,
    ResultEntry,
    Retokenization,
    Submission,
    utcnow,
)
from app.publishing.domain.cohorts import current_cohort, may_publish, release_at
from app.publishing.domain.facts import curve_facts
from app.publishing.domain.point_table import pack
from app.publishing.domain.repeatability import repeatability
from app.publishing.domain.snapshot import (
    SNAPSHOT_VERSION,
    CurveSnapshot,
    EngagedPart,
    FrozenRecount,
    InvalidatedPoint,
    Percentiles,
    PublishedPoint,
    ReportingBasisView,
    read_snapshot,
)
from app.publishing.services.curves import offline_of, step_line_of, x_metric_of
from app.publishing.services.embargo import embargo_release
from app.publishing.services.ledger import seal_removal, seal_version
from app.publishing.services.standing import granted_extension, published_standing
from app.settings import Settings, review_policy
from app.submissions.services.disclosures import system_disclosures

_NOT_COPIED = frozenset({"id", "publication_id"})
ARCHIVE_TAGS = frozenset({SubmissionState.WITHDRAWN.value, SubmissionState.INVALIDATED.value})
# Statuses that are reviewed results of a cohort: they carry result ids (rules §9.7).
REVIEWED = frozenset({ResultStatus.VERIFIED.value, ResultStatus.PROVISIONAL.value})


PREVIEW_REMOVED = (
    "Preview expired without an Available result or an extension: removed, not archived "
    "(rules §11.10)"
)


class PublishingError(Refused):
    pass


def _tz(settings: Settings) -> ZoneInfo:
    return ZoneInfo(settings.cohort_timezone)


# --- cohorts ---------------------------------------------------------------------------


def released(session: Session, cohort: Cohort) -> CohortRelease | None:
    return session.scalar(select(CohortRelease).where(CohortRelease.cohort == str(cohort)))


def latest_release(session: Session) -> Cohort | None:
    latest = session.scalar(select(func.max(CohortRelease.cohort)))
    return Cohort.parse(latest) if latest else None


def record_cohort(session: Session, settings: Settings, at: dt.datetime) -> Cohort:
    """The cohort whose record a change made at *at* joins: the current cohort until the
    chair releases it, then the next one (a released cohort is never rewritten)."""
    current = current_cohort(at, _tz(settings))
    latest = latest_release(session)
    if latest is not None and latest >= current:
        return latest.next()
    return current


def cohort_to_release(cohort_id: str) -> Cohort:
    """The cohort *cohort_id* names; refused where it names none."""
    cohort = Cohort.parse(cohort_id)
    if cohort is None:
        raise PublishingError("bad-cohort", f"{cohort_id!r} is not a cohort id (YYYY-MM-C0/C1)")
    return cohort


def release_cohort(
    session: Session, settings: Settings, cohort_id: str, at: dt.datetime, actor: str
) -> tuple[Cohort, bool]:
    """Record the chair's release of a cohort: at its time, and only the one due now.
    Returns the cohort and whether this call released it (False: released before)."""
    cohort = cohort_to_release(cohort_id)
    if released(session, cohort) is not None:
        return cohort, False
    refusal = may_publish(cohort, at, _tz(settings))
    if refusal is not None:
        raise PublishingError(refusal.code, refusal.message, refusal.kind)
    session.add(CohortRelease(cohort=str(cohort), published_at=at, published_by=actor))
    session.flush()
    return cohort, True


# --- what the record should be ------------------------------------------------------------


def _publications(session: Session, submission: Submission) -> list[Publication]:
    return list(
        session.scalars(
            select(Publication)
            .where(Publication.submission_id == submission.id, Publication.in_record())
            .order_by(Publication.cohort, Publication.id)
        )
    )


def _cohort_released(latest: Cohort | None, due: str | None) -> bool:
    wanted = Cohort.parse(due or "")
    return latest is not None and wanted is not None and wanted <= latest


def provisional_release(submission: Submission) -> dt.date | None:
    """The embargo date that holds a provisional publication back, if it is later than
    the cohort the submission is eligible for (before that, the cohort holds it anyway)."""
    if submission.embargo_date is None:
        return None
    eligible = Cohort.parse(submission.eligible_cohort or "")
    if eligible is not None and eligible.date >= submission.embargo_date:
        return None
    return submission.embargo_date


def due_status(
    session: Session,
    settings: Settings,
    submission: Submission,
    now: dt.datetime,
    was_public: bool,
) -> ResultStatus | None:
    """The status the submission's public record carries at *now*, or None (not public).
    A test submission (the official CLI's ``--test``) is never public."""
    if submission.is_test:
        return None
    status = result_status(SubmissionState(submission.state), submission.for_review)
    if status is None:
        return None
    latest = latest_release(session)
    tz = _tz(settings)
    if status == ResultStatus.PROVISIONAL:
        if submission.publication_mode != PublicationMode.PROVISIONAL:
            return None  # confidential review: nothing public before finalization (§11.2 A)
        if was_public:
            return status
        held = provisional_release(submission)
        if held is not None:
            return status if now >= release_at(held, tz) else None
        return status if _cohort_released(latest, submission.eligible_cohort) else None
    if status == ResultStatus.VERIFIED:
        if was_public:
            return status  # provisional until now: the tag goes at finalization (§11.2 C)
        held = embargo_release(settings, submission)
        if held is not None:
            return status if now >= release_at(held, tz) else None
        return status if _cohort_released(latest, submission.due_cohort) else None
    if review_policy(settings).statuses.keeps_private(was_public):
        return None  # the policy reads "unverified" otherwise (rules §11.11): not listed
    due = submission.eligible_cohort or submission.target_cohort
    return status if _cohort_released(latest, due) else None


def _result_scope(settings: Settings, cohort: Cohort, curve: Curve) -> str:
    """``<major>.<minor>.<cohort-number>.<model_id>``: entry numbers are unique in it."""
    first = Cohort.parse(settings.first_cohort) or cohort
    number = 0
    walker = first
    while walker < cohort:
        walker = walker.next()
        number += 1
    major, _, minor = settings.rules_version.partition(".")
    return f"{major}.{minor or 0}.{number}.{curve.benchmark_model}"


def result_ids(
    session: Session, settings: Settings, submission: Submission, cohort: Cohort
) -> dict[tuple[str, str], str]:
    """Each curve's result id (rules §9.7): handed out at its first publication as a
    reviewed result and kept for good; entry numbers are never reused."""
    ids: dict[tuple[str, str], str] = {}
    existing = {
        (e.system_dir, e.benchmark_model): e
        for e in session.scalars(
            select(ResultEntry).where(ResultEntry.submission_id == submission.id)
        )
    }
    for curve in submission.curves:
        key = (curve.system.dir_name, curve.benchmark_model)
        entry = existing.get(key)
        if entry is None:
            scope = _result_scope(settings, cohort, curve)
            highest = session.scalar(
                select(func.max(ResultEntry.entry)).where(ResultEntry.scope == scope)
            )
            entry = ResultEntry(
                scope=scope,
                prefix=f"{scope}.{curve.dataset or 'unknown'}",
                entry=(highest or 0) + 1,
                submission_id=submission.id,
                system_dir=key[0],
                benchmark_model=key[1],
            )
            session.add(entry)
            session.flush()
        ids[key] = entry.result_id
    return ids


def frozen_recounts(session: Session, submission_id: int) -> dict[str, FrozenRecount]:
    """The latest re-count of each point of a submission that has a request record, by
    point label: what a publication written now freezes."""
    rows = session.execute(
        select(
            RequestLogRow.id,
            RequestLogRow.point_label,
            RequestLogRow.window,
            RequestLogRow.duration_ms,
            Retokenization.recount,
        )
        .join(Retokenization, Retokenization.id == RequestLogRow.retokenization_id)
        .where(RequestLogRow.submission_id == submission_id)
        .order_by(RequestLogRow.id)
    ).all()
    frozen = {}
    for log_id, label, window, duration_ms, recount in rows:  # the latest wins
        tokens = (recount or {}).get("total_output_tokens")
        frozen[label] = FrozenRecount(
            request_log=log_id,
            window=window,
            duration_ms=duration_ms,
            output_tokens=tokens if isinstance(tokens, int) else None,
        )
    return frozen


# A point's finished reproductions (id, system tok/s, per-user rate), oldest first.
Reproduced = list[tuple[str, float, float | None]]
# ... by point label.
Runs = dict[str, Reproduced]


def reproduced_runs(session: Session, submission_id: int) -> Runs:
    """Each point's finished reproductions that measured it (id, system tok/s, per-user
    rate), oldest first, by point label: what a publication freezes of them."""
    rows = session.execute(
        select(
            Reproduction.point_label,
            Reproduction.public_id,
            Reproduction.system_tps,
            Reproduction.tps_per_user,
        )
        .where(
            Reproduction.submission_id == submission_id,
            Reproduction.finished_at.is_not(None),
            Reproduction.system_tps.is_not(None),
            Reproduction.n_completed > 0,
        )
        .order_by(Reproduction.finished_at, Reproduction.id)
    ).all()
    runs: Runs = {}
    for label, public_id, tps, rate in rows:
        if tps is not None:  # the query asks it; the column may be null for mypy
            runs.setdefault(label, []).append((public_id, tps, rate))
    return runs


def published_point(
    point: Point,
    recount: FrozenRecount | None = None,
    reproduced: Reproduced | None = None,
    agentic: bool = False,
    basis: dict[str, Any] | None = None,
) -> PublishedPoint:
    return PublishedPoint(
        dir=point.dir_name,
        concurrency=point.concurrency,
        offline=Offline(point.offline_kind),
        system_tps=point.system_tps,
        region=point.region,
        tps_per_user=point.tps_per_user,
        tpot_p90_ms=point.tpot_p90_ms,
        ttft_p90_ms=point.ttft_p90_ms,
        e2e_avg_interactivity=point.e2e_avg_interactivity,
        per_user=per_user(point, agentic),
        system_tps_per_kw=point.system_tps_per_kw,
        accuracy=None if point.accuracy_status == "none" else point.accuracy_status,
        percentiles=Percentiles.model_validate(point.percentiles) if point.percentiles else None,
        recount=recount,
        engaged=(
            EngagedPart(
                share=round(point.engaged_share, 6),
                accelerators=point.accelerators_engaged,
                power_kw=point.point_power_kw,
            )
            if point.engaged_share is not None
            else None
        ),
        finish_reasons=FinishReasons.of(point.finish_reason_counts),
        summary_fields=NewerSummaryFields.of(
            point.input_sequence_lengths, point.early_stopping, point.run_config
        ),
        accuracy_detail=PointAccuracy.read(point.accuracy_detail),
        repeatability=repeatability(
            (point.system_tps, per_user(point, agentic)),
            reproduced or [],
        ),
        reporting_basis=(
            ReportingBasisView(status=basis.get("status"), verdict=basis.get("verdict"))
            if basis
            else None
        ),
    )


def curve_snapshot(
    curve: Curve,
    recounts: dict[str, FrozenRecount] | None = None,
    runs: Runs | None = None,
    bases: dict[str, dict[str, Any]] | None = None,
) -> CurveSnapshot:
    """What a publication keeps of a curve: its active points and their step line, each
    with the re-count it has now (*recounts*, by point label) and the steady state it
    declares (*bases*, by point label)."""
    active = [p for p in curve.points if p.state == "active"]
    recounts = recounts or {}
    prefix = f"{curve.system.dir_name}/{curve.benchmark_model}/"
    ceiling, elected = offline_of(active)
    steps = step_line_of(curve)
    return CurveSnapshot(
        system=curve.system.system_name or curve.system.dir_name,
        system_dir=curve.system.dir_name,
        benchmark_model=curve.benchmark_model,
        dataset=curve.dataset,
        is_agentic=curve.is_agentic,
        x_metric=x_metric_of(curve),
        c_max=curve.c_max,
        c_min=curve.c_min,
        regions=curve.regions,
        points=[
            published_point(
                p,
                recounts.get(prefix + p.dir_name),
                (runs or {}).get(prefix + p.dir_name),
                agentic=curve.is_agentic,
                basis=(bases or {}).get(prefix + p.dir_name),
            )
            for p in active
        ],
        step_line=[list(v) for v in steps.line],
        frontier=[list(v) for v in steps.frontier],
        offline_ceiling=ceiling,
        elected_offline=elected,
        # Invalidated points stay in the archive, tagged, with the chair's reason (§11.7).
        invalidated_points=[
            InvalidatedPoint(dir=p.dir_name, concurrency=p.concurrency, reason=p.state_reason)
            for p in curve.points
            if p.state == "invalidated"
        ],
    )


def _snapshot(
    session: Session,
    settings: Settings,
    submission: Submission,
    ids: dict[tuple[str, str], str],
    recounts: dict[str, FrozenRecount],
    runs: Runs,
) -> list[PublishedCurve]:
    systems = {s.dir_name: s for s in submission.systems}
    disclosed = system_disclosures(settings, submission)
    extended = granted_extension(session, submission)
    published = []
    for curve in submission.curves:
        system = systems.get(curve.system.dir_name)
        declared = disclosed.get(curve.system.dir_name, {})
        standing = published_standing(submission, system, extended)
        snapshot = curve_snapshot(curve, recounts, runs, declared.get("steady_state"))
        published.append(
            PublishedCurve(
                benchmark_model=curve.benchmark_model,
                dataset=curve.dataset,
                is_agentic=curve.is_agentic,
                system_name=(system.system_name if system else None) or curve.system.dir_name,
                organization=submission.organization.name,
                division=standing.division,
                availability=standing.availability,
                accelerator_model=system.accelerator_model if system else None,
                accelerator_count=system.accelerator_count if system else None,
                provisioned_power_kw=system.provisioned_power_kw if system else None,
                scenario=standing.scenario,
                available_by=standing.available_by,
                power_estimated=standing.power_estimated,
                facts=curve_facts(
                    declared.get("fields") or {},
                    system.node_count if system else None,
                    system.serving_framework if system else None,
                ),
                data=snapshot.stored(),
                point_table=pack(snapshot),
                snapshot_version=SNAPSHOT_VERSION,
                result_id=ids.get((curve.system.dir_name, curve.benchmark_model)),
            )
        )
    return published


def _published_points(publication: Publication) -> dict[str, PublishedPoint]:
    """A version's points by label."""
    points: dict[str, PublishedPoint] = {}
    for curve in publication.curves:
        snapshot = read_snapshot(curve.snapshot_version, curve.data)
        prefix = f"{snapshot.system_dir}/{snapshot.benchmark_model}/"
        points.update({prefix + p.dir: p for p in snapshot.points})
    return points


def _frozen_since(publication: Publication, recounts: dict[str, FrozenRecount], runs: Runs) -> bool:
    """The version still shows each point's re-count and reproductions as they are now."""
    for label, point in _published_points(publication).items():
        if point.recount != recounts.get(label):
            return False
        shown = point.repeatability.reproductions if point.repeatability else []
        if shown != [run[0] for run in runs.get(label, [])]:
            return False
    return True


def _content(curves: list[PublishedCurve]) -> list[tuple[Any, ...]]:
    return [
        (
            c.benchmark_model,
            c.system_name,
            c.result_id,
            c.data,
            c.available_by,
            c.scenario,
            c.division,
            c.availability,
        )
        for c in curves
    ]


# --- keeping the record in step -------------------------------------------------------------


def _version(
    submission: Submission, target: Cohort, status: str, at: dt.datetime, why: str | None
) -> Publication:
    """A new version of the submission's public record, in the cohort *target* joins."""
    return Publication(
        submission=submission,
        cohort=str(target),
        status=RecordStatus(status),
        published_at=at,
        description=why,
    )


def _archive_entry(
    session: Session,
    submission: Submission,
    latest: Publication,
    state: SubmissionState | RecordStatus,
    target: Cohort,
    at: dt.datetime,
    why: str | None,
) -> Publication:
    """A finalized result withdrawn or invalidated: the archive entry keeps its result ids
    and what was last shown, tagged with its state (rules §11.7). A Preview removed at
    expiry: the same entry, tagged removed (no view shows its points)."""
    tombstone = _version(submission, target, state.value, at, why)
    copied = [c.key for c in PublishedCurve.__table__.columns if c.key not in _NOT_COPIED]
    tombstone.curves = [
        PublishedCurve(**{key: getattr(curve, key) for key in copied}) for curve in latest.curves
    ]
    session.add(tombstone)
    what = "removed" if state == RecordStatus.REMOVED else "archived"
    where = "from the record" if what == "removed" else "in the archive"
    record(session, submission, action=what,
           reason=f"{state.value} (tagged {where} from {target})", at=at)  # fmt: skip
    session.flush()
    return tombstone


def sync_record(
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime | None = None,
    *,
    cohort: Cohort | None = None,
    why: str | None = None,
    points_changed: bool = True,
    actor: str = SYSTEM,
    noted: bool = False,
) -> Publication | None:
    """Bring the submission's public record in line with its state; returns the version
    written, if one was. *cohort*: the cohort being released (default: the one a change
    made at *at* joins). *points_changed*: False when only time passed (the clocks, a
    release), so a record with the right status is left as it is without rebuilding it.
    *noted*: a change the record must carry although its curves read the same (a
    correction the chair approved): a new version, and its ledger entry, all the same."""
    at = at or utcnow()
    versions = _publications(session, submission)
    latest = versions[-1] if versions else None
    state = SubmissionState(submission.state)
    if state == SubmissionState.REJECTED or (
        state == SubmissionState.WITHDRAWN and submission.finalized_at is None
    ):
        if versions:  # no public record at all (rules §11.7); the result ids stay taken
            for version in versions:  # hidden from every view, kept for the audit
                version.removed_at = at
            why_gone = f"{state.value} before finalization: no record is kept"
            record(session, submission, action="public record removed", reason=why_gone, at=at)
            session.flush()
            seal_removal(session, settings, submission, versions, at, why_gone)
        return None
    target = record_cohort(session, settings, at) if cohort is None else cohort
    if submission.preview_expired_at is not None:  # removed, not archived (rules §11.10)
        if latest is None or latest.status == RecordStatus.REMOVED:
            return None
        removed = _archive_entry(session, submission, latest, RecordStatus.REMOVED, target, at,
                                 why or PREVIEW_REMOVED)  # fmt: skip
        removed.policy_digest = policy_in_force(session, settings)
        seal_version(session, settings, removed, latest)
        return removed
    if state.value in ARCHIVE_TAGS:
        if latest is None or latest.status == state.value:
            return None
        archived = _archive_entry(session, submission, latest, state, target, at, why)
        archived.policy_digest = policy_in_force(session, settings)
        seal_version(session, settings, archived, latest)
        return archived
    status = due_status(session, settings, submission, at, was_public=latest is not None)
    if status is None:
        return None
    recounts = frozen_recounts(session, submission.id)
    runs = reproduced_runs(session, submission.id)
    if not points_changed and latest is not None and latest.status == status.value:
        # Only time passed: the record stands, unless a point was re-counted or
        # reproduced since its last version (either shows from the next publication on).
        if _frozen_since(latest, recounts, runs):
            return None
        why = why or "re-counted or reproduced since the last version"
    ids = result_ids(session, settings, submission, target) if status.value in REVIEWED else {}
    curves = _snapshot(session, settings, submission, ids, recounts, runs)
    if latest is not None and latest.status == status.value and not noted:
        if _content(latest.curves) == _content(curves):
            return None
    publication = _version(submission, target, status.value, at, why)
    publication.policy_digest = policy_in_force(session, settings)
    publication.curves = curves
    session.add(publication)
    change = "published" if latest is None else "public record updated"
    detail = f"{status.value} in {target}" + (f" ({why})" if why else "")
    record(session, submission, action=change, actor=actor, reason=detail, at=at)
    session.flush()
    seal_version(session, settings, publication, latest)
    return publication
