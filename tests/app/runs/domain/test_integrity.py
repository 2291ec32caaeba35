"""The chain from a point's events to its summary to its point.yaml."""

from __future__ import annotations

from typing import Any

from app.checks.domain.findings import Severity
from app.runs.domain.integrity import integrity_findings
from app.runs.domain.retokenize import Recount

SHA = "ab" * 32
POINT = "Sys/llama3_1-8b/r16"
SEEDS = {"scheduler_rng_seed": 10487924139932647040, "sample_index_rng_seed": 586478644936801402}


def summary(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "events_sha256": SHA,
        "n_samples_issued": 100,
        "n_samples_failed": 2,
        "duration_ns": 60_000_000_000,
        "run_config": {
            "scheduler_random_seed": 10487924139932647040,
            "dataloader_random_seed": 586478644936801402,
        },
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def recount(**changes: Any) -> Recount:
    values: dict[str, Any] = {
        "n_samples_issued": 100, "n_samples_completed": 100, "n_samples_failed": 2,
        "events_duration_ms": 60_100.0,
    }  # fmt: skip
    values.update(changes)
    return Recount(**values)


def judged(
    s: dict[str, Any] | None, r: Recount | None = None, runtime: Any = None
) -> dict[str, Any]:
    point_yaml = {"runtime_settings": {"runtime": SEEDS if runtime is None else runtime}}
    found = integrity_findings(POINT, SHA, s, point_yaml, r or recount(), duration_tolerance=0.02)
    return {f.rule: f for f in found}


def test_an_honest_chain_is_informational_with_the_values_side_by_side() -> None:
    found = judged(summary())
    assert {f.severity for f in found.values()} == {Severity.INFO}
    assert set(found) == {
        "events-summary-hash", "events-summary-counts", "events-summary-duration",
        "summary-point-seeds",
    }  # fmt: skip
    assert "the same file" in found["events-summary-hash"].message
    assert "issued: summary 100, events 100; failed: summary 2, events 2" in (
        found["events-summary-counts"].message
    )
    assert "+0.17%" in found["events-summary-duration"].message


def test_each_broken_link_is_an_error_that_says_which() -> None:
    other = judged(summary(events_sha256="cd" * 32))["events-summary-hash"]
    assert other.severity == Severity.ERROR and "another run's events" in other.message
    counts = judged(summary(), recount(n_samples_issued=97))["events-summary-counts"]
    assert counts.severity == Severity.ERROR and "issued: summary 100, events 97" in counts.message
    longer = judged(summary(), recount(events_duration_ms=75_000.0))["events-summary-duration"]
    assert longer.severity == Severity.ERROR and "+25.00%" in longer.message
    seeds = judged(summary(), runtime={**SEEDS, "scheduler_rng_seed": 1})["summary-point-seeds"]
    assert seeds.severity == Severity.ERROR and "did not use the seeds" in seeds.message


def test_what_the_files_cannot_show_is_said_not_passed() -> None:
    older = judged(summary(events_sha256=None, run_config=None))
    assert older["events-summary-hash"].severity == Severity.INFO
    assert "no events_sha256" in older["events-summary-hash"].message
    assert "summary-point-seeds" not in older  # nothing to compare the seeds with
    unreadable = judged(None)
    assert [f.severity for f in unreadable.values()] == [Severity.WARNING]
    # The v0.7 seed names still declare the seeds.
    v07 = {
        "scheduler_random_seed": 10487924139932647040,
        "dataloader_random_seed": 586478644936801402,
    }
    assert judged(summary(), runtime=v07)["summary-point-seeds"].severity == Severity.INFO
