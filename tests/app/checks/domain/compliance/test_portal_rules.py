"""The portal's own rules: ids, the cohort cutoff and duplicate uploads."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from app.checks.domain.compliance import EarlierUpload, run_compliance
from app.checks.domain.findings import Severity, Source, Verdict
from app.core.cohorts import BusinessCalendar
from app.demo.bundles import BundleFactory
from tests.support.bundles import broken

PT = ZoneInfo("America/Los_Angeles")
CALENDAR = BusinessCalendar.of("America/Los_Angeles")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return BundleFactory(target_cohort="2026-12-C0").build(tmp_path_factory.mktemp("b"))


def _portal(result, rule: str):  # type: ignore[no-untyped-def]
    return [f for f in result.findings if f.rule == rule]


def test_in_time_for_the_target_cohort(bundle: Path) -> None:
    at = dt.datetime(2026, 11, 30, 15, 0, tzinfo=PT)
    result = run_compliance(bundle, evaluated_at=at, calendar=CALENDAR)
    [cutoff] = _portal(result, "target-cohort-cutoff")
    assert cutoff.severity == Severity.INFO and cutoff.source == Source.PORTAL
    assert "2026-12-C0" in cutoff.message and "2026-12-01" in cutoff.message
    assert str(result.eligible_cohort) == "2026-12-C0"
    assert result.verdict == Verdict.PASSED


def test_too_late_rolls_to_the_next_cohort_with_a_warning(bundle: Path) -> None:
    at = dt.datetime(2026, 12, 2, 6, 0, tzinfo=PT)  # Wednesday morning: past the cutoff
    result = run_compliance(bundle, evaluated_at=at, calendar=CALENDAR)
    [cutoff] = _portal(result, "target-cohort-cutoff")
    assert cutoff.severity == Severity.WARNING
    assert cutoff.clause == "§4.1"
    assert "2026-12-C1" in cutoff.message and cutoff.fix
    assert str(result.eligible_cohort) == "2026-12-C1"
    assert result.verdict == Verdict.PASSED  # late is not a rejection: §4.1 rolls it


def test_holiday_on_the_tuesday_makes_monday_the_last_day(bundle: Path) -> None:
    calendar = BusinessCalendar.of("America/Los_Angeles", holidays=[dt.date(2026, 12, 1)])
    at = dt.datetime(2026, 12, 1, 10, 0, tzinfo=PT)
    result = run_compliance(bundle, evaluated_at=at, calendar=calendar)
    [cutoff] = _portal(result, "target-cohort-cutoff")
    assert cutoff.severity == Severity.WARNING
    assert "2026-11-30" in cutoff.message


def test_duplicate_content_is_an_error_naming_the_earlier_upload(bundle: Path) -> None:
    at = dt.datetime(2026, 11, 30, 15, 0, tzinfo=PT)
    earlier = [EarlierUpload("abc123", dt.datetime(2026, 11, 29, 8, 0, tzinfo=dt.UTC))]
    result = run_compliance(bundle, evaluated_at=at, calendar=CALENDAR, earlier_uploads=earlier)
    [dup] = _portal(result, "duplicate-upload")
    assert dup.severity == Severity.ERROR and "abc123" in dup.message and dup.fix
    assert result.verdict == Verdict.REJECTED
    assert result.findings[0].severity == Severity.ERROR  # errors are listed first


def test_duplicate_rule_passes_or_stays_silent(bundle: Path) -> None:
    at = dt.datetime(2026, 11, 30, 15, 0, tzinfo=PT)
    first = run_compliance(bundle, evaluated_at=at, calendar=CALENDAR, earlier_uploads=[])
    assert [f.severity for f in _portal(first, "duplicate-upload")] == [Severity.INFO]
    local = run_compliance(bundle, evaluated_at=at, calendar=CALENDAR, earlier_uploads=None)
    assert _portal(local, "duplicate-upload") == []  # no database: not applicable


def test_a_declared_dataset_is_a_catalogue_name_never_a_path(tmp_path: Path) -> None:
    at = dt.datetime(2026, 11, 30, 15, 0, tzinfo=PT)
    traversal = BundleFactory(target_cohort="2026-12-C0").build(
        tmp_path / "t", edits=broken("dataset-path")
    )
    result = run_compliance(traversal, evaluated_at=at, calendar=CALENDAR)
    [finding] = _portal(result, "dataset-name")
    assert finding.severity == Severity.ERROR and "'../../secretdata'" in finding.message
    assert result.verdict == Verdict.REJECTED

    def rename(root: Path) -> None:
        for point in root.glob("results/*/*/r*/point.yaml"):
            point.write_text(point.read_text().replace("cnn_dailymail", "my_own_prompts"))

    unknown = BundleFactory(target_cohort="2026-12-C0").build(tmp_path / "u", edits=(rename,))
    [warning] = _portal(run_compliance(unknown, evaluated_at=at, calendar=CALENDAR), "dataset-name")
    assert warning.severity == Severity.WARNING and "not in the catalogue" in warning.message
    allowed = frozenset({"my_own_prompts"})
    operator = run_compliance(unknown, evaluated_at=at, calendar=CALENDAR, datasets=allowed)
    assert _portal(operator, "dataset-name") == []
