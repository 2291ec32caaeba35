"""The reports equal the official visualiser for the same results (issue 49): the pinned
mlperf-viz exports the demo's bundles and bundles of the official checker's fixture shapes
(`--export`), and every published curve's report must give the same figures at each
point, and the step line the official rule draws through them (bundle-format §7.3)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.pareto import step_curve
from app.db.migrate import upgrade
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.demo.load import DEMO, _bundle
from app.main import create_app
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.submissions import pt, submit

EVERY = {
    "status": ["verified", "provisional", "unverified"],
    "availability": ["Available", "Preview", "RDI"],
    "superseded": "include",
    "limit": "all",
}


def _export(tree: Path, out: Path) -> dict[str, Any]:
    """The official visualiser's export of the submissions under *tree*."""
    command = [str(Path(sys.executable).parent / "mlperf-viz"), str(tree), "--export", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(out.read_text())
    assert not data["warnings"], data["warnings"]
    return data


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The official visualiser's export of the demo's bundles, as their CLI packed them."""
    tree = tmp_path_factory.mktemp("official-tree")
    for number, item in enumerate(DEMO, start=1):
        with tarfile.open(fileobj=io.BytesIO(_bundle(item, number))) as archive:
            archive.extractall(tree / str(number), filter="data")
    return _export(tree, tree.parent / "mlperf-viz-export.json")


def _official_runs(
    exported: dict[str, Any], bundle_id: str, system_dir: str, model: str
) -> dict[str, Any]:
    """The official visualiser's runs of one curve, by point folder."""
    suffix = f"-{bundle_id}-{system_dir}-{model}"
    (entry,) = [s["id"] for s in exported["submissions"] if s["id"].endswith(suffix)]
    return {r["label"]: r["run"] for r in exported["runs"] if r["submission_id"] == entry}


def _same_as_official(client: TestClient, exported: dict[str, Any], listed: dict[str, Any]) -> None:
    """A published curve's report gives the official visualiser's figures at every point,
    the same Offline runs, and the step line its rule draws through its numbers."""
    ref = listed["result_id"] or str(listed["id"])
    curve = client.get(f"/api/v1/results/{ref}", params=EVERY).json()["curve"]
    bundle_id = client.get(f"/api/v1/submissions/{curve['submission']}").json()[
        "bundle_submission_id"
    ]
    runs = _official_runs(exported, bundle_id, curve["system_dir"], curve["benchmark"])
    for point in curve["points"]:
        official = runs[point["dir"]]
        derived, direct = official["derived_fields"], official["direct_fields"]
        assert point["concurrency"] == direct["concurrency"]
        assert point["system_tps"] == pytest.approx(derived["system_tps"], abs=1e-3)
        assert point["ttft_p90_ms"] == pytest.approx(derived["ttft"], abs=1e-3)
        assert (point["offline"] == "dedicated") == (direct["config_type"] == "offline")
        if not curve["is_agentic"]:
            assert point["tps_per_user"] == pytest.approx(derived["tps_per_user"], abs=1e-3)
    if curve["is_agentic"]:
        return
    # The official step line, by its rule through its own numbers, for the points the
    # record shows (withdrawn or invalidated ones are not).
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


def test_every_report_equals_the_official_visualiser(
    client: TestClient, exported: dict[str, Any]
) -> None:
    compared = 0
    for benchmark in [b["id"] for b in client.get("/api/v1/benchmarks").json()["data"]]:
        params = {**EVERY, "benchmark": benchmark}
        for listed in client.get("/api/v1/results", params=params).json()["curves"]:
            _same_as_official(client, exported, listed)
            compared += 1
    assert compared >= 10, "every demo curve was compared"


# The maximum concurrencies the official checker's fixture corpus is built on
# (bundle-format §4, the C_min derivation table), each as a bundle of our own factory
# (the corpus's files are not ours to copy), published as provisional results.
CORPUS_C_MAX = (512, 1024, 2048, 16384)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    base = tmp_path_factory.mktemp("corpus")
    settings = Settings(data_dir=base / "data", demo_data=False)
    settings.data_dir.mkdir()
    upgrade(settings.effective_database_url)
    database = Database(settings.effective_database_url)
    create_accounts(database)
    tree = base / "tree"
    for c_max in CORPUS_C_MAX:
        factory = BundleFactory(
            system=SystemSpec(name=f"Corpus C{c_max}", c_max=c_max, saturation_tps=9 * c_max),
            submission_id=f"corpus-{c_max}",
        )
        archive = factory.archive(base / f"corpus-{c_max}.tar.gz")
        submit(database, settings, archive, mode="provisional")
        with tarfile.open(archive) as packed:
            packed.extractall(tree / str(c_max), filter="data")
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client, tree
    database.dispose()


def test_reports_of_the_checkers_shapes_equal_the_official_visualiser(
    corpus: tuple[TestClient, Path], tmp_path: Path
) -> None:
    client, tree = corpus
    exported = _export(tree, tmp_path / "corpus-export.json")
    curves = client.get("/api/v1/results", params={**EVERY, "benchmark": "llama3_1-8b"}).json()[
        "curves"
    ]
    assert len(curves) == len(CORPUS_C_MAX)
    for listed in curves:
        _same_as_official(client, exported, listed)
