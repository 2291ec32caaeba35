"""/api/v1/organizations: jurisdictions (rules §11.3) and committee appointments (§4.4)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.web.security import ChairDep, MemberDep
from app.core.views import Listing
from app.db.models import Organization
from app.review.services.organizations import (
    OrganizationView,
    get_organization,
    list_organizations,
    organization_view,
    update_organization,
)
from app.submissions.services.visibility import organizations_clause
from app.web.api_errors import attempt
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["organizations"])


@router.get("/organizations", response_model=Listing[OrganizationView])
def read_organizations(
    session: SessionDep, settings: SettingsDep, who: MemberDep, now: NowDep
) -> Listing[OrganizationView]:
    """The organisations the caller may know of, each with its jurisdiction and whether it
    is on the review committee now (a finalized result in the last 6 months or 12 cohorts,
    or appointed): every one for the committee and the chair; for a submitter, its own
    and those of the submissions it may see (rules §11.9), never one known only from a
    confidential submission."""
    return Listing(
        data=list_organizations(session, settings, now, shown=organizations_clause(session, who))
    )


class OrganizationChange(BaseModel):
    country: str | None = Field(
        default=None, max_length=2, description="ISO 3166-1 alpha-2; its holidays stop the clocks"
    )
    subdivision: str | None = Field(default=None, max_length=8, description="e.g. CA for US-CA")
    committee_appointed: bool | None = Field(
        default=None, description="the chair's appointment to the review committee"
    )


@router.patch("/organizations/{slug}", response_model=OrganizationView)
def change_organization(
    slug: str,
    body: OrganizationChange,
    session: SessionDep,
    settings: SettingsDep,
    chair: ChairDep,
    now: NowDep,
) -> OrganizationView | JSONResponse:
    """The chair sets an organisation's jurisdiction or appoints it to the committee; only
    the fields sent change."""
    changes = body.model_dump(exclude_unset=True)
    found: dict[str, Organization] = {}

    def work() -> None:
        found["org"] = update_organization(
            session=session, organization=get_organization(session, slug), **changes
        )

    failed = attempt(session, work)
    return failed or organization_view(session, settings, found["org"], now)
