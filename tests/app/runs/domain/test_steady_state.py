"""A point's declared steady state against the one its events show."""

from __future__ import annotations

from typing import Any

import pytest

from app.checks.domain.findings import Finding, Severity
from app.runs.domain.retokenize import Recount, Reported
from app.runs.domain.steady_state import (
    SuperPass,
    benchmark_super_pass,
    review_steady_state,
    super_pass_size,
)
from harness.analysis.steady_state import Method, analyse_steady_state
from tests.support.timings import timings

POINT = "Sys/llama3_1-8b/r16"
STEADY = timings(2000)
SHIFTED = timings(2000, lambda i: 5.0 if i < 1200 else 6.5)
MINIMUM_S = 30.0


def _found(t: Any) -> dict[str, Any]:
    return analyse_steady_state(t, Method(super_pass_size=100, min_duration_s=MINIMUM_S))


def _declared(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """point.yaml with the block a submitter copies from *doc*, with *changes*."""
    w = doc["window"]
    block = {
        "status": doc["status"],
        "verdict": doc["verdict"],
        "window": {
            k: w[k]
            for k in (
                "super_pass_start",
                "super_pass_end",
                "super_pass_size",
                "n_samples",
                "duration_s",
            )
        },
        "state": {
            k: v
            for k, v in doc["state"].items()
            if k in ("ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90")
        },
    }
    window = changes.pop("window", {})
    block.update(changes)
    block["window"].update(window)
    return {"steady_state": block}


def _reported(**values: float | None) -> Reported:
    base: dict[str, Any] = dict.fromkeys(Reported.__dataclass_fields__)
    return Reported(**{**base, **values})


def _review(
    t: Any,
    point_yaml: dict[str, Any] | None,
    reported: Reported | None = None,
    recount: Recount | None = None,
    benchmark: SuperPass | None = None,
) -> tuple[dict[str, Any] | None, dict[str, list[Finding]]]:
    review = review_steady_state(
        POINT,
        t,
        point_yaml,
        reported or _reported(),
        recount or Recount(),
        benchmark=benchmark,
        minimum_s=MINIMUM_S,
        tolerance=0.02,
    )
    by_rule: dict[str, list[Finding]] = {}
    for f in review.findings:
        by_rule.setdefault(f.rule, []).append(f)
    return review.document, by_rule


def test_a_block_copied_from_the_events_agrees() -> None:
    doc, rules = _review(STEADY, _declared(_found(STEADY)))
    assert doc is not None and doc["declared"]["status"] == "windowable"
    assert [f.severity for f in rules["steady-state-declared"]] == [Severity.INFO]
    [facts] = rules["steady-state-window-facts"]
    assert facts.severity == Severity.INFO and "n_samples: declared" in facts.message
    [detected] = rules["steady-state-detected"]
    assert "The events show windowable, STEADY STATE" in detected.message
    assert "the §6.2 minimum is 30 s" in detected.message


def test_a_level_shift_declared_as_steady_is_a_warning_with_both_sides() -> None:
    found = _found(SHIFTED)
    assert found["verdict"] == "anomaly"
    _, rules = _review(SHIFTED, _declared(found, verdict="STEADY STATE"))
    [verdict] = rules["steady-state-declared"]
    assert verdict.severity == Severity.WARNING
    assert "verdict: declared 'STEADY STATE', the events show 'anomaly'" in verdict.message
    assert "level shift at super-pass" in rules["steady-state-detected"][0].message


def test_a_declared_window_the_events_do_not_show() -> None:
    found = _found(STEADY)
    _, rules = _review(
        STEADY, _declared(found, window={"super_pass_start": 3, "super_pass_end": 8})
    )
    [window] = rules["steady-state-declared"]
    assert (
        window.severity == Severity.WARNING
        and "window: declared super-passes 3–8" in window.message
    )
    # And a state the events contradict.
    _, rules = _review(SHIFTED, _declared(_found(SHIFTED), state={"tpot_p50": "Drifting Up"}))
    assert any(
        "tpot_p50: declared 'Drifting Up', the events show 'Plateau'" in f.message
        for f in rules["steady-state-declared"]
    )


def test_a_declared_window_longer_than_its_super_passes_is_an_error() -> None:
    found = _found(STEADY)
    stretched = found["window"]["duration_s"] * 3
    _, rules = _review(STEADY, _declared(found, window={"duration_s": stretched}))
    [facts] = rules["steady-state-window-facts"]
    assert facts.severity == Severity.ERROR
    assert f"duration_s: declared {stretched:,.3f} s, their issue-time span" in facts.message
    _, rules = _review(STEADY, _declared(found, window={"n_samples": 5000}))
    assert (
        "n_samples: declared 5,000, in those super-passes"
        in rules["steady-state-window-facts"][0].message
    )
    # Super-passes the run never had.
    _, rules = _review(STEADY, _declared(found, window={"super_pass_end": 40}))
    [missing] = rules["steady-state-window-facts"]
    assert (
        missing.severity == Severity.ERROR
        and "they hold 2,000 tracked requests, 20 super-passes" in missing.message
    )


def test_a_windowable_point_s_numbers_are_the_window_s_or_the_whole_run_s() -> None:
    found = _found(STEADY)
    m = found["metrics"]
    window_numbers = _reported(
        ttft_p90_ms=m["ttft_p90_ms"], tpot_p90_ms=m["tpot_p90_ms"], system_tps=m["system_tps"]
    )
    _, rules = _review(STEADY, _declared(found), window_numbers)
    [basis] = rules["steady-state-window-metrics"]
    assert basis.severity == Severity.INFO and "(the window's)" in basis.message
    whole = Recount(
        ttft_p90_ms=40.0, tpot_p90_ms=6.0, total_output_tokens=100_000, events_duration_ms=50_000
    )
    _, rules = _review(
        STEADY, _declared(found), _reported(ttft_p90_ms=40.0, tpot_p90_ms=6.0), whole
    )
    [whole_basis] = rules["steady-state-window-metrics"]
    # The whole run's numbers on a windowable point: not its official ones (§2.3).
    assert whole_basis.severity == Severity.WARNING and "(the whole run's)" in whole_basis.message
    assert "its official numbers are the window's" in whole_basis.message
    assert f"over the window {m['tpot_p90_ms']:,.3f} ms" in whole_basis.message
    _, rules = _review(
        STEADY, _declared(found), _reported(tpot_p90_ms=m["tpot_p90_ms"] * 0.5), whole
    )
    [unsupported] = rules["steady-state-window-metrics"]
    assert unsupported.severity == Severity.WARNING
    assert unsupported.message.startswith("TPOT P90 of the summary are neither")


def test_without_a_super_pass_size_nothing_is_analysed() -> None:
    assert super_pass_size({"runtime_settings": {"min_sample_count": 13368}}) == 13368
    assert super_pass_size({"steady_state": {"window": {"super_pass_size": 64}}}) == 64
    assert super_pass_size({"runtime_settings": {"min_sample_count": None}}) is None
    doc, rules = _review(STEADY, {"runtime_settings": {}})
    assert doc is None
    assert rules["steady-state-detected"][0].message.startswith(
        "Not analysed: the portal knows no super-pass size for the point's dataset and "
        "point.yaml states none"
    )


def test_the_benchmark_s_super_pass_is_one_pass_over_the_dataset_unless_defined() -> None:
    assert benchmark_super_pass("cnn_dailymail", {}) == SuperPass(
        13368, "one pass over cnn_dailymail"
    )
    defined = {"cnn_dailymail": (668, "WG decision of 2026-11-02")}
    assert benchmark_super_pass("cnn_dailymail", defined) == SuperPass(
        668, "the benchmark definition for cnn_dailymail (WG decision of 2026-11-02)"
    )
    assert benchmark_super_pass("a_private_set", {}) is None
    assert benchmark_super_pass(None, defined) is None


def test_the_events_are_cut_at_the_benchmark_s_size_not_the_declared_one() -> None:
    declared = _declared(_found(STEADY))  # super-passes of 100, as the submitter ran it
    benchmark = SuperPass(500, "one pass over a_set")
    doc, rules = _review(STEADY, declared, benchmark=benchmark)
    assert doc is not None
    assert doc["method"]["super_pass_size"] == 500
    assert doc["n_super_passes"] == 4  # one a warm-up: three left, fewer than four
    assert doc["status"] == "insufficient_passes"
    assert doc["super_pass_basis"] == "one pass over a_set"
    [size] = rules["steady-state-super-pass"]
    assert size.severity == Severity.WARNING and size.fix
    assert size.message == (
        "point.yaml's super-passes are 100 requests; one pass over a_set is 500, and the "
        "events were analysed with super-passes of 500"
    )
    assert "super-pass size: one pass over a_set" in rules["steady-state-detected"][0].message
    # The same size declared: nothing to say about it.
    _, rules = _review(STEADY, declared, benchmark=SuperPass(100, "one pass over a_set"))
    assert "steady-state-super-pass" not in rules


def test_without_a_known_size_the_declared_one_is_used_and_said_so() -> None:
    doc, rules = _review(STEADY, _declared(_found(STEADY)))
    assert doc is not None and doc["method"]["super_pass_size"] == 100
    assert doc["super_pass_basis"].startswith("as point.yaml states")
    assert "steady-state-super-pass" not in rules


def test_without_a_declared_block_the_events_are_still_analysed() -> None:
    doc, rules = _review(STEADY, {"runtime_settings": {"min_sample_count": 100}})
    assert doc is not None and doc["status"] == "windowable" and doc["declared"] is None
    assert "point.yaml declares no steady_state block" in rules["steady-state-detected"][0].message
    assert set(rules) == {"steady-state-detected"}  # the summary reports nothing here
    # The events say windowable whatever point.yaml declares: the summary's numbers are
    # set beside the window's.
    whole = Recount(tpot_p90_ms=6.0)
    _, rules = _review(
        STEADY, {"runtime_settings": {"min_sample_count": 100}}, _reported(tpot_p90_ms=6.0), whole
    )
    [basis] = rules["steady-state-window-metrics"]
    assert basis.severity == Severity.WARNING
    assert "TPOT P90 of the summary are the whole" in basis.message


@pytest.mark.parametrize("status", ["insufficient_passes", "insufficient_duration"])
def test_a_status_the_events_do_not_support(status: str) -> None:
    _, rules = _review(STEADY, _declared(_found(STEADY), status=status))
    [f] = rules["steady-state-declared"]
    assert (
        f.severity == Severity.WARNING
        and f"status: declared '{status}', the events show 'windowable'" in f.message
    )
    assert "steady-state-window-metrics" not in rules  # only a windowable point's numbers
