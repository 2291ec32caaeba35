"""Bundles broken on purpose: named breakages (each with the official rule it should trip)
and hand-made hostile archives. Test support only; the runtime's factory builds good
bundles and takes these as edits."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from app.demo.bundles import Edit


def _points(root: Path) -> list[Path]:
    return sorted(
        (p for p in root.glob("results/*/*/r*") if p.is_dir()),
        key=lambda p: int(p.name[1:]),
    )


def _edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _edit_yaml(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _inflate_system_tps(root: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["system_tps"] = d["output_sequence_lengths"]["total"] / (d["duration_ns"] / 1e9) * 1.25

    _edit_json(_points(root)[2] / "result_summary.json", change)


def _drop_point(root: Path) -> None:
    fixed = [p for p in _points(root) if "offline: dedicated" not in (p / "point.yaml").read_text()]
    shutil.rmtree(fixed[len(fixed) // 2 + 1])


def _remove_config(root: Path) -> None:
    (_points(root)[0] / "config.yaml").unlink()


def _wrong_seed(root: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["runtime_settings"]["runtime"]["model_seed"] = 42

    _edit_yaml(_points(root)[1] / "point.yaml", change)


def _bad_model_name(root: Path) -> None:
    for point in _points(root):
        _edit_yaml(point / "point.yaml", lambda d: d.update(model_name="llama3.1-8b"))


def _fail_accuracy(root: Path) -> None:
    for point in _points(root):
        path = point / "accuracy_results.json"
        if path.exists() and "rouge1" in path.read_text():

            def change(d: dict[str, Any]) -> None:
                for entry in d["accuracy_scores"]:
                    if isinstance(entry.get("score"), dict) and "rouge1" in entry["score"]:
                        entry["score"]["rouge1"] = 30.0

            _edit_json(path, change)
            return


def _missing_power(root: Path) -> None:
    for path in root.glob("results/*/system_power.json"):
        path.unlink()


def _zero_tpot(root: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["tpot"]["percentiles"]["90.0"] = 0.0

    _edit_json(_points(root)[0] / "result_summary.json", change)


def _malformed_summary(root: Path) -> None:
    (_points(root)[1] / "result_summary.json").write_text('{"n_samples_completed": 12, ')


def _no_src(root: Path) -> None:
    shutil.rmtree(root / "src")


def _late_cohort(root: Path) -> None:
    for point in _points(root):
        _edit_yaml(point / "point.yaml", lambda d: d.update(target_cohort="2026-10-C1"))


def _dataset_path(root: Path) -> None:
    for point in _points(root):
        _edit_yaml(point / "point.yaml", lambda d: d.update(dataset="../../secretdata"))


def one_node_at_r8(root: Path) -> None:
    """On a two-node system: the r8 point engages one node of two (nodes_used, §4.5.3),
    half the data parallelism, with the shortfall declared as the rules ask."""
    [point] = [p for p in _points(root) if p.name == "r8"]

    def change(d: dict[str, Any]) -> None:
        d["nodes_used"] = [{"system_node_ensemble_id": 1, "nodes": 1}]
        d["dp_shortfall"] = {
            "dp_actual": 8,
            "dp_formula": 16,
            "reason": "one node serves this point; the other serves another model",
        }

    _edit_yaml(point / "point.yaml", change)
    _edit_json(point / "system_desc.json", lambda d: d.update(data_parallel=8))


#: Named ways a bundle goes wrong, each with the official rule it should trip.
BREAKAGES: dict[str, Edit] = {
    "inflated-system-tps": _inflate_system_tps,
    "missing-region-point": _drop_point,
    "missing-config-yaml": _remove_config,
    "wrong-seed": _wrong_seed,
    "noncanonical-model-name": _bad_model_name,
    "failed-accuracy": _fail_accuracy,
    "missing-system-power": _missing_power,
    "zero-tpot-p90": _zero_tpot,
    "malformed-result-summary": _malformed_summary,
    "missing-src": _no_src,
    "past-target-cohort": _late_cohort,
    "dataset-path": _dataset_path,
}

#: The official rule id (with severity error) each breakage is expected to trip.
EXPECTED_RULES: dict[str, str] = {
    "inflated-system-tps": "metric-consistency-system-tps",
    "missing-region-point": "point-count",
    "missing-config-yaml": "config-file-present",
    "wrong-seed": "seed-runtime-match",
    "noncanonical-model-name": "model-name-valid",
    "failed-accuracy": "accuracy-gate",
    "missing-system-power": "power-descriptor",
    "zero-tpot-p90": "metric-consistency-tpot-p90",
    "malformed-result-summary": "result-file-valid",
    "missing-src": "src-dir",
}


def tar_bytes(members: Sequence[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """A tar.gz in memory from hand-made members (for hostile-archive tests)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buffer.getvalue()


def broken(*names: str) -> tuple[Edit, ...]:
    """The edits of the named breakages, for ``BundleFactory.build(dest, broken(...))``."""
    return tuple(BREAKAGES[name] for name in names)


def upload(client: Any, data: bytes, name: str = "bundle.tar.gz", **fields: str) -> Any:
    """An archive sent to the upload API as a browser's form would send it."""
    return client.post("/api/v1/submissions", files={"file": (name, data)}, data=fields)
