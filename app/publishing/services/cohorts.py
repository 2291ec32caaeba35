"""What a released cohort holds: its publications as the record lists them."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from app.core.views import Timestamp
from app.db.models import Publication, PublishedCurve


class PublishedCurveSummary(BaseModel):
    result_id: str | None = Field(description="rules §9.7; null for unverified results")
    benchmark: str
    dataset: str | None
    system: str
    points: int = Field(
        description="the points it shows: one invalidated since, or all of a result that "
        "left the record since, are not counted"
    )


class PublicationView(BaseModel):
    """A version of a submission's public record."""

    submission: str
    organization: str
    status: str = Field(description="verified, provisional, unverified, withdrawn, invalidated")
    cohort: str
    published_at: Timestamp
    description: str | None = Field(description="why this version was written")
    curves: list[PublishedCurveSummary]


def publication_view(
    p: Publication, shown: Callable[[PublishedCurve], int] | None = None
) -> PublicationView:
    """*p* as a cohort's record lists it; *shown* counts a curve's points (default: as
    written)."""
    return PublicationView(
        submission=p.submission.public_id,
        organization=p.submission.organization.name,
        status=p.status,
        cohort=p.cohort,
        published_at=p.published_at,
        description=p.description,
        curves=[
            PublishedCurveSummary(
                result_id=c.result_id,
                benchmark=c.benchmark_model,
                dataset=c.dataset,
                system=c.system_name,
                points=shown(c) if shown else len(c.data.get("points", [])),
            )
            for c in p.curves
        ],
    )
