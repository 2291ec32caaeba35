"""A submission as the API answers for it: what anyone who may see it sees, and its
review for the committee and the submitters (rules §11.9)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.db.models import Submission
from app.dossier.services.curves import CurveView, curve_view
from app.dossier.services.standing import SystemStanding, submission_standing
from app.review.services.summary import ReviewSummary, review_summary
from app.runs.services.reproductions import list_reproductions
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.views import (
    SubmissionSummary,
    latest_check_run,
    links_of,
    summary_fields,
)


class PublicSubmission(SubmissionSummary):
    """What anyone who may see the submission sees: its active curves, and each system's
    standing (publication status, tags, a Preview's clock)."""

    links: dict[str, str] = Field(description="self, findings and the page")
    curves: list[CurveView]
    standing: list[SystemStanding] = Field(description="per system (rules §11.10, §11.8)")


class FindingCounts(BaseModel):
    errors: int
    warnings: int


class SystemView(BaseModel):
    """A system of the bundle, named as the curves and the results API name it."""

    system: str
    system_dir: str
    division: str | None
    availability: str | None
    accelerator_model: str | None
    accelerator_count: int | None
    node_count: int | None
    serving_framework: str | None
    provisioned_power_kw: float | None
    disclosures: dict[str, Any] = Field(description="what system_desc.json discloses, by label")
    steady_state: dict[str, Any] = Field(description="per point, the declared steady state")


class SubmissionDetail(PublicSubmission):
    """The submission with every point (withdrawn and invalidated ones too), its systems,
    its findings' counts, reproductions and, for the committee, its review."""

    review: ReviewSummary | None = Field(description="for the committee and the submitters")
    counts: FindingCounts | None = Field(description="the latest check run's findings")
    systems: list[SystemView]


def submission_detail(
    session: Session,
    settings: Settings,
    submission: Submission,
    access: Access,
    today: dt.date,
) -> PublicSubmission | SubmissionDetail:
    links = links_of(submission.public_id)
    standing = submission_standing(session, settings, submission, today)
    if access < Access.FULL:
        curves = [curve_view(c, active_only=True) for c in submission.curves]
        return PublicSubmission.model_validate(
            {**summary_fields(submission, settings), "links": links, "curves": curves,
             "standing": standing}
        )  # fmt: skip
    run = latest_check_run(session, submission)
    reproductions = list_reproductions(session, submission)
    disclosures = system_disclosures(settings, submission)
    return SubmissionDetail.model_validate(
        {
            **summary_fields(submission, settings),
            "links": links,
            "review": review_summary(session, settings, submission)
            if access >= Access.REVIEW
            else None,
            "counts": None
            if run is None
            else FindingCounts(errors=run.error_count, warnings=run.warning_count),
            "systems": [
                SystemView(
                    system=s.system_name or s.dir_name,
                    system_dir=s.dir_name,
                    division=s.division,
                    availability=s.availability,
                    accelerator_model=s.accelerator_model,
                    accelerator_count=s.accelerator_count,
                    node_count=s.node_count,
                    serving_framework=s.serving_framework,
                    provisioned_power_kw=s.provisioned_power_kw,
                    disclosures=disclosures.get(s.dir_name, {}).get("fields", {}),
                    steady_state=disclosures.get(s.dir_name, {}).get("steady_state", {}),
                )
                for s in submission.systems
            ],
            "curves": [curve_view(c, reproductions) for c in submission.curves],
            "standing": standing,
        }
    )
