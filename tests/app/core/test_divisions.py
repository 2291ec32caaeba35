"""A result's declarations read as the checker reads them: the division, the publication
status (an RDI result is always RDI) and the scenario (a Serviced result runs over the
network)."""

from __future__ import annotations

import pytest

from app.core.divisions import Availability, Scenario, availability_of, scenario_for


@pytest.mark.parametrize(
    ("declared", "division", "status"),
    [
        ("Available", "Standardized", Availability.AVAILABLE),
        (" preview ", "standardized", Availability.PREVIEW),
        ("Available", "RDI", Availability.RDI),  # the RDI division is always RDI
        ("available", "rdi", Availability.RDI),
        ("rdi", "Serviced", Availability.RDI),
        ("Orderable soon", "Standardized", None),
        (None, None, None),
    ],
)
def test_the_status_a_declaration_reads_as(
    declared: str | None, division: str | None, status: Availability | None
) -> None:
    assert availability_of(declared, division) == status


@pytest.mark.parametrize(
    ("declared", "division", "scenario"),
    [
        ("cop", "Standardized", Scenario.COP),
        ("CON", "standardized", Scenario.CON),
        (None, "Serviced", Scenario.CON),  # the only scenario a Serviced result has
        (None, "Standardized", None),  # not declared: not guessed
        ("lan", "RDI", None),
    ],
)
def test_the_scenario_a_result_ran_in(
    declared: str | None, division: str | None, scenario: Scenario | None
) -> None:
    assert scenario_for(declared, division) == scenario
