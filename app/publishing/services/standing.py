"""A result's standing as the record keeps it: what a publication freezes of its
division, publication status, scenario and Preview date (``published_standing``), and the
Preview rule's numbers from the settings. The dates and tags themselves are worked out
by ``app.publishing.domain.standing``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.divisions import Availability, availability_of, division_of, scenario_for
from app.db.models import PreviewExtension, Submission, System
from app.publishing.domain.standing import (
    Classification,
    PreviewTerms,
    Remedy,
    SimilarSystem,
    classified,
)
from app.settings import Settings


def preview_terms(settings: Settings) -> PreviewTerms:
    return PreviewTerms(
        window_days=settings.preview_window_days,
        extension_max_days=settings.preview_extension_max_days,
        extension_lead_days=settings.preview_extension_lead_days,
        notice_days=tuple(sorted(settings.preview_notice_days, reverse=True)),
    )


def extension_of(session: Session, submission: Submission) -> PreviewExtension | None:
    """The one extension asked for the submission's Preview window, if any."""
    return session.scalar(
        select(PreviewExtension).where(PreviewExtension.submission_id == submission.id)
    )


def granted_extension(session: Session, submission: Submission) -> PreviewExtension | None:
    extension = extension_of(session, submission)
    return extension if extension is not None and extension.granted else None


@dataclass(frozen=True)
class PublishedStanding:
    """What a publication keeps of a curve's standing, in the official vocabulary."""

    division: str | None
    availability: str | None
    scenario: str | None
    available_by: dt.date | None  # a Preview's committed date
    power_estimated: bool


def published_standing(
    submission: Submission, system: System | None, extension: PreviewExtension | None
) -> PublishedStanding:
    """A system's standing as its submission declares it (or the chair reclassified it):
    the division and status in the official spelling (an RDI division is RDI; an unknown
    word is kept as written, the checker having said so), the scenario, a Preview's date
    (moved by a granted extension), and whether its power comes partly from the rules'
    defaults."""
    classes = classification_of(submission, system) if system else None
    declared_division = classes.division if classes else None
    declared_status = classes.availability if classes else None
    division = division_of(declared_division)
    status = availability_of(declared_status, declared_division)
    available_by = None
    if status == Availability.PREVIEW and classes is not None:
        available_by = extension.new_date if extension else classes.target_date
    scenario = scenario_for(submission.scenario, declared_division)
    return PublishedStanding(
        division=division.value if division else declared_division,
        availability=status.value if status else declared_status,
        scenario=scenario.value if scenario else None,
        available_by=available_by,
        power_estimated=bool(system is not None and system.power_estimates),
    )


def classification_of(submission: Submission, system: System) -> Classification:
    """A system's division, status and Preview date: as declared, after the chair's
    reclassifications of the submission (rules §11.4–§11.6)."""
    declared = Classification(system.division, system.availability, system.target_availability_date)
    remedies = [
        Remedy(r.division, r.availability, r.available_by) for r in submission.reclassifications
    ]
    return classified(declared, remedies)


def similar_systems(submission: Submission) -> set[SimilarSystem]:
    """The submission's results as "a similar system" reads them (rules §11.5, §11.12)."""
    return {
        SimilarSystem.of(c.benchmark_model, c.system.accelerator_model,
                         c.system.accelerator_count, c.system.node_count,
                         c.system.serving_framework)
        for c in submission.curves
    }  # fmt: skip
