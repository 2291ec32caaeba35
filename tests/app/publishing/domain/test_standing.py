"""A published result's standing (rules §11.10, §11.8, §2.3–2.4): the publication status
each declaration reads as, the Preview clock and its one extension, RDI cooling-off, the
rules' tags, supersession and the reporting basis, against the rules' own test vectors."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.cohorts import Cohort
from app.publishing.domain.standing import (
    Classification,
    Contender,
    PreviewClock,
    Remedy,
    SimilarSystem,
    SystemIdentity,
    classified,
    continuity_problems,
    cooling_off_until,
    extension_problem,
    remedy_problem,
    reporting_basis,
    result_name,
    superseded,
    tags_of,
    target_date_problem,
)

C1_OCT = Cohort(2026, 10, 1)  # 2026-10-21


def test_the_rules_test_vector_for_preview_and_cooling_off() -> None:
    """2026-10-C1 (2026-10-21) + 180 days = 2027-04-19; + 221 days = 2027-05-30."""
    assert C1_OCT.date == dt.date(2026, 10, 21)
    assert PreviewClock(C1_OCT.date).window_end == dt.date(2027, 4, 19)
    assert cooling_off_until(C1_OCT) == dt.date(2027, 5, 30)


def test_cooling_off_is_the_later_of_the_cohort_after_next_and_the_days() -> None:
    # With a short period the cohort date after next governs.
    assert cooling_off_until(C1_OCT, days=7) == Cohort(2026, 11, 1).date


def test_results_are_named_as_the_rules_name_them() -> None:
    assert result_name("Standardized") == "MLPerf Endpoints"
    assert result_name(None) == "MLPerf Endpoints"
    assert result_name("serviced") == "MLPerf Endpoints Serviced"
    assert result_name("RDI", "RDI") == "MLPerf Endpoints RDI"
    assert result_name("Standardized", "Preview") == "MLPerf Endpoints Preview"


def test_the_one_extension_of_a_preview_window() -> None:
    clock = PreviewClock(C1_OCT.date)  # the window ends 2027-04-19
    asked = dt.date(2027, 3, 1)
    assert extension_problem(clock, asked, dt.date(2027, 6, 1), asked_before=False) is None
    assert "by 2027-03-20" in (
        extension_problem(clock, dt.date(2027, 3, 21), dt.date(2027, 5, 1), asked_before=False)
        or ""
    )
    assert "at most 60 days" in (
        extension_problem(clock, asked, dt.date(2027, 6, 19), asked_before=False) or ""
    )
    assert extension_problem(clock, asked, dt.date(2027, 6, 18), asked_before=False) is None
    assert "one extension" in (
        extension_problem(clock, asked, dt.date(2027, 5, 1), asked_before=True) or ""
    )
    longer = clock.extended(dt.date(2027, 6, 18))
    assert longer.expires == dt.date(2027, 6, 18) and longer.window_end == clock.window_end


def test_an_expired_preview_goes_at_the_first_cohort_after_its_expiry() -> None:
    clock = PreviewClock(C1_OCT.date)  # expires 2027-04-19, a Monday
    assert clock.removal_cohort() == Cohort(2027, 4, 1)  # 2027-04-21
    on_a_cohort_day = PreviewClock(dt.date(2026, 10, 21), extension_days=2)  # 2027-04-21
    assert on_a_cohort_day.removal_cohort() == Cohort(2027, 5, 0)


def test_notices_come_30_and_7_days_before_expiry() -> None:
    clock = PreviewClock(C1_OCT.date)
    expires = clock.expires
    assert clock.notices_due(expires - dt.timedelta(days=31)) == []
    assert clock.notices_due(expires - dt.timedelta(days=30)) == [30]
    assert clock.notices_due(expires - dt.timedelta(days=7)) == [30, 7]
    assert clock.notices_due(expires + dt.timedelta(days=1)) == []


def test_a_target_date_past_the_window_is_a_problem() -> None:
    clock = PreviewClock(C1_OCT.date)
    assert target_date_problem(dt.date(2027, 4, 19), clock) is None
    assert "past the Preview window" in (target_date_problem(dt.date(2027, 4, 20), clock) or "")
    assert "declares its target_availability_date" in (target_date_problem(None, clock) or "")


def test_continuity_allows_a_five_percent_drop_point_by_point() -> None:
    preview = {8: (1000.0, 100.0), 64: (5000.0, 40.0), 128: (6000.0, 20.0)}
    available = {8: (951.0, 96.0), 64: (4700.0, 40.0), 256: (1.0, 1.0)}
    problems = continuity_problems(preview, available, 0.05)
    assert problems == [
        "concurrency 64: system_tps 4700 is 6.0% below the Preview's 5000 (at most 5%)"
    ]


def test_tags_in_the_rules_wording() -> None:
    assert tags_of(
        status="provisional",
        availability="Preview",
        available_by=dt.date(2027, 3, 31),
        power_estimated=True,
        superseded_by=None,
    ) == [  # fmt: skip
        "peer review pending",
        "Preview \u2014 Available by 2027-03-31",
        "MLC Estimated Power",
    ]
    assert tags_of(
        status="withdrawn",
        availability="Available",
        available_by=None,
        power_estimated=False,
        superseded_by="2027-01-C0",
    ) == [  # fmt: skip
        "Withdrawn",
        "Superseded by 2027-01-C0",
    ]


def _identity(system: str = "Acme X", division: str = "Standardized") -> SystemIdentity:
    return SystemIdentity.of("Acme Corp", system, "llama3_1-8b", "cnn", division, "cop")


def test_a_newer_finalized_result_supersedes_the_same_system() -> None:
    old = Contender(_identity(), True, "2026-10-C1")
    renamed_case = Contender(_identity("acme  x"), True, "2027-01-C0")
    in_review = Contender(_identity(), False, "2027-02-C0")  # newer, not finalized: none
    other_division = Contender(_identity(division="Serviced"), True, "2026-09-C0")
    assert superseded([old, renamed_case, in_review, other_division]) == [
        "2027-01-C0",
        None,
        None,
        None,
    ]


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30)), max_size=12))
def test_at_most_the_latest_finalized_result_of_a_system_stands(
    results: list[tuple[bool, int]],
) -> None:
    """Among finalized results of one system exactly one is not superseded, and nothing
    newer than it is superseded."""
    contenders = [
        Contender(
            _identity(),
            finalized,
            str(Cohort(2026, 1, 0) if n == 0 else Cohort(2027, 1 + n % 12, n % 2)),
        )
        for finalized, n in results
    ]
    marks = superseded(contenders)
    finalized_standing = [
        c for c, m in zip(contenders, marks, strict=True) if c.finalized and m is None
    ]
    assert len(finalized_standing) == (1 if any(c.finalized for c in contenders) else 0)
    if finalized_standing:
        newest = max((c.since, n) for n, c in enumerate(contenders) if c.finalized)
        for n, (c, m) in enumerate(zip(contenders, marks, strict=True)):
            assert (m is None) == ((c.since, n) >= newest)


@pytest.mark.parametrize(
    ("status", "verdict", "steady", "label"),
    [
        ("windowable", "STEADY STATE", True, "steady state"),
        ("windowable", "anomaly", True, "steady state, first plateau (level shift)"),
        ("windowable", "drifting_up", False, "local plateau only (drifting up)"),
        ("insufficient_duration", "STEADY STATE", False,
         "low confidence: window shorter than the §6.2 minimum"),
        ("partial_dataset", None, False, "whole run only: less than one super-pass"),
    ],
)  # fmt: skip
def test_the_reporting_basis_in_words(
    status: str, verdict: str | None, steady: bool, label: str
) -> None:
    basis = reporting_basis(status, verdict)
    assert basis is not None and (basis.steady, basis.label) == (steady, label)
    assert reporting_basis(None, None) is None


AVAILABLE = Classification("Standardized", "Available", None)
WINDOW_END = dt.date(2027, 4, 19)


@pytest.mark.parametrize(
    ("current", "remedy", "problem"),
    [
        (AVAILABLE, Remedy(availability="RDI"), None),
        (AVAILABLE, Remedy(availability="Preview", available_by=WINDOW_END), None),
        (AVAILABLE, Remedy(division="Serviced"), None),
        (AVAILABLE, Remedy(division="RDI"), None),  # and RDI with it
        (Classification("Standardized", "Preview", WINDOW_END), Remedy(availability="RDI"), None),
        (AVAILABLE, Remedy(), "name the division or the publication status"),
        (AVAILABLE, Remedy(division="Closed"), "one of Standardized, Serviced, RDI"),
        (AVAILABLE, Remedy(availability="GA"), "one of Available, Preview, RDI"),
        (AVAILABLE, Remedy(division="RDI", availability="Preview"), "always RDI"),
        (AVAILABLE, Remedy(availability="Preview"), "names the date"),
        (
            AVAILABLE,
            Remedy(availability="Preview", available_by=dt.date(2027, 4, 20)),
            "past its window, which ends on 2027-04-19",
        ),
        (AVAILABLE, Remedy(availability="RDI", available_by=WINDOW_END), "only with the Preview"),
        (
            Classification("Standardized", "RDI", None),
            Remedy(availability="Preview", available_by=WINDOW_END),
            "RDI result does not become Preview",
        ),  # fmt: skip
        # Out of the RDI division, its status would rise: a new submission's business.
        (
            Classification("RDI", "Available", None),
            Remedy(division="Standardized"),
            "RDI result does not become Available",
        ),  # fmt: skip
        (AVAILABLE, Remedy(availability="Available"), "classified so already"),
        (AVAILABLE, Remedy(division="standardized"), "classified so already"),
    ],
)
def test_a_reclassification_moves_to_another_division_or_a_lower_status(
    current: Classification, remedy: Remedy, problem: str | None
) -> None:
    found = remedy_problem(current, remedy, WINDOW_END)
    assert (found is None) if problem is None else (problem in (found or "")), found


def test_the_latest_reclassification_naming_a_field_holds() -> None:
    declared = Classification("Standardized", "Available", None)
    steps = [
        Remedy(availability="Preview", available_by=WINDOW_END),
        Remedy(division="Serviced"),
        Remedy(availability="RDI"),
    ]
    assert classified(declared, steps[:1]) == Classification("Standardized", "Preview", WINDOW_END)
    assert classified(declared, steps[:2]).division == "Serviced"
    last = classified(declared, steps)
    assert last == Classification("Serviced", "RDI", None) and last.status == "RDI"
    assert classified(declared, []) == declared


def test_a_similar_system_differs_at_most_in_its_software_versions() -> None:
    base = SimilarSystem.of("llama3_1-8b", "NVIDIA H100-SXM", 8, None, "vLLM 0.6.3")
    assert base == SimilarSystem.of("llama3_1-8b", "nvidia h100 sxm", 8, 1, "vllm v0.7.0rc1")
    assert base != SimilarSystem.of("llama3_1-8b", "NVIDIA H100-SXM", 16, 1, "vLLM 0.6.3")
    assert base != SimilarSystem.of("llama3_1-8b", "NVIDIA H100-SXM", 8, 2, "vLLM 0.6.3")
    assert base != SimilarSystem.of("llama3_1-8b", "NVIDIA H200", 8, 1, "vLLM 0.6.3")
    assert base != SimilarSystem.of("llama3_1-8b", "NVIDIA H100-SXM", 8, 1, "SGLang 0.4")
    assert base != SimilarSystem.of("deepseek-r1", "NVIDIA H100-SXM", 8, 1, "vLLM 0.6.3")
