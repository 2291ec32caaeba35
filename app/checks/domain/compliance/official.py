"""Adapter around the pinned official checker (`endpoints-submission-cli`).

The checker is the reference implementation of every automated rule (architecture,
decision 1). This module runs it unchanged and turns its report into portal
:class:`~app.checks.domain.findings.Finding` records. It also keeps what the checker derives
on the way (regions, per-point metrics, power denominators) by listening at the
checker's own steps, so the numbers the portal stores are the checker's numbers, not a
second implementation of them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from submission_checker.accuracy_targets import get_thresholds
from submission_checker.checker import SubmissionChecker
from submission_checker.layout import canonical_model_name
from submission_checker.models import PointPower
from submission_checker.models import Severity as OfficialSeverity
from submission_checker.models.aggregate.context import ModelContext, _weighted_mean
from submission_checker.models.file.point_config import OFFLINE_DEDICATED
from submission_checker.models.regions import classify_concurrency

from app.checks.domain.findings import Finding, Severity, Source
from app.core.accuracy import GatedMetric, PointAccuracy, dataset_scores, on_threshold_scale
from app.core.bundle_files import read_mapping
from app.core.fast_yaml import read_official_tools_with_libyaml
from app.core.finish import finish_reason_counts
from app.core.numbers import whole_number
from app.core.run_summary import SequenceLengths, early_stopping_ms, run_config
from app.core.views import SHOWN_PERCENTILES

CHECKER_DISTRIBUTION = "endpoints-submission-cli"
AGENTIC_LOAD_PATTERN = "agentic_inference"
_POINT_DIR = re.compile(r"r(\d+)")

read_official_tools_with_libyaml()  # the same values, faster (app.core.fast_yaml)

# The checker reports these for every accuracy-carrying point at one shared path
# (bundle-format digest §3.5); the adapter attributes them to their real point.
_PER_POINT_ACCURACY_RULES = frozenset({"accuracy-gate", "accuracy-sample-count"})


def _finite(value: float | None) -> float | None:
    """NaN and infinities in a submitted file are stored as absent, never as numbers."""
    return value if value is not None and math.isfinite(value) else None


def checker_version() -> str:
    return version(CHECKER_DISTRIBUTION)


@dataclass
class ParsedPoint:
    """One Pareto point with the values the official checker derives for it."""

    system: str
    model: str
    dir_name: str
    concurrency: int
    offline: str
    load_pattern: str
    region: str | None
    declared_region: str | None
    dataset: str | None
    target_cohort: str | None
    seed_set: str | None
    system_tps: float
    tps_per_user: float | None
    tpot_p90_ms: float | None
    ttft_p90_ms: float | None
    e2e_avg_interactivity: float | None
    point_power_kw: float | None
    system_tps_per_kw: float | None
    n_samples_completed: int
    n_samples_issued: int
    n_samples_failed: int
    duration_ms: float
    total_output_tokens: int
    accuracy: str = "none"
    # {"ttft_ms" | "tpot_ms" | "latency_ms": {"50" | "90" | "95" | "99": ms}}
    percentiles: dict[str, dict[str, float]] = field(default_factory=dict)
    # How the responses ended (newer summaries' finish_reason_counts; None in older ones).
    finish_reason_counts: dict[str, int] | None = None
    # Newer summaries' input_sequence_lengths, early_stopping_percentiles (ms, as
    # ``percentiles``) and run_config (app.core.run_summary); None in older ones.
    input_sequence_lengths: SequenceLengths | None = None
    early_stopping: dict[str, dict[str, float]] | None = None
    run_config: dict[str, Any] | None = None
    # Each accuracy entry and what the gate compared (app.core.accuracy), where it has them.
    accuracy_detail: PointAccuracy | None = None
    # Where nodes_used engages fewer nodes than the system provisions (§4.5.3).
    engaged_share: float | None = None
    accelerators_engaged: int | None = None

    @property
    def label(self) -> str:
        return f"{self.system}/{self.model}/{self.dir_name}"


def engaged_part(power: Any, nodes_by_set: dict[int, int]) -> tuple[float, int | None] | None:
    """The share of the provisioned nodes a point engages and their accelerators, from
    the checker's own reading of its ``nodes_used`` (node set → nodes) and the power
    descriptor's node sets; None when it engages them all (§4.5.3)."""
    sets = power.sets
    engaged = {s.node_set_id: nodes_by_set.get(s.node_set_id, s.nodes_provisioned) for s in sets}
    provisioned = sum(s.nodes_provisioned for s in sets)
    used = sum(engaged.values())
    if not provisioned or used >= provisioned:
        return None
    if any(s.accelerators_per_node is None for s in sets):
        return used / provisioned, None
    accelerators = sum(engaged[s.node_set_id] * s.accelerators_per_node for s in sets)
    return used / provisioned, accelerators


