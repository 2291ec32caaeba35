"""Realistic MLPerf Endpoints v1.0 submission bundles, built with the official builder.

The factory writes one run folder per point as the reference client and a submitter
leave it (``config.yaml``, ``performance/result_summary.json``, ``point.yaml``,
``system_desc.json``, ``system_power.json``, accuracy where the rules ask for it), then
assembles them with ``endpoints_submission_cli``'s own ``build_submission_folder`` so the
layout is exactly what ``submissions create`` uploads. Named breakages then damage the
assembled tree in the ways real submissions go wrong.

Used by the tests and by the demo data; it is not on any request path.
"""

from __future__ import annotations

import copy
import json
import math
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from submission_checker.models.regions import compute_regions, covered_region

from app.core.fast_yaml import read_official_tools_with_libyaml
from app.demo.events import DemoRun, write_events
from harness.analysis.run import point_block, regional_minimum_s
from harness.analysis.steady_state import Method, analyse_steady_state
from harness.curves.bundle import assemble
from harness.metrics.timings import Timings

# The official builder assembles every demo and test bundle, reading each run's YAML
# files several times over: through libyaml, the same values in a fraction of the time.
read_official_tools_with_libyaml()

SEED_SET_A = {
    "scheduler_rng_seed": 10487924139932647040,
    "sample_index_rng_seed": 586478644936801402,
    "model_seed": 9315206023656308754,
}


@dataclass(frozen=True)
class SeedSetSpec:
    """The published seed set a bundle's points bind (``seed_set``) and run with."""

    id: str
    seeds: Mapping[str, int]


# The set MLCommons published for 2026-10-C1 (the pinned checker's registry).
PUBLISHED_SEED_SET = SeedSetSpec("A", SEED_SET_A)

# Turns per conversation in the events of an agentic demo point.
AGENTIC_TURNS = 4

# What each benchmark needs to pass its accuracy gate and query minimums (bundle-format
# digest §6.2, §6.3). Output lengths are typical of the dataset.
BENCHMARKS: dict[str, dict[str, Any]] = {
    "llama3_1-8b": {
        "hf_name": "meta-llama/Llama-3.1-8B-Instruct",
        "dataset": "cnn_dailymail",
        "dataset_size": 13368,
        "min_completed": 13368,
        "osl": 128,
        "isl": 780,
        "accuracy": [
            {
                "dataset_name": "cnn_dailymail",
                "score": {
                    "rouge1": 38.81,
                    "rouge2": 15.93,
                    "rougeL": 24.51,
                    "rougeLsum": 35.80,
                    "gen_len": 8_167_644,
                },
                "num_samples": 13368,
            }
        ],
    },
    "gpt-oss-120b": {
        "hf_name": "openai/gpt-oss-120b",
        "dataset": "mlperf_gpt_oss_performance",
        "dataset_size": 6396,
        "min_completed": 6396,
        "osl": 1800,
        "isl": 1500,
        "accuracy": [
            {
                "dataset_name": "aime25",
                "score": {"exact_match": 84.0},
                "num_samples": 30,
                "n_repeats": 8,
            },
            {
                "dataset_name": "gpqa",
                "score": {"exact_match": 83.5},
                "num_samples": 198,
                "n_repeats": 5,
            },
            {
                "dataset_name": "livecodebench",
                "score": {"exact_match": 83.1},
                "num_samples": 880,
                "n_repeats": 3,
            },
            {"dataset_name": "math500", "score": {"exact_match": 83.4}, "num_samples": 1085},
        ],
    },
    "kimi-k3": {
        "hf_name": "moonshotai/Kimi-K3",
        "dataset": "shopify_product_catalogue_8k",
        "dataset_size": 8000,
        "min_completed": 8000,
        "osl": 472,
        "isl": 6000,
        "agentic": True,
        "inline_score": 0.589,
        "accuracy": [{"dataset_name": "swe_bench", "score": 0.9483, "num_samples": 500}],
    },
}


