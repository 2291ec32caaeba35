"""Organisations: their primary jurisdiction (whose public holidays stop the objection
clocks, rules §11.3) and the chair's committee appointments (rules §4.4)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import holidays as holiday_calendars
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused
from app.core.views import Timestamp
from app.db.models import Organization, utcnow
from app.review.services.review import committee_organizations, holds_seat
from app.settings import Settings

_UNSET: Any = object()


class OrganizationError(Refused):
    pass


def get_organization(session: Session, slug: str) -> Organization:
    found = session.scalar(select(Organization).where(Organization.slug == slug))
    if found is None:
        raise OrganizationError("unknown-organization", f"no organisation {slug!r}", Kind.NOT_FOUND)
    return found


def update_organization(
    *,
    session: Session,
    organization: Organization,
    country: str | None = _UNSET,
    subdivision: str | None = _UNSET,
    committee_appointed: bool | None = None,
) -> Organization:
    """Set the jurisdiction (an ISO 3166-1 alpha-2 country the holiday calendar knows,
    and optionally one of its subdivisions) and the committee appointment."""
    new_country = organization.country if country is _UNSET else (country or None)
    new_sub = organization.subdivision if subdivision is _UNSET else (subdivision or None)
    if new_country is not None:
        new_country = new_country.strip().upper()
        known = holiday_calendars.list_supported_countries()
        if len(new_country) != 2 or new_country not in known:
            raise OrganizationError(
                "bad-country",
                f"{new_country!r} is not an ISO 3166-1 alpha-2 country with a holiday calendar",
            )
        if new_sub is not None and new_sub.strip().upper() not in {
            s.upper() for s in known[new_country]
        }:
            raise OrganizationError(
                "bad-subdivision",
                f"{new_sub!r} is not a subdivision of {new_country} "
                f"(one of {', '.join(sorted(known[new_country])) or 'none'})",
            )
    elif new_sub is not None:
        raise OrganizationError("bad-subdivision", "a subdivision needs its country")
    organization.country = new_country
    organization.subdivision = new_sub.strip().upper() if new_sub else None
    if committee_appointed is not None:
        organization.committee_appointed = committee_appointed
    session.flush()
    return organization


def list_organizations(
    session: Session, settings: Settings, at: dt.datetime | None = None, *, shown: Any = None
) -> list[OrganizationView]:
    """The organisations *shown* admits (a clause over ``Organization``; every one when
    None) and the review committee's (who reviews is no secret, rules §4.4), by name, with
    their jurisdiction and committee seat at *at*."""
    members = committee_organizations(session, settings, at or utcnow())  # once for all
    query = select(Organization).order_by(Organization.name)
    if shown is not None:
        query = query.where(
            shown | Organization.id.in_(members) | Organization.committee_appointed.is_(True)
        )
    rows = session.scalars(query)
    return [organization_view(session, settings, o, at, members=members) for o in rows]


class OrganizationView(BaseModel):
    slug: str
    name: str
    country: str | None = Field(description="ISO 3166-1 alpha-2; its holidays stop the clocks")
    subdivision: str | None
    committee_appointed: bool = Field(description="appointed to the committee by the chair")
    on_committee: bool = Field(description="on the review committee now (rules §4.4)")
    committee_suspended_at: Timestamp | None


def organization_view(
    session: Session,
    settings: Settings,
    organization: Organization,
    at: dt.datetime | None = None,
    *,
    members: set[int] | None = None,
) -> OrganizationView:
    """*members*: the committee's organisations at *at*, when the caller has them."""
    if members is None:
        members = committee_organizations(session, settings, at or utcnow())
    return OrganizationView(
        slug=organization.slug,
        name=organization.name,
        country=organization.country,
        subdivision=organization.subdivision,
        committee_appointed=organization.committee_appointed,
        on_committee=holds_seat(organization, members),
        committee_suspended_at=organization.committee_suspended_at,
    )
