"""The adapter reports exactly what the official checker reports, and stores the
values it derives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from submission_checker.checker import SubmissionChecker
from submission_checker.models.loader import load_result_summary
from submission_checker.models.regions import classify_concurrency, compute_regions

from app.checks.domain.compliance.official import (
    Registries,
    point_label_for,
    run_official_checks,
)
from app.checks.domain.findings import Severity
from app.demo.bundles import BundleFactory, CurveSpec, SeedSetSpec, SystemSpec
from tests.support.bundles import BREAKAGES, EXPECTED_RULES, broken, one_node_at_r8

CURVES = {
    "dedicated-offline": (CurveSpec(),),
    "elected-offline": (CurveSpec(offline="elected"),),
    "gpt-oss": (CurveSpec(model="gpt-oss-120b"),),
    "agentic": (CurveSpec(model="kimi-k3", offline="none"),),
    "two-curves": (CurveSpec(), CurveSpec(model="gpt-oss-120b", speed=0.4)),
    "older-summaries": (CurveSpec(older_summaries=True),),
}


def _official(root: Path) -> list[tuple[str, str, str, str]]:
    report = SubmissionChecker(root).run()
    return [(r.rule, r.key, r.severity.value, r.message) for r in report.results]


@pytest.mark.parametrize("name", sorted(CURVES))
def test_realistic_bundles_pass_with_no_warnings(name: str, tmp_path: Path) -> None:
    root = BundleFactory(curves=CURVES[name]).build(tmp_path)
    report = run_official_checks(root.parent)
    problems = [f"{f.rule}: {f.message}" for f in report.findings if f.severity != Severity.INFO]
    assert problems == []
    assert report.checker_version == "1.5.3.0"
    expected_points = 7 if name in ("elected-offline", "agentic") else 8
    assert len(report.curves[0].points) == expected_points


def test_a_newer_seed_set_file_replaces_the_one_the_checker_ships(tmp_path: Path) -> None:
    newer = SeedSetSpec("B", {"scheduler_rng_seed": 1, "sample_index_rng_seed": 2, "model_seed": 3})
    root = BundleFactory(target_cohort="2027-01-C0", seed_set=newer).build(tmp_path / "b")
    shipped = run_official_checks(root).findings  # the pinned checker ships set A only
    assert {f.rule for f in shipped if f.severity == Severity.ERROR} == {"seed-set-membership"}

    registry = tmp_path / "seed_sets.yaml"
    registry.write_text(
        "cohort:\n  cohort-id: 2026-12-C1\n  seed_sets:\n"
        "    - {id: B, scheduler_rng_seed: 1, sample_index_rng_seed: 2, model_seed: 3}\n"
    )
    report = run_official_checks(root, Registries(seed_sets=registry))
    assert [f.rule for f in report.findings if f.severity != Severity.INFO] == []
    adopted = [f for f in report.findings if f.rule == "seed-set-adoption"]
    assert adopted and all(f.severity == Severity.INFO for f in adopted)

    registry.write_text("cohort: [not, a, mapping]\n")
    broken_registry = run_official_checks(root, Registries(seed_sets=registry))
    assert "seed-set-registry" in {f.rule for f in broken_registry.findings}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_findings_equal_the_official_report(breakage: str, tmp_path: Path) -> None:
    root = BundleFactory().build(tmp_path, edits=broken(breakage))
    ours = run_official_checks(root)
    theirs = _official(root)
    assert [(f.rule, f.key, f.severity.value, f.message) for f in ours.findings] == theirs
    if breakage in EXPECTED_RULES:
        assert EXPECTED_RULES[breakage] in {f.rule for f in ours.findings if f.severity == "error"}


def test_finish_reasons_are_read_where_the_summary_has_them(tmp_path: Path) -> None:
    newer = CurveSpec(cut_short_from=512)
    older = CurveSpec(model="gpt-oss-120b", older_summaries=True)
    report = run_official_checks(BundleFactory(curves=(newer, older)).build(tmp_path))
    for point in report.points:
        if point.model == "gpt-oss-120b":
            assert point.finish_reason_counts is None  # an older client's summary: no note
            continue
        counts = point.finish_reason_counts
        assert counts is not None and set(counts) == {"stop", "length"}
        share = counts["length"] / sum(counts.values())
        assert share == pytest.approx(0.12 if point.concurrency >= 512 else 0.02, abs=0.01)


def test_newer_summary_fields_are_read_and_older_summaries_have_none(tmp_path: Path) -> None:
    newer = CurveSpec()
    older = CurveSpec(model="gpt-oss-120b", older_summaries=True)
    root = BundleFactory(curves=(newer, older)).build(tmp_path)
    report = run_official_checks(root)
    for point in report.points:
        if point.model == "gpt-oss-120b":
            assert (point.input_sequence_lengths, point.early_stopping, point.run_config) == (
                None, None, None,
            )  # fmt: skip
            continue
        summary = json.loads(
            (root / "results" / point.system / point.model / point.dir_name
             / "result_summary.json").read_text()
        )  # fmt: skip
        lengths = point.input_sequence_lengths
        assert lengths is not None
        assert lengths.avg == summary["input_sequence_lengths"]["avg"]
        assert lengths.p90 == summary["input_sequence_lengths"]["percentiles"]["90.0"]
        # Early-stopping bounds in ms under the checker's canonical keys, never below P90.
        assert point.early_stopping is not None
        bound = point.early_stopping["tpot_ms"]["90"]
        assert bound == summary["tpot"]["early_stopping_percentiles"]["90.0"] / 1e6
        assert bound >= point.percentiles["tpot_ms"]["90"]
        assert point.run_config is not None and point.run_config == summary["run_config"]
        assert point.run_config["load_pattern"]["target_concurrency"] == point.concurrency


def test_each_accuracy_entry_and_what_the_gate_compared(tmp_path: Path) -> None:
    def edit(root: Path) -> None:
        # One gpt-oss dataset well below the line: the sample-weighted mean still passes.
        for path in root.glob("results/*/gpt-oss-120b/*/accuracy_results.json"):
            doc = json.loads(path.read_text())
            for entry in doc["accuracy_scores"]:
                if entry["dataset_name"] == "aime25":
                    entry["score"] = {"exact_match": 0.70}  # a fraction, read as 70 %
            path.write_text(json.dumps(doc))

    root = BundleFactory(curves=(CurveSpec(), CurveSpec(model="gpt-oss-120b"))).build(tmp_path)
    edit(root)
    report = run_official_checks(root)
    assert [f.rule for f in report.findings if f.severity == Severity.ERROR] == []
    carried = [p for p in report.points if p.accuracy_detail is not None]
    assert {p.model for p in carried} == {"llama3_1-8b", "gpt-oss-120b"}
    for point in report.points:
        assert (point.accuracy_detail is None) == (point.accuracy == "none")
    gpt = next(p for p in carried if p.model == "gpt-oss-120b")
    assert gpt.accuracy_detail is not None
    names = [d.dataset_name for d in gpt.accuracy_detail.datasets]
    assert names == ["aime25", "gpqa", "livecodebench", "math500", "performance"]
    assert [d.inline for d in gpt.accuracy_detail.datasets] == [False] * 4 + [True]
    assert gpt.accuracy_detail.datasets[0].n_repeats == 8
    (gate,) = gpt.accuracy_detail.gate
    assert gate.metric == "exact_match" and gate.lower == pytest.approx(83.13 * 0.99)
    # The gate's own aggregate: weighted by num_samples, the inline entry included.
    entries = [(0.70, 30), (83.5, 198), (83.1, 880), (83.4, 1085), (84.0, gpt.n_samples_completed)]
    mean = sum(v * w for v, w in entries) / sum(w for _, w in entries)
    assert gate.value == pytest.approx(mean) and gate.meets
    llama = next(p for p in carried if p.model == "llama3_1-8b")
    assert llama.accuracy_detail is not None
    assert {g.metric for g in llama.accuracy_detail.gate} == {
        "rouge1", "rouge2", "rougel", "rougelsum", "gen_len",
    }  # fmt: skip
    assert all(g.meets for g in llama.accuracy_detail.gate)
    gen_len = llama.accuracy_detail.gated("gen_len")
    assert gen_len is not None and gen_len.upper == pytest.approx(8167644 * 1.1)


def test_derived_values_are_the_checkers(tmp_path: Path) -> None:
    root = BundleFactory(curves=(CurveSpec(), CurveSpec(model="gpt-oss-120b"))).build(tmp_path)
    report = run_official_checks(root)
    assert len(report.points) == 16
    for point in report.points:
        summary_path = (
            root / "results" / point.system / point.model / point.dir_name / "result_summary.json"
        )
        summary, _ = load_result_summary(summary_path)
        assert summary is not None
        assert point.system_tps == summary.system_tps
        assert point.tpot_p90_ms == summary.tpot_p90_ms
        assert summary.tpot_p90_ms is not None
        assert point.tps_per_user == 1000 / summary.tpot_p90_ms
        assert point.ttft_p90_ms == summary.ttft_p90_ms
        assert point.e2e_avg_interactivity == summary.e2e_avg_interactivity
        # One full node of the worked example: 10.08 kW (bundle-format digest §2.3).
        assert point.point_power_kw == 10.08
        assert point.system_tps_per_kw == pytest.approx(summary.system_tps / 10.08, rel=1e-12)
    for curve in report.curves:
        assert curve.c_max == 1024 and curve.c_min == 1
        regions = compute_regions(1024, 1)
        for point in curve.points:
            assert point.region == classify_concurrency(point.concurrency, regions)
    system = report.systems[0]
    assert system.provisioned_power_kw == 10.08
    assert system.accelerator_count == 8
    assert system.accelerator_model == "NVIDIA H200"


def test_stored_copies_that_disagree_are_reported_not_used(tmp_path: Path) -> None:
    root = BundleFactory().build(tmp_path, edits=broken("inflated-system-tps"))
    report = run_official_checks(root)
    bad = next(
        f
        for f in report.findings
        if f.rule == "metric-consistency-system-tps" and f.severity == "error"
    )
    point = next(p for p in report.points if p.label == bad.point)
    assert bad.path is not None
    stored = json.loads((root / bad.path).read_text())["system_tps"]
    assert point.system_tps != pytest.approx(stored)  # the derived value, as the checker has it


def test_accuracy_results_are_attributed_to_their_point(tmp_path: Path) -> None:
    """The checker reports every accuracy-gate result at the first accuracy point's
    path (bundle-format digest §3.5); the portal names the point that failed."""
    root = BundleFactory().build(tmp_path)
    points = sorted(
        (p for p in root.glob("results/*/*/r*") if (p / "accuracy_results.json").exists()),
        key=lambda p: int(p.name[1:]),
    )
    target = points[2]  # not the first accuracy point
    path = target / "accuracy_results.json"
    data = json.loads(path.read_text())
    for entry in data["accuracy_scores"]:
        if isinstance(entry.get("score"), dict):
            entry["score"]["rouge1"] = 30.0
    path.write_text(json.dumps(data))
    report = run_official_checks(root)
    failed = [f for f in report.findings if f.rule == "accuracy-gate" and f.severity == "error"]
    assert len(failed) == 1  # one aggregated rouge1 for the point
    assert {f.point for f in failed} == {
        f"{target.parent.parent.name}/{target.parent.name}/{target.name}"
    }
    # The path the official checker names.
    assert all((f.path or "").endswith(f"{points[0].name}/results.json") for f in failed)
    by_dir = {p.dir_name: p.accuracy for p in report.points}
    assert by_dir[target.name] == "failed"
    assert by_dir[points[0].name] == "passed"


def test_point_labels_come_from_result_paths() -> None:
    assert point_label_for("results/sys/llama3_1-8b/r16/point.yaml") == "sys/llama3_1-8b/r16"
    assert point_label_for("results/sys/llama3_1-8b") is None
    assert point_label_for("results/sys/llama3_1-8b/notes/x") is None
    assert point_label_for(None) is None


def test_a_wrong_model_name_lists_every_point_that_declares_it(tmp_path: Path) -> None:
    """The checker reports `model-name-valid` at one point; every point needs the fix."""
    from app.demo.bundles import BundleFactory

    root = BundleFactory().build(tmp_path, edits=broken("noncanonical-model-name"))
    (finding,) = [
        f for f in run_official_checks(root).findings
        if f.rule == "model-name-valid" and f.severity == "error"
    ]  # fmt: skip
    assert "declared by 8 points of this curve (r1, r8, r16, r64" in (finding.fix or "")
    assert finding.message.startswith("model_name 'llama3.1-8b' is not an allowed model")


def _model_named(folder: str, model_name: str) -> Callable[[Path], None]:
    """The curve's model folder renamed to *folder*, each point declaring *model_name*."""

    def edit(root: Path) -> None:
        [model_dir] = root.glob("results/*/llama3_1-8b")
        for point in model_dir.glob("r*/point.yaml"):
            text = point.read_text().replace("model_name: llama3_1-8b", f"model_name: {model_name}")
            point.write_text(text)
        model_dir.rename(model_dir.with_name(folder))

    return edit