# The demo's runs are about one pass over their dataset long: too short for the four
# super-passes a steady state needs at one pass each. Rules §2.1 lets a benchmark
# definition set another size, so the demo's definitions set a twentieth of a pass; the
# demo records them (load.py) before its bundles are checked.
DEMO_SUPER_PASSES = {
    bench["dataset"]: bench["dataset_size"] // 20
    for bench in BENCHMARKS.values()
    if not bench.get("agentic")
}
DEMO_SUPER_PASS_SOURCE = (
    "the demo's benchmark definition: a twentieth of a pass, as its runs are one pass long"
)


@dataclass(frozen=True)
class SystemSpec:
    """The system under test; its numbers shape the curve's throughput."""

    name: str = "Acme H200 x8"
    shortened_name: str = "Acme-H200x8"
    org: str = "Acme Corp"
    accelerator: str = "NVIDIA H200"
    accelerator_tdp_w: float = 700
    accelerators_per_node: int = 8
    nodes: int = 1
    c_max: int = 1024
    division: str = "Standardized"
    availability: str = "Available"
    available_by: str = "2027-03-31"  # a Preview's target_availability_date
    framework: str = "vLLM 0.11"
    precision: str = "bf16"
    accelerator_memory: str = "141 GB"
    interconnect: str = "NVLink"
    # The accelerators' TDP taken from the rules' defaults (Appendix D.3, which must have
    # the model): the checker says
    # "power-estimated", and the result is tagged "MLC Estimated Power".
    estimated_power: bool = False
    # Throughput model: per-user speed falls and system throughput saturates with load.
    peak_tps_per_user: float = 190.0
    saturation_tps: float = 42_000.0
    # TTFT model: a base (prefill of one request) and what each further user adds.
    ttft_base_ms: float = 35.0
    ttft_per_user_ms: float = 0.9


@dataclass(frozen=True)
class CurveSpec:
    model: str = "llama3_1-8b"
    # None: the default 7 fixed-concurrency points (1 ULC + 3 regions + 3 choice).
    concurrencies: tuple[int, ...] | None = None
    offline: str = "dedicated"  # "dedicated", "elected", or "none" (agentic curves)
    speed: float = 1.0  # scales the throughput model, to make systems differ
    # The concurrency of the point that carries run events (``events.jsonl.gz``), if any.
    events_at: int | None = None
    # From this concurrency on, this share of the responses ends on the length limit
    # (finish_reason_counts.length); below it, 2 %.
    cut_short_from: int | None = None
    # From this concurrency on the fixed-concurrency points declare a steady-state window
    # shorter than the §6.2 minimum (rules §2.3: low confidence, not the official basis).
    short_window_from: int | None = None
    cut_short_share: float = 0.12
    # The share of accuracy lost per doubling of concurrency (up to 1,024): 0 holds it.
    accuracy_drift: float = 0.0
    # Summaries as older clients wrote them: no finish_reason_counts, input lengths,
    # early-stopping percentiles or run_config.
    older_summaries: bool = False


# An edit of an assembled bundle (a test breaks one with it; the demo needs none).
Edit = Callable[[Path], None]


