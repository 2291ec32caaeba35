"""The vocabularies of a result's declarations: its division and publication status
(``system_desc.json``, rules §8, §11.10) and the scenario it ran in (rules §2.1), read
as the official checker and CLI read them (case aside). What they mean over time is
``app.publishing.domain.standing``'s."""

from __future__ import annotations

import enum


class Availability(enum.StrEnum):
    """The publication status a result is declared with (``system_availability_status``)."""

    AVAILABLE = "Available"
    PREVIEW = "Preview"
    RDI = "RDI"


class Division(enum.StrEnum):
    STANDARDIZED = "Standardized"
    SERVICED = "Serviced"
    RDI = "RDI"


class Scenario(enum.StrEnum):
    """Where the client ran (rules §2.1): on the submitter's premises, or over the network."""

    COP = "CoP"
    CON = "CoN"


# Each vocabulary by its words folded: a large record reads one per curve.
_FOLDED: dict[type[enum.StrEnum], dict[str, enum.StrEnum]] = {
    kind: {m.value.casefold(): m for m in kind} for kind in (Availability, Division, Scenario)
}


def _member(kind: type[enum.StrEnum], text: str | None) -> enum.StrEnum | None:
    return _FOLDED[kind].get((text or "").strip().casefold())


def division_of(text: str | None) -> Division | None:
    """The division a system declares (case-insensitive, as the checker reads it)."""
    found = _member(Division, text)
    return Division(found) if found is not None else None


def availability_of(declared: str | None, division: str | None) -> Availability | None:
    """The result's publication status: what it declares, except that a result of the RDI
    division is always RDI (rules §11.10, SR §7.2.5)."""
    if division_of(division) == Division.RDI:
        return Availability.RDI
    found = _member(Availability, declared)
    return Availability(found) if found is not None else None


def scenario_of(text: str | None) -> Scenario | None:
    """``cop``/``con`` as the official CLI registers them, in any case."""
    found = _member(Scenario, text)
    return Scenario(found) if found is not None else None


def scenario_for(declared: str | None, division: str | None) -> Scenario | None:
    """The scenario a result ran in: as declared, else CoN for a Serviced result (the
    division has no other, rules §8)."""
    found = scenario_of(declared)
    if found is None and division_of(division) == Division.SERVICED:
        return Scenario.CON
    return found