def _fixes(root: Path) -> dict[str, str | None]:
    return {
        f.rule: f.fix
        for f in run_official_checks(root).findings
        if f.rule in ("model-name-valid", "model-name-consistency") and f.severity == "error"
    }


def test_a_model_name_fix_names_every_place_the_name_lives(tmp_path: Path) -> None:
    """A model's name is point.yaml's model_name and the model folder's name: each fix
    says every place to change, the folder included."""
    # Both spelled the dotted way: model_name in every point, and the folder too.
    both = BundleFactory().build(
        tmp_path / "a", edits=(_model_named("llama3.1-8b", "llama3.1-8b"),)
    )
    fixes = _fixes(both)
    assert set(fixes) == {"model-name-valid"}  # folder and name agree: no consistency error
    assert "correct it in each point.yaml" in (fixes["model-name-valid"] or "")
    assert "Rename the model folder results/Acme_H200_x8/llama3.1-8b/ to llama3_1-8b/ as well" in (
        fixes["model-name-valid"] or ""
    )
    # A canonical model_name in a folder named otherwise: rename the folder.
    folder = BundleFactory().build(tmp_path / "b", edits=(_model_named("llama-8b", "llama3_1-8b"),))
    assert _fixes(folder)["model-name-consistency"] == (
        "Rename the model folder results/Acme_H200_x8/llama-8b/ to llama3_1-8b/, the "
        "model_name its points declare."
    )


def test_a_point_on_part_of_the_system_is_read_as_that_part(tmp_path: Path) -> None:
    """nodes_used engages one node of two at r8: the checker's power denominator is half,
    and the portal keeps the engaged share and accelerators beside it (§4.5.3)."""
    two_nodes = SystemSpec(nodes=2, accelerators_per_node=8)
    root = BundleFactory(system=two_nodes).build(tmp_path, edits=(one_node_at_r8,))
    report = run_official_checks(root)
    assert not [f for f in report.findings if f.severity == Severity.ERROR]
    [curve] = report.curves
    points = {p.dir_name: p for p in curve.points}
    assert (points["r8"].engaged_share, points["r8"].accelerators_engaged) == (0.5, 8)
    whole_power = points["r16"].point_power_kw
    assert whole_power is not None
    assert points["r8"].point_power_kw == pytest.approx(whole_power / 2)
    whole = [p for name, p in points.items() if name != "r8"]
    assert all(p.engaged_share is None and p.accelerators_engaged is None for p in whole)