@dataclass
class ParsedCurve:
    system: str
    model: str
    c_max: int | None = None
    c_min: int | None = None
    c_min_overridden: bool = False
    regions: dict[str, list[int]] | None = None
    points: list[ParsedPoint] = field(default_factory=list)

    @property
    def is_agentic(self) -> bool:
        patterns = {p.load_pattern for p in self.points if p.offline != OFFLINE_DEDICATED}
        return patterns == {AGENTIC_LOAD_PATTERN}

    @property
    def dataset(self) -> str | None:
        return next((p.dataset for p in self.points if p.dataset), None)


@dataclass
class ParsedSystem:
    dir_name: str
    system_name: str | None = None
    shortened_name: str | None = None
    submitter_org: str | None = None
    division: str | None = None
    availability: str | None = None
    accelerator_model: str | None = None
    accelerator_count: int | None = None
    node_count: int | None = None
    serving_framework: str | None = None
    provisioned_power_kw: float | None = None
    target_availability_date: dt.date | None = None
    # What the checker filled from the rules' defaults (its power-estimated warning).
    power_estimates: list[str] = field(default_factory=list)


@dataclass
class OfficialReport:
    checker_version: str
    root: Path
    findings: list[Finding]
    systems: list[ParsedSystem]
    curves: list[ParsedCurve]

    @property
    def points(self) -> list[ParsedPoint]:
        return [p for c in self.curves for p in c.points]


@dataclass(frozen=True)
class Registries:
    """The MLCommons lists the official checker reads: published seed sets (§4.6) and
    approved drafters. ``None`` keeps the copy the pinned checker ships; a file replaces
    it, so a set published after that release can be adopted without a new checker."""

    seed_sets: Path | None = None
    approved_drafters: Path | None = None


