"""The checks' findings on a bundle's declared standing (``standing_rules``), with their
facts gathered from the record: the window a Preview's date is held to, the components
first published as RDI, and the Preview an Available result ships. The pipeline adds
them to every check run."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.checks.domain.compliance import ComplianceResult
from app.checks.domain.findings import Finding
from app.core.cohorts import Cohort
from app.core.divisions import Availability
from app.core.names import organisation_key
from app.db.models import Publication, Submission
from app.publishing.domain.standing import PreviewClock
from app.publishing.domain.standing_rules import (
    Component,
    DeclaredSystem,
    Throughput,
    components,
    continuity_findings,
    cooling_off_findings,
    preview_date_findings,
    rdi_status_findings,
)
from app.publishing.services.previews import first_public_cohort, preview_systems
from app.publishing.services.standing import preview_terms, published_standing
from app.settings import Settings, review_clock


def declared_systems(result: ComplianceResult) -> list[DeclaredSystem]:
    return [
        DeclaredSystem(
            dir_name=s.dir_name,
            name=s.system_name or s.dir_name,
            division=s.division,
            declared=s.availability,
            target_date=s.target_availability_date,
            accelerator=s.accelerator_model,
            software=s.serving_framework,
        )
        for s in result.official.systems
    ]


def standing_findings(
    session: Session,
    settings: Settings,
    submission: Submission,
    result: ComplianceResult,
    now: dt.datetime,
) -> list[Finding]:
    systems = declared_systems(result)
    today = review_clock(settings).local_date(now)
    organisation = submission.organization.name
    start = first_public_cohort(session, submission) or result.eligible_cohort
    findings = rdi_status_findings(systems)
    if start is not None:
        findings += preview_date_findings(
            systems, PreviewClock(start.date, preview_terms(settings))
        )
    findings += cooling_off_findings(
        systems, organisation, first_rdi_components(session, submission), today,
        settings.rdi_cooling_off_days,
    )  # fmt: skip
    if any(s.status == Availability.AVAILABLE for s in systems):
        shipped = preview_throughput(session, submission, systems)
        for (system_dir, model), preview in sorted(shipped.items()):
            available = _throughput(result, system_dir, model)
            findings += continuity_findings(
                model, system_dir, preview, available, settings.preview_continuity_drop
            )
    return findings


def first_rdi_components(session: Session, submission: Submission) -> dict[Component, Cohort]:
    """Each component whose first publication in the record was as RDI (no result shown
    in that cohort or before had it otherwise), with that cohort; the submission's own
    publications aside."""
    earliest: dict[Component, tuple[str, bool]] = {}  # cohort, every entry there RDI
    publications = session.scalars(
        select(Publication)
        .where(Publication.in_record(), Publication.submission_id != submission.id)
        .order_by(Publication.cohort)
    ).all()
    for publication in publications:
        shown = publication.submission
        for system in shown.systems:
            standing = published_standing(shown, system, None)
            declared = DeclaredSystem(
                system.dir_name, system.system_name or system.dir_name, system.division,
                system.availability, None, system.accelerator_model, system.serving_framework,
            )  # fmt: skip
            rdi = standing.availability == Availability.RDI
            for component in components(declared, shown.organization.name):
                held = earliest.get(component)
                if held is None:
                    earliest[component] = (publication.cohort, rdi)
                elif held[0] == publication.cohort and not rdi:
                    earliest[component] = (held[0], False)
    return {
        component: cohort
        for component, (first, rdi) in earliest.items()
        if rdi and (cohort := Cohort.parse(first)) is not None
    }


def preview_throughput(
    session: Session, submission: Submission, systems: list[DeclaredSystem]
) -> dict[tuple[str, str], Throughput]:
    """The published Preview results of the same systems (the same organisation and
    system names) that this Available submission ships, by its system folder and model:
    their active points' throughput by concurrency, the latest Preview's."""
    names = {
        organisation_key(s.name): s.dir_name for s in systems if s.status == Availability.AVAILABLE
    }
    previews = session.scalars(
        select(Submission)
        .where(
            Submission.organization_id == submission.organization_id,
            Submission.id != submission.id,
            Submission.id.in_(select(Publication.submission_id).where(Publication.in_record())),
        )
        .order_by(Submission.uploaded_at)
    ).all()
    found: dict[tuple[str, str], Throughput] = {}
    for preview in previews:
        for system in preview_systems(preview):
            ours = names.get(organisation_key(system.system_name or system.dir_name))
            if ours is None:
                continue
            for curve in preview.curves:
                if curve.system_id == system.id:
                    found[(ours, curve.benchmark_model)] = {
                        p.concurrency: (p.system_tps, p.tps_per_user)
                        for p in curve.points
                        if p.state == "active" and p.offline_kind == "none"
                    }
    return found


def _throughput(result: ComplianceResult, system_dir: str, model: str) -> Throughput:
    return {
        p.concurrency: (p.system_tps, p.tps_per_user)
        for curve in result.official.curves
        if curve.system == system_dir and curve.model == model
        for p in curve.points
        if p.offline == "none"
    }
