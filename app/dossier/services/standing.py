"""A submission's standing on its page and in its API answer: per system, what the
record shows of it (the publication status, the rules' name and tags, the result that
superseded it) and, for a Preview, its clock and extension (rules §11.10, §11.8)."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.db.models import Submission
from app.publishing.domain.standing import result_name, tags_of
from app.publishing.services.previews import preview_facts
from app.publishing.services.standing import granted_extension, published_standing
from app.results.services.public import visible_curves
from app.review.services.previews import PreviewView, preview_view
from app.settings import Settings


class SystemStanding(BaseModel):
    system: str
    system_dir: str
    division: str | None = Field(description="Standardized, Serviced or RDI")
    availability: str | None = Field(description="Available, Preview or RDI")
    scenario: str | None = Field(description="CoP or CoN (rules §2.1)")
    result_name: str = Field(description="as the rules name the result")
    tags: list[str] = Field(description="the rules' tags, as the record shows them")
    superseded_by: str | None = Field(description="the cohort of the result that superseded it")
    power_estimates: list[str] = Field(
        description="the power figures taken from the rules' defaults (MLC Estimated Power)"
    )
    preview: PreviewView | None = Field(description="a Preview result's clock (rules §11.10)")


def submission_standing(
    session: Session, settings: Settings, submission: Submission, today: dt.date
) -> list[SystemStanding]:
    """Each system's standing: as published where the record shows the result, else as
    the submission declares it (its tags then only what the declarations say)."""
    published = {
        c.system_dir: c
        for c in visible_curves(session, None)
        if c.submission == submission.public_id
    }
    facts = preview_facts(session, settings, submission)
    extension = granted_extension(session, submission)
    out = []
    for system in submission.systems:
        declared = published_standing(submission, system, extension)
        shown = published.get(system.dir_name)
        tags = (
            list(shown.tags)
            if shown is not None
            else tags_of(status="", availability=declared.availability,
                         available_by=declared.available_by,
                         power_estimated=declared.power_estimated, superseded_by=None)
        )  # fmt: skip
        out.append(
            SystemStanding(
                system=system.system_name or system.dir_name,
                system_dir=system.dir_name,
                division=declared.division,
                availability=declared.availability,
                scenario=declared.scenario,
                result_name=result_name(declared.division, declared.availability),
                tags=tags,
                superseded_by=shown.superseded_by if shown is not None else None,
                power_estimates=list(system.power_estimates or []),
                preview=preview_view(facts, today)
                if facts is not None and declared.availability == "Preview"
                else None,
            )
        )
    return out