class _ListeningChecker(SubmissionChecker):
    """The official checker, unchanged, with a note taken at each derivation step."""

    def __init__(self, root: Path, registries: Registries) -> None:
        super().__init__(
            root,
            seed_sets_path=registries.seed_sets,
            approved_drafters_path=registries.approved_drafters,
        )
        self.power_by_system: dict[str, Any] = {}
        self.curves: dict[tuple[str, str], ParsedCurve] = {}
        self.accuracy_by_curve: dict[tuple[str, str], tuple[dict[int, Any], Path | None]] = {}

    def _curve(self, model_dir: Path) -> ParsedCurve:
        key = (model_dir.parent.name, model_dir.name)
        if key not in self.curves:
            self.curves[key] = ParsedCurve(system=key[0], model=key[1])
        return self.curves[key]

    def _load_system_power(self, system_dir: Path, facts: Any) -> Any:
        computation, results = super()._load_system_power(system_dir, facts)
        self.power_by_system[system_dir.name] = computation
        return computation, results

    def _derive_regions(
        self,
        c_max: Any,
        loaded: Any,
        unparsed: Any,
        point_dir_count: Any,
        model_dir: Path,
        sd_path: Any,
        c_min_override: Any = None,
    ) -> Any:
        regions, results = super()._derive_regions(
            c_max, loaded, unparsed, point_dir_count, model_dir, sd_path, c_min_override
        )
        curve = self._curve(model_dir)
        curve.c_max = c_max
        if regions is not None:
            curve.c_min = regions.low_latency.end
            curve.c_min_overridden = regions.c_min_overridden
            curve.regions = {
                name: [bounds.start, bounds.end]
                for name, bounds in (
                    ("low_latency", regions.low_latency),
                    ("low_concurrency", regions.low_concurrency),
                    ("med_concurrency", regions.med_concurrency),
                    ("high_concurrency", regions.high_concurrency),
                    ("margin", regions.margin),
                )
            }
        self._regions = regions
        return regions, results

    def _check_point(self, point: Any, regions: Any, loaded_points: Any, power: Any = None) -> Any:
        before = len(loaded_points)
        results = super()._check_point(point, regions, loaded_points, power)
        if len(loaded_points) == before:
            return results  # no summary loaded: nothing was derived for this point
        config, summary = loaded_points[-1]
        model_dir = point.point_dir.parent
        point_power_kw = None
        engaged = None
        if power is not None:
            # The same object the checker builds for `metric-consistency-tps-per-kw`.
            engagement = PointPower(
                config=config,
                power=power,
                parallelism=None,
                system_tps=summary.system_tps,
                stored_tps_per_kw=None,
                yaml_path=point.yaml_path,
                summary_path=point.point_dir / "result_summary.json",
            )
            nodes = engagement._nodes_by_set
            if nodes is not None:
                point_power_kw = power.point_power_kw(nodes)
                engaged = engaged_part(power, nodes)
        tpot_p90 = _finite(summary.tpot_p90_ms)
        system_tps = _finite(summary.system_tps) or 0.0
        extra = summary.model_extra or {}
        self._curve(model_dir).points.append(
            ParsedPoint(
                system=model_dir.parent.name,
                model=model_dir.name,
                dir_name=point.point_dir.name,
                concurrency=config.concurrency,
                offline=config.offline or "none",
                load_pattern=config.runtime_settings.load_pattern,
                region=classify_concurrency(config.concurrency, regions) if regions else None,
                declared_region=config.region,
                dataset=config.dataset or None,
                target_cohort=config.target_cohort,
                seed_set=config.seed_set,
                system_tps=system_tps,
                tps_per_user=1000 / tpot_p90 if tpot_p90 and tpot_p90 > 0 else None,
                tpot_p90_ms=tpot_p90,
                ttft_p90_ms=_finite(summary.ttft_p90_ms),
                e2e_avg_interactivity=_finite(summary.e2e_avg_interactivity),
                point_power_kw=point_power_kw,
                system_tps_per_kw=(
                    system_tps / point_power_kw if point_power_kw and point_power_kw > 0 else None
                ),
                n_samples_completed=summary.n_samples_completed,
                n_samples_issued=summary.n_samples_issued,
                n_samples_failed=summary.n_samples_failed,
                duration_ms=_finite(summary.duration_ms) or 0.0,
                total_output_tokens=summary.total_output_tokens,
                percentiles=_percentiles(summary),
                finish_reason_counts=finish_reason_counts(extra.get("finish_reason_counts")),
                input_sequence_lengths=SequenceLengths.of(extra.get("input_sequence_lengths")),
                early_stopping=early_stopping_ms(
                    {
                        "ttft_ms": _extra(summary.ttft),
                        "tpot_ms": _extra(summary.tpot),
                        "latency_ms": _extra(summary.latency),
                    }  # fmt: skip
                ),
                run_config=run_config(extra.get("run_config")),
                engaged_share=engaged[0] if engaged else None,
                accelerators_engaged=engaged[1] if engaged else None,
            )
        )
        return results

    def _load_curve_accuracy(self, points: Any) -> Any:
        by_concurrency, first_dir, results = super()._load_curve_accuracy(points)
        if points:
            model_dir = points[0][0].parent
            self.accuracy_by_curve[(model_dir.parent.name, model_dir.name)] = (
                by_concurrency,
                first_dir,
            )
        return by_concurrency, first_dir, results


@dataclass
class _GateListener:
    """Just enough of a ``ModelContext`` to run its per-point accuracy gate alone."""

    model_dir: Path
    accuracy_dir: Path | None
    _check_results: list[Any] = field(default_factory=list)


def _gate_one_point(model_dir: Path, accuracy_dir: Path | None, accuracy: Any) -> list[Any]:
    listener = _GateListener(model_dir=model_dir, accuracy_dir=accuracy_dir)
    ModelContext._gate_accuracy(listener, accuracy)  # type: ignore[arg-type]
    return listener._check_results


def _extra(block: Any) -> dict[str, Any]:
    return dict(block.model_extra or {}) if block is not None else {}