@dataclass
class BundleFactory:
    """Writes ``<org>/<submission_id>/`` bundles; see :meth:`build`."""

    system: SystemSpec = field(default_factory=SystemSpec)
    curves: tuple[CurveSpec, ...] = (CurveSpec(),)
    submission_id: str = "sub-0001"
    target_cohort: str = "2026-12-C0"
    seed_set: SeedSetSpec = PUBLISHED_SEED_SET

    # ------------------------------------------------------------------ public API

    def build(self, dest: Path, edits: tuple[Edit, ...] = ()) -> Path:
        """Assemble the bundle under *dest*; returns the ``<submission_id>`` directory."""
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            run_dirs = [
                run_dir
                for curve in self.curves
                for _run_id, run_dir in self._write_runs(Path(tmp), curve)
            ]
            root = assemble(
                run_dirs,
                division=self.system.division,
                availability=self.system.availability,
                work_dir=dest,
                submission_id=self.submission_id,
            )
        for curve in self.curves:
            if curve.events_at is not None:
                self._write_events(root, curve, curve.events_at)
        (root / "cli_metadata.json").write_text(
            json.dumps(
                {
                    "command": "create",
                    "cli_version": "1.5.3.0",
                    "most_recent_cli_used": "1.5.3.0",
                    "created_at": "2026-11-25T10:00:00+00:00",
                }
            )
        )
        for edit in edits:
            edit(root)
        return root

    def run_folders(self, dest: Path) -> list[Path]:
        """One run folder per point, as the official client and the submitter leave it
        (what the official CLI's ``runs create --path`` takes), under *dest*."""
        dest.mkdir(parents=True, exist_ok=True)
        return [
            run_dir for curve in self.curves for _run_id, run_dir in self._write_runs(dest, curve)
        ]

    def archive(
        self,
        dest_file: Path,
        fmt: str = "tar.gz",
        layout: str = "org",
        edits: tuple[Edit, ...] = (),
    ) -> Path:
        """Build and pack. ``layout``: ``org`` (as the CLI tars it) or ``submission``."""
        with tempfile.TemporaryDirectory() as tmp:
            root = self.build(Path(tmp), edits)
            base = root.parent if layout == "org" else root
            pack_tree(base, dest_file, fmt, arcname=base.name)
        return dest_file

    # ------------------------------------------------------------------ run folders

    def _concurrencies(self, curve: CurveSpec) -> list[int]:
        if curve.concurrencies is not None:
            return list(curve.concurrencies)
        c_max = self.system.c_max
        return sorted({1, 8, 16, 64, 128, c_max // 2, c_max})

    def _write_runs(self, tmp: Path, curve: CurveSpec) -> list[tuple[str, Path]]:
        bench = BENCHMARKS[curve.model]
        agentic = bool(bench.get("agentic"))
        fixed = self._concurrencies(curve)
        regions = compute_regions(self.system.c_max, min(min(fixed), 32))
        accuracy_at = self._accuracy_points(fixed, regions, curve)
        points: list[tuple[int, str]] = [(c, "none") for c in fixed]
        if curve.offline == "elected":
            points = [(c, "elected" if c == self.system.c_max else "none") for c in fixed]
        elif curve.offline == "dedicated" and not agentic:
            points.append((bench["dataset_size"], "dedicated"))
        max_tps = max(self._metrics(c, off, curve)["system_tps"] for c, off in points)
        out = []
        for concurrency, offline in points:
            run_id = f"{curve.model}-c{concurrency}"
            run_dir = tmp / run_id
            self._write_run(
                run_dir,
                curve,
                concurrency,
                offline,
                regions,
                max_tps,
                with_accuracy=concurrency in accuracy_at or offline != "none",
            )
            out.append((run_id, run_dir))
        return out

    @staticmethod
    def _accuracy_points(fixed: list[int], regions: Any, curve: CurveSpec) -> set[int]:
        """One point per mandatory band (ULC, low, med, high), lowest first (§5.3)."""
        chosen: set[int] = set()
        ulc = next(c for c in fixed if 1 <= c <= 32)
        chosen.add(ulc)
        for band in ("low_concurrency", "med_concurrency", "high_concurrency"):
            pick = next(
                (c for c in fixed if c not in chosen and covered_region(c, regions) == band),
                None,
            )
            if pick is not None:
                chosen.add(pick)
        return chosen

    def _metrics(self, concurrency: int, offline: str, curve: CurveSpec) -> dict[str, float]:
        bench = BENCHMARKS[curve.model]
        s = self.system
        load = concurrency if offline != "dedicated" else s.c_max * 2
        per_user = s.peak_tps_per_user * curve.speed / (1 + load / 96)
        system_tps = min(load * per_user, s.saturation_tps * curve.speed) * 0.97
        per_user = min(per_user, system_tps / max(load, 1) * 1.02) if load > 1 else per_user
        tpot_p90_ns = 1e9 / per_user
        min_s = 600 if concurrency <= 32 else (2400 if bench.get("agentic") else 1200)
        needed_s = bench["min_completed"] * bench["osl"] / system_tps * 1.05
        duration_s = float(math.ceil(max(min_s * 1.02, needed_s)))
        return {
            "system_tps": system_tps,
            "tpot_p90_ns": tpot_p90_ns,
            "ttft_p90_ns": (s.ttft_base_ms + s.ttft_per_user_ms * load)
            * 1e6
            * (1 + bench["isl"] / 4000),
            "duration_s": duration_s,
        }

    def _counts(
        self, concurrency: int, offline: str, curve: CurveSpec
    ) -> tuple[dict[str, float], int, int, float]:
        """The point's metrics, completed requests, output tokens and duration (ns)."""
        bench = BENCHMARKS[curve.model]
        m = self._metrics(concurrency, offline, curve)
        total_tokens = int(m["system_tps"] * m["duration_s"])
        completed = max(total_tokens // bench["osl"], bench["min_completed"])
        total_tokens = max(total_tokens, completed * bench["osl"])
        return m, completed, total_tokens, total_tokens / m["system_tps"] * 1e9

    def _write_events(self, root: Path, curve: CurveSpec, concurrency: int) -> None:
        """The point's events, added to the assembled bundle as a submitter adds them (the
        builder does not copy them), consistent with its summary (``app/demo/events.py``)."""
        offline = "dedicated" if concurrency == BENCHMARKS[curve.model]["dataset_size"] else "none"
        m, completed, total_tokens, duration_ns = self._counts(concurrency, offline, curve)
        (point_dir,) = root.glob(f"results/*/{curve.model}/r{concurrency}")
        run = DemoRun(
            requests=completed,
            concurrency=concurrency,
            output_tokens=total_tokens,
            ttft_p90_ns=m["ttft_p90_ns"],
            tpot_p90_ns=m["tpot_p90_ns"],
            duration_ns=duration_ns,
            truncated=completed // 50,
            turns=AGENTIC_TURNS if BENCHMARKS[curve.model].get("agentic") else 1,
            seed=zlib.crc32(f"{self.submission_id}/{curve.model}/{concurrency}".encode()),
        )
        timings = write_events(point_dir / "events.jsonl.gz", run)
        if run.turns == 1:
            self._declare_steady_state(point_dir, timings, BENCHMARKS[curve.model]["dataset"])

    @staticmethod
    def _declare_steady_state(point_dir: Path, timings: Timings, dataset: str) -> None:
        """Declare the steady state the point's events show, as a careful submitter copies
        it from the diagnostics run with the benchmark's super-pass."""
        path = point_dir / "point.yaml"
        point = yaml.safe_load(path.read_text())
        minimum = regional_minimum_s(point.get("region"), int(point["concurrency"]))
        method = Method(super_pass_size=DEMO_SUPER_PASSES[dataset], min_duration_s=minimum)
        doc = analyse_steady_state(timings, method)
        point["steady_state"] = point_block(doc)
        point["steady_state"].setdefault("window", {"super_pass_size": method.super_pass_size})
        path.write_text(yaml.safe_dump(point, sort_keys=False))

    def _write_run(
        self,
        run_dir: Path,
        curve: CurveSpec,
        concurrency: int,
        offline: str,
        regions: Any,
        max_tps: float,
        with_accuracy: bool,
    ) -> None:
        m, completed, total_tokens, duration_ns = self._counts(concurrency, offline, curve)
        summary = self._summary(
            curve, concurrency, offline, m, (completed, total_tokens, duration_ns)
        )
        run_dir.mkdir(parents=True)
        (run_dir / "performance").mkdir()
        (run_dir / "performance" / "result_summary.json").write_text(json.dumps(summary, indent=2))
        (run_dir / "config.yaml").write_text(
            yaml.safe_dump(self._client_config(curve, concurrency, offline), sort_keys=False)
        )
        (run_dir / "point.yaml").write_text(
            yaml.safe_dump(
                self._point_yaml(curve, concurrency, offline, regions, m), sort_keys=False
            )
        )
        desc = self._system_desc()
        desc["tps_utilization"] = round(m["system_tps"] / max_tps, 4)
        (run_dir / "system_desc.json").write_text(json.dumps(desc, indent=2))
        (run_dir / "system_power.json").write_text(json.dumps(self._system_power(), indent=2))
        (run_dir / "report.txt").write_text(
            f"MLPerf Endpoints run report\nconcurrency: {concurrency}\n"
            f"completed: {completed}\nsystem tokens/s: {m['system_tps']:.1f}\n"
        )
        (run_dir / "metrics").mkdir()
        (run_dir / "metrics" / "final_snapshot.json").write_text(
            json.dumps(_final_snapshot(summary, completed), indent=2)
        )
        impl = run_dir / "src" / "acme-serving"
        impl.mkdir(parents=True)
        (impl / "README.md").write_text("# Acme serving\n\nHow the endpoint was served.\n")
        (impl / "launch.sh").write_text('#!/bin/sh\nvllm serve "$MODEL" --tensor-parallel 1\n')
        docs = run_dir / "documentation"
        docs.mkdir()
        (docs / "calibration.md").write_text("# Calibration\n\nNo calibration needed.\n")
        accuracy = _accuracy_results(curve, concurrency, completed, with_accuracy)
        if accuracy is not None:
            (run_dir / "accuracy").mkdir()
            (run_dir / "accuracy" / "accuracy_results.json").write_text(json.dumps(accuracy))

    def _summary(
        self,
        curve: CurveSpec,
        concurrency: int,
        offline: str,
        m: dict[str, float],
        counted: tuple[int, int, float],
    ) -> dict[str, Any]:
        """The point's result_summary.json, as the official client of the curve's era
        writes it; *counted*: the requests completed, their output tokens, the window."""
        completed, total_tokens, duration_ns = counted
        bench = BENCHMARKS[curve.model]
        osl = bench["osl"]
        latency_avg_ns = m["ttft_p90_ns"] * 0.8 + osl * m["tpot_p90_ns"] * 0.9
        summary: dict[str, Any] = {
            "version": "0.9.2",
            "git_sha": "4f1c2e9",
            "test_started_at": 0,
            "n_samples_issued": completed,
            "n_samples_completed": completed,
            "n_samples_failed": 0,
            "n_samples_succeeded": completed,
            "n_samples_dropped": 0,
            "duration_ns": duration_ns,
            "state": "complete",
            "complete": True,
            "ttft": _stat_block(m["ttft_p90_ns"] * 0.7, m["ttft_p90_ns"], completed),
            "tpot": _stat_block(m["tpot_p90_ns"] * 0.85, m["tpot_p90_ns"], completed),
            "latency": _stat_block(latency_avg_ns, latency_avg_ns * 1.15, completed),
            "output_sequence_lengths": _stat_block(osl, osl * 1.4, completed, total=total_tokens),
            "input_sequence_lengths": _stat_block(
                bench["isl"], bench["isl"] * 1.3, completed, total=bench["isl"] * completed
            ),
            "legacy_loadgen_window_duration_ns": duration_ns,
            "qps": completed / (duration_ns / 1e9),
            "tps": m["system_tps"],
            "finish_reason_counts": _finish_reasons(completed, concurrency, curve),
            "run_config": {
                "load_pattern": {
                    "type": _load_pattern(curve, offline),
                    "target_qps": None,
                    "target_concurrency": concurrency,
                },
                "warmup": {"enabled": True, "n_requests": 256, "salt": False, "drain": True},
                "scheduler_random_seed": self.seed_set.seeds["scheduler_rng_seed"],
                "dataloader_random_seed": self.seed_set.seeds["sample_index_rng_seed"],
            },
        }
        for block in ("ttft", "tpot", "latency"):
            # The client's conservative bound sits a little above the plain percentile.
            summary[block]["early_stopping_percentiles"] = {
                key: value * 1.015 for key, value in summary[block]["percentiles"].items()
                if float(key) >= 50
            }  # fmt: skip
        if curve.older_summaries:
            for newer in ("finish_reason_counts", "input_sequence_lengths", "run_config"):
                del summary[newer]
            for block in ("ttft", "tpot", "latency"):
                del summary[block]["early_stopping_percentiles"]
        if bench.get("agentic"):
            summary["output_sequence_lengths_full_run"] = {
                "output_sequence_lengths": {"avg": float(osl), "total": float(total_tokens)}
            }
        return summary

    def _client_config(self, curve: CurveSpec, concurrency: int, offline: str) -> dict[str, Any]:
        bench = BENCHMARKS[curve.model]
        pattern = _load_pattern(curve, offline)
        return {
            "name": f"{curve.model}-c{concurrency}",
            "type": "offline" if offline == "dedicated" else "online",
            "model_params": {"name": bench["hf_name"], "streaming": True},
            "datasets": [{"name": bench["dataset"], "type": "performance"}],
            "settings": {
                "load_pattern": {"type": pattern, "target_concurrency": concurrency},
                "runtime": {"min_duration_ms": 600000, **self.seed_set.seeds},
            },
            "endpoint_config": {
                "endpoints": ["http://127.0.0.1:8001"],
                "api_key": "<redacted>",
            },
        }

    def _point_yaml(
        self, curve: CurveSpec, concurrency: int, offline: str, regions: Any, m: dict[str, float]
    ) -> dict[str, Any]:
        bench = BENCHMARKS[curve.model]
        agentic = bool(bench.get("agentic"))
        region = covered_region(concurrency, regions) if offline != "dedicated" else None
        point: dict[str, Any] = {
            "concurrency": concurrency,
            "dataset": bench["dataset"],
            "runtime_settings": {
                "load_pattern": "agentic_inference" if agentic else "concurrency",
                "min_duration_ms": 600000,
                "stream_all_chunks": True,
                "runtime": dict(self.seed_set.seeds),
                "warmup": {"salt": False},
            },
            "warmup": {
                "duration_s": 120.0,
                "requests_issued": 256,
                "requests_completed": 256,
                "data_source": f"{bench['dataset']} warmup split",
                "concurrency": min(concurrency, 256),
                "logs_retained": True,
                "link_logs": "https://example.org/logs/warmup",
            },
            "division": self.system.division,
            "max_supported_concurrency": self.system.c_max,
            "model_name": curve.model,
            "model_precision": self.system.precision,
            "link_to_model": f"https://huggingface.co/{bench['hf_name']}",
            "dataset_name": bench["dataset"],
            "dataset_type": "Performance",
            "dataset_link": f"https://example.org/datasets/{bench['dataset']}",
            "offline": offline,
            "steady_state": {
                "status": "windowable",
                "verdict": "STEADY STATE",
                "window": {
                    "super_pass_start": 0,
                    "super_pass_end": 4,
                    "super_pass_size": 64,
                    "n_samples": 320,
                    "duration_s": m["duration_s"],
                },
                "state": dict.fromkeys(("ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90"), "Plateau"),
            },
            "seed_set": self.seed_set.id,
            "target_cohort": self.target_cohort,
        }
        if region is not None:
            point["region"] = region
        short = curve.short_window_from
        if short is not None and concurrency >= short and offline == "none":
            point["steady_state"]["status"] = "insufficient_duration"
        return point

    def _system_desc(self) -> dict[str, Any]:
        s = self.system
        preview = {}
        if s.availability == "Preview":
            preview = {"target_availability_date": s.available_by}
        return {
            **preview,
            "submitter_org_names": s.org,
            "submitter_contact": "mlperf@example.org",
            "system_name": s.name,
            "shortened_system_name": s.shortened_name,
            "system_category": "datacenter",
            "system_availability_status": s.availability,
            "availability_url": "https://example.org/buy",
            "max_supported_concurrency": s.c_max,
            "system_size": f"{s.nodes} node(s)",
            "system_node_ensemble_count": 1,
            "system_node_ensemble_total": 1,
            "serving_framework": s.framework,
            "division": s.division,
            "tensor_parallel": 1,
            "pipeline_parallel": 1,
            "expert_parallel": 1,
            "data_parallel": s.accelerators_per_node * s.nodes,
            "node_types": [
                {
                    "system_node_ensemble_id": 1,
                    "number_of_nodes": s.nodes,
                    "host_processor_model_name": "AMD EPYC 9654 96-Core",
                    "host_processors_per_node": 2,
                    "host_processor_core_count": 96,
                    "host_memory_configuration": "24x 96GB DDR5-4800",
                    "host_memory_capacity": "2.3 TB",
                    "host_network_card_count": "8",
                    "driver": "550.90.07",
                    "filesystem": "ext4",
                    "cooling": "air",
                    "operating_system": "Ubuntu 22.04",
                    "accelerator_info": [
                        {
                            "accelerator_model_name": s.accelerator,
                            "accelerators_per_node": s.accelerators_per_node,
                            "accelerator_memory_capacity": s.accelerator_memory,
                            "accelerator_memory_type": "HBM3e",
                            "accelerator_interconnect": s.interconnect,
                            "accelerator_host_interconnect": "PCIe Gen5 x16",
                        }
                    ],
                }
            ],
        }

    def _system_power(self) -> dict[str, Any]:
        s = self.system

        def watts(value: float) -> dict[str, Any]:
            return {
                "value_w": value,
                "source_type": "vendor_spec",
                "source": "https://example.org/spec-sheet",
            }

        return {
            "system_desc_id": s.shortened_name,
            "cooling": "air",
            "node_sets": [
                {
                    "node_set_id": 1,
                    "system_node_ensemble_id": 1,
                    "nodes_provisioned": s.nodes,
                    "power_method": "component_sum",
                    "components": {
                        "cpu": {
                            "model": "AMD EPYC 9654",
                            "count_per_node": 2,
                            "tdp_per_unit": watts(360),
                        },
                        "accelerator": {
                            "model": s.accelerator,
                            "count_per_node": s.accelerators_per_node,
                            "tdp_per_unit": {
                                **watts(s.accelerator_tdp_w),
                                "source_type": "mlc_default",
                                "source": "D.3",  # the accelerators' defaults
                            }
                            if s.estimated_power
                            else watts(s.accelerator_tdp_w),
                        },
                        "scale_up_network": {
                            "method": "declared_tdp",
                            "switch_count": 4,
                            "tdp_per_switch": watts(100),
                        },
                    },
                }
            ],
            "scale_out": {"present": False},
        }


def _load_pattern(curve: CurveSpec, offline: str) -> str:
    if offline == "dedicated":
        return "max_throughput"
    return "agentic_inference" if BENCHMARKS[curve.model].get("agentic") else "concurrency"


# The client's series in final_snapshot.json, by the result summary's block they mirror.
_SNAPSHOT_SERIES = {
    "sample_latency_ns": "latency",
    "ttft_ns": "ttft",
    "tpot_ns": "tpot",
    "osl": "output_sequence_lengths",
}


def _final_snapshot(summary: dict[str, Any], completed: int) -> dict[str, Any]:
    """metrics/final_snapshot.json as the client writes it (spec harness-metrics §6.2):
    counters, and per series its count, total, extremes and sum of squares as integers
    (nanoseconds squared for the latencies: far past 2^64 on a real run)."""
    metrics: list[dict[str, Any]] = [
        {"type": "counter", "name": "total_samples_issued", "value": completed},
        {"type": "counter", "name": "total_samples_completed", "value": completed},
    ]
    for name, block_name in _SNAPSHOT_SERIES.items():
        block = summary[block_name]
        avg, std = block["avg"], block["std_dev"]
        metrics.append({
            "type": "series", "name": name, "count": completed, "total": round(block["total"]),
            "min": round(block["min"]), "max": round(block["max"]),
            "sum_sq": round(completed * (avg * avg + std * std)),
            "percentiles": block["percentiles"], "histogram": [],
        })  # fmt: skip
    return {"counter": completed, "timestamp_ns": summary["duration_ns"], "state": "complete",
            "n_pending_tasks": 0, "metrics": metrics}  # fmt: skip


def _stat_block(avg: float, p90: float, n: int, total: float | None = None) -> dict[str, Any]:
    return {
        "total": float(total if total is not None else avg * n),
        "min": avg * 0.4,
        "max": p90 * 1.8,
        "median": avg * 0.97,
        "avg": avg,
        "std_dev": avg * 0.2,
        "percentiles": {
            "50.0": avg * 0.97,
            "90.0": p90,
            "95.0": p90 * 1.08,
            "99.0": p90 * 1.3,
            "99.9": p90 * 1.6,
        },
        "histogram": {"buckets": [], "counts": []},
    }


def pack_tree(base: Path, dest_file: Path, fmt: str, arcname: str) -> Path:
    """Pack *base* as the CLI does (tar.gz) or as a zip, under the top folder *arcname*."""
    if fmt in ("tar.gz", "tgz"):
        with tarfile.open(dest_file, "w:gz") as tar:
            tar.add(base, arcname=arcname)
    elif fmt == "zip":
        with zipfile.ZipFile(dest_file, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(base.rglob("*")):
                name = f"{arcname}/{path.relative_to(base).as_posix()}"
                if path.is_dir():
                    zf.writestr(name + "/", b"")
                else:
                    zf.write(path, name)
    else:
        raise ValueError(f"unknown archive format {fmt!r}")
    return dest_file


__all__ = [
    "BENCHMARKS",
    "DEMO_SUPER_PASSES",
    "DEMO_SUPER_PASS_SOURCE",
    "BundleFactory",
    "CurveSpec",
    "SystemSpec",
    "pack_tree",
    "replace",
]


def _finish_reasons(completed: int, concurrency: int, curve: CurveSpec) -> dict[str, int]:
    """How the responses ended: 2 % on the length limit, or the curve's share from its
    ``cut_short_from`` concurrency on (a point fast partly because answers were cut)."""
    cut = curve.cut_short_from is not None and concurrency >= curve.cut_short_from
    length = round(completed * curve.cut_short_share) if cut else completed // 50
    return {"stop": completed - length, "length": length}


def _accuracy_results(
    curve: CurveSpec, concurrency: int, completed: int, with_accuracy: bool
) -> dict[str, Any] | None:
    """The point's accuracy_results.json: the accuracy datasets' scores (a system that
    loses a little accuracy per doubling of load) and the inline score; on an agentic
    point the inline score alone (agentic-accuracy-inline); None for a point without."""
    bench = BENCHMARKS[curve.model]
    inline: dict[str, Any] = {
        "dataset_name": "performance",
        "dataset_type": "performance",
        "score": bench.get("inline_score"),
        "num_samples": completed,
    }
    if with_accuracy:
        scores = copy.deepcopy(bench["accuracy"])
        kept = 1 - curve.accuracy_drift * min(math.log2(max(concurrency, 1)), 10)
        for entry in scores:
            entry["dataset_type"] = "accuracy"
            if isinstance(entry["score"], dict):
                entry["score"] = {k: round(v * kept, 4) for k, v in entry["score"].items()}
        inline["score"] = bench.get("inline_score", scores[0]["score"])
        return {"osl_tokenization_s": 4.2, "accuracy_scores": [*scores, inline]}
    if bench.get("agentic"):
        return {"accuracy_scores": [{**inline, "score": bench["inline_score"]}]}
    return None
