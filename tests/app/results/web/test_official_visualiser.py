"""The reports equal the official visualiser for the same results (issue 49): the pinned
mlperf-viz exports the demo's bundles (`--export`), and every published curve's report
must give the same figures at each point, and the step line the official rule draws
through them (bundle-format §7.3)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.pareto import step_curve
from app.demo.load import DEMO, _bundle

EVERY = {
    "status": ["verified", "provisional", "unverified"],
    "availability": ["Available", "Preview", "RDI"],
    "superseded": "include",
    "limit": "all",
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The official visualiser's export of the demo's bundles, as their CLI packed them."""
    tree = tmp_path_factory.mktemp("official-tree")
    for number, item in enumerate(DEMO, start=1):
        with tarfile.open(fileobj=io.BytesIO(_bundle(item, number))) as archive:
            archive.extractall(tree / str(number), filter="data")
    out = tree.parent / "mlperf-viz-export.json"
    command = [str(Path(sys.executable).parent / "mlperf-viz"), str(tree), "--export", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(out.read_text())
    assert not data["warnings"], data["warnings"]
    return data


def _official_runs(
    exported: dict[str, Any], bundle_id: str, system_dir: str, model: str
) -> dict[str, Any]:
    """The official visualiser's runs of one curve, by point folder."""
    (entry,) = [
        s["id"]
        for s in exported["submissions"]
        if s["id"].endswith(f"-{bundle_id}-{system_dir}-{model}")
    ]
    return {r["label"]: r["run"] for r in exported["runs"] if r["submission_id"] == entry}


def test_every_report_equals_the_official_visualiser(
    client: TestClient, exported: dict[str, Any]
) -> None:
    compared = 0
    for benchmark in [b["id"] for b in client.get("/api/v1/benchmarks").json()["data"]]:
        curves = client.get("/api/v1/results", params={**EVERY, "benchmark": benchmark}).json()[
            "curves"
        ]
        for listed in curves:
            ref = listed["result_id"] or str(listed["id"])
            report = client.get(f"/api/v1/results/{ref}", params=EVERY).json()
            curve = report["curve"]
            bundle_id = client.get(f"/api/v1/submissions/{curve['submission']}").json()[
                "bundle_submission_id"
            ]
            runs = _official_runs(exported, bundle_id, curve["system_dir"], benchmark)
            for point in curve["points"]:
                official = runs[point["dir"]]
                derived, direct = official["derived_fields"], official["direct_fields"]
                assert point["concurrency"] == direct["concurrency"]
                assert point["system_tps"] == pytest.approx(derived["system_tps"], abs=1e-3)
                assert point["ttft_p90_ms"] == pytest.approx(derived["ttft"], abs=1e-3)
                assert (point["offline"] == "dedicated") == (direct["config_type"] == "offline")
                if not curve["is_agentic"]:
                    assert point["tps_per_user"] == pytest.approx(derived["tps_per_user"], abs=1e-3)
            if not curve["is_agentic"]:
                # The official step line, drawn by its rule through its own numbers, for
                # the points the record shows (withdrawn or invalidated ones are not).
                shown = {p["dir"] for p in curve["points"]}
                online = [
                    (r["derived_fields"]["tps_per_user"], r["derived_fields"]["system_tps"])
                    for label, r in runs.items()
                    if label in shown and r["direct_fields"]["config_type"] == "online"
                ]
                official_line = step_curve(online).line
                assert len(curve["step_line"]) == len(official_line)
                for ours, theirs in zip(curve["step_line"], official_line, strict=True):
                    assert ours == pytest.approx(list(theirs), abs=2e-3)
            compared += 1
    assert compared >= 10, "every demo curve was compared"