def _accuracy_detail(model_dir_name: str, accuracy: Any) -> PointAccuracy:
    """Each entry of the point's accuracy file and each thresholded metric as the
    official gate compares it: the checker's ``metric_scores``, its sample-weighted mean
    (the inline entry included, as the gate does), its reading of a lone unnamed ``score``
    as the model's one metric, and its rescaling (``ModelContext._gate_accuracy``)."""
    per_dataset = accuracy.metric_scores()
    datasets = dataset_scores(accuracy.root, per_dataset)
    target = get_thresholds(model_dir_name)
    if target is None:
        return PointAccuracy(datasets=datasets)
    thresholds, _ = target
    weighted: dict[str, list[tuple[float, float | None]]] = {}
    for name, scores in per_dataset.items():
        raw = accuracy.root.get(name, {}).get("num_samples")
        try:
            weight = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            weight = None
        for metric, value in scores.items():
            weighted.setdefault(metric, []).append((value, weight))
    means = {metric: _weighted_mean(pairs) for metric, pairs in weighted.items()}
    if list(means) == ["score"] and len(thresholds) == 1:
        means = {next(iter(thresholds)): means["score"]}
    gate = []
    for metric, (lower, upper) in thresholds.items():
        found = next((v for k, v in means.items() if k.lower() == metric), None)
        if found is not None and math.isfinite(found):
            gate.append(
                GatedMetric(
                    metric=metric, value=on_threshold_scale(found, lower), lower=lower, upper=upper
                )  # fmt: skip
            )
    return PointAccuracy(datasets=datasets, gate=gate)


def _percentiles(summary: Any) -> dict[str, dict[str, float]]:
    """The summary's stored percentiles (nanoseconds) in milliseconds, as stored: never
    recomputed with another estimator (rules §1.1)."""
    out: dict[str, dict[str, float]] = {}
    for name, stats in (("ttft_ms", summary.ttft), ("tpot_ms", summary.tpot),
                        ("latency_ms", summary.latency)):  # fmt: skip
        values = {}
        for key in SHOWN_PERCENTILES:
            value = _finite(stats.percentiles.get(key))
            if value is not None:
                values[key] = value / 1e6
        if values:
            out[name] = values
    return out


def _relative(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def point_label_for(relative_path: str | None) -> str | None:
    """``results/<system>/<model>/r<N>/…`` → ``<system>/<model>/r<N>``."""
    if not relative_path:
        return None
    parts = relative_path.split("/")
    if len(parts) >= 4 and parts[0] == "results" and _POINT_DIR.fullmatch(parts[3]):
        return "/".join(parts[1:4])
    return None


def _day(text: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if text else None
    except ValueError:  # the checker's availability-date-invalid says so
        return None


def _describe_system(system_dir: Path, power: Any) -> ParsedSystem:
    """Display facts from the first readable point ``system_desc.json`` of a system."""
    system = ParsedSystem(dir_name=system_dir.name)
    if power is not None:
        system.provisioned_power_kw = power.provisioned_power_kw
        system.power_estimates = [str(e) for e in getattr(power, "estimated", None) or []]
    for desc_path in sorted(system_dir.glob("*/r*/system_desc.json")):
        data = read_mapping(desc_path)
        if data is None:
            continue

        def text(key: str, data: dict[str, Any] = data) -> str | None:
            value = data.get(key)
            return value.strip() if isinstance(value, str) and value.strip() else None

        system.system_name = text("system_name")
        system.shortened_name = text("shortened_system_name")
        system.submitter_org = text("submitter_org_names")
        system.division = text("division")
        system.availability = text("system_availability_status")
        system.target_availability_date = _day(text("target_availability_date"))
        system.serving_framework = text("serving_framework")
        nodes_total = 0
        accelerators_total = 0
        for node in data.get("node_types") or []:
            if not isinstance(node, dict):
                continue
            count = node.get("number_of_nodes")
            count = count if isinstance(count, int) and count > 0 else 1
            nodes_total += count
            for acc in node.get("accelerator_info") or []:
                if not isinstance(acc, dict):
                    continue
                per_node = acc.get("accelerators_per_node")
                if isinstance(per_node, int):
                    accelerators_total += count * per_node
                name = acc.get("accelerator_model_name")
                if system.accelerator_model is None and isinstance(name, str) and name.strip():
                    system.accelerator_model = name.strip()
        system.node_count = nodes_total or None
        system.accelerator_count = accelerators_total or None
        break
    return system


_DECLARED_MODEL = re.compile(r"^model_name:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)


def _complete_the_model_name_fixes(findings: list[Finding], root: Path) -> None:
    """A model's name lives in two places, point.yaml's model_name and the model folder's
    name, which must be the same canonical name. The checker reports `model-name-valid`
    at the first point only, with a fix for point.yaml alone, and `model-name-consistency`
    with no fix: each fix here says every place to change (the messages stay the
    checker's own)."""
    for index, finding in enumerate(findings):
        if finding.severity != Severity.ERROR or not finding.path:
            continue
        if finding.rule == "model-name-valid" and finding.path.endswith("point.yaml"):
            extra = _every_point_and_the_folder(root / finding.path)
        elif finding.rule == "model-name-consistency" and not finding.fix:
            extra = _folder_or_name(root / finding.path)
        else:
            continue
        if extra:
            findings[index] = dataclasses.replace(
                finding, fix=f"{finding.fix} {extra}" if finding.fix else extra
            )


def _every_point_and_the_folder(first: Path) -> str | None:
    model_dir = first.parent.parent
    declared = _declared_model(first)
    if declared is None or not model_dir.is_dir():
        return None
    same = sorted(
        (p.parent.name for p in model_dir.glob("*/point.yaml") if _declared_model(p) == declared),
        key=lambda name: whole_number(name[1:]) or 0,
    )
    parts = []
    if len(same) > 1:
        parts.append(
            f"The same model_name is declared by {len(same)} points of this curve "
            f"({', '.join(same)}): correct it in each point.yaml."
        )
    canonical = canonical_model_name(declared)
    if model_dir.name != canonical:
        parts.append(
            f"Rename the model folder results/{model_dir.parent.name}/{model_dir.name}/ to "
            f"{canonical}/ as well: the folder's name and model_name must be the same "
            "(model-name-consistency)."
        )
    return " ".join(parts) or None


def _folder_or_name(model_dir: Path) -> str | None:
    points = sorted(model_dir.glob("*/point.yaml")) if model_dir.is_dir() else []
    declared = next((d for d in map(_declared_model, points) if d), None)
    if declared is None:
        return None
    where = f"results/{model_dir.parent.name}/{model_dir.name}/"
    if declared == canonical_model_name(declared):
        return f"Rename the model folder {where} to {declared}/, the model_name its points declare."
    if model_dir.name == canonical_model_name(model_dir.name):
        return f"Write model_name: {model_dir.name} in every point.yaml of {where}, its name."
    name = canonical_model_name(declared)
    return (
        f"Rename the model folder {where} to {name}/ and write model_name: {name} in every "
        "point.yaml: both must be the same canonical name."
    )


def _declared_model(point_yaml: Path) -> str | None:
    try:
        found = _DECLARED_MODEL.search(point_yaml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return found.group(1) if found else None


def run_official_checks(path: Path, registries: Registries | None = None) -> OfficialReport:
    """Run the pinned official checker on a submission directory (or its org dir)."""
    checker = _ListeningChecker(path.resolve(), registries or Registries())
    report = checker.run()
    root = checker.submission_path

    # Attribute the per-point accuracy results to the point they are really about.
    expected: list[tuple[str, str, str]] = []
    for (system, model), (by_concurrency, first_dir) in sorted(checker.accuracy_by_curve.items()):
        curve = checker.curves.get((system, model))
        model_dir = root / "results" / system / model
        for concurrency in sorted(by_concurrency):
            gate = _gate_one_point(model_dir, first_dir, by_concurrency[concurrency])
            point = next(
                (p for p in (curve.points if curve else []) if p.concurrency == concurrency), None
            )
            if point is not None:
                failed = any(r.severity == OfficialSeverity.ERROR for r in gate)
                gated = any(r.rule == "accuracy-gate" and r.key != "warn-2" for r in gate)
                point.accuracy = "failed" if failed else ("passed" if gated else "carried")
                point.accuracy_detail = _accuracy_detail(model, by_concurrency[concurrency])
                expected.extend((r.rule, r.message, point.label) for r in gate)

    findings: list[Finding] = []
    for result in report.results:
        relative = _relative(result.path, root)
        point_label = point_label_for(relative)
        if result.rule in _PER_POINT_ACCURACY_RULES and expected:
            if (expected[0][0], expected[0][1]) == (result.rule, result.message):
                point_label = expected.pop(0)[2]
        findings.append(
            Finding(
                rule=result.rule,
                key=result.key,
                severity=Severity(result.severity.value),
                title=result.title or result.rule,
                message=result.message,
                fix=result.fix,
                clause=result.spec_ref,
                path=relative,
                point=point_label,
                source=Source.OFFICIAL,
            )
        )

    _complete_the_model_name_fixes(findings, root)
    results_dir = root / "results"
    systems = (
        [
            _describe_system(d, checker.power_by_system.get(d.name))
            for d in sorted(results_dir.iterdir())
            if d.is_dir()
        ]
        if results_dir.is_dir()
        else []
    )
    curves = [c for _, c in sorted(checker.curves.items())]
    for curve in curves:
        curve.points.sort(key=lambda p: p.concurrency)
    return OfficialReport(
        checker_version=checker_version(),
        root=root,
        findings=findings,
        systems=systems,
        curves=curves,
    )
