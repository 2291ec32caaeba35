"""The harness hands over to the official workflow (issue 45): a folder ``harness run``
writes is a run ``runs create`` registers once the submitter adds ``system_desc.json``
and ``point.yaml``, and ``harness sweep --register-with`` registers its runs with the
portal in the same step (the official client package's own parser, archive and calls).
Against the running portal and its worker, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml

from app.demo.bundles import BundleFactory
from harness.cli import main
from harness.sim import SimConfig
from tests.support.official_cli import OfficialCli
from tests.support.portal import RunningPortal
from tests.support.sim import RunningSim
from tests.support.sweeps import spec_file

pytestmark = pytest.mark.slow


def _runs(portal: RunningPortal) -> dict[str, dict[str, object]]:
    answer = httpx.get(f"{portal.url}/submission-api/runs", timeout=30,
                       headers={"X-API-Key": portal.tokens["submitter"]})  # fmt: skip
    answer.raise_for_status()
    return {run["id"]: run for run in answer.json()}


def test_a_folder_harness_run_writes_is_registered_by_the_official_cli(
    portal: RunningPortal,
    sim: Callable[[SimConfig], RunningSim],
    dataset: Path,
    local_tokenizer_dir: Path,
    tmp_path: Path,
) -> None:
    endpoint = sim(SimConfig(ttft_ms=2, tpot_ms=0.3, output_tokens=12))
    folder = tmp_path / "c4"
    assert main(["run", "--endpoint", endpoint.url, "--model", "sim", "--dataset", str(dataset),
                 "--tokenizer", str(local_tokenizer_dir), "--concurrency", "4",
                 "--n-samples", "8", "--output", str(folder)]) == 0  # fmt: skip
    # What the submitter adds: the system, and the point's disclosure.
    factory = BundleFactory()
    (folder / "system_desc.json").write_text(json.dumps(factory._system_desc()))
    point = {"concurrency": 4, "division": "standardized", "model_name": "sim",
             "dataset": "sim_prompts", "seed_set": "A"}  # fmt: skip
    (folder / "point.yaml").write_text(yaml.safe_dump(point))

    run_id = OfficialCli(portal, tmp_path / "home", tmp_path).create_run(folder)
    run = _runs(portal)[run_id]
    assert run["concurrency"] == 4 and run["model"] == "sim" and run["has_archive"] is True


def test_a_sweep_registers_its_runs_with_the_portal(
    portal: RunningPortal,
    sim: Callable[[SimConfig], RunningSim],
    local_tokenizer_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the portal is on loopback
    endpoint = sim(SimConfig(ttft_ms=2, tpot_ms=0.3, output_tokens=12, max_batch=48))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": f"lorem {i}"}) + "\n" for i in range(70)))
    code = main([
        "sweep", "--endpoint", endpoint.url, "--model", "sim", "--max-concurrency", "64",
        "--dataset", str(prompts), "--submission", str(spec_file(tmp_path)),
        "--tokenizer", str(local_tokenizer_dir), "--duration-per-point", "0.4",
        "--output", str(tmp_path / "out"), "--register-with", f"{portal.url}/submission-api/",
        "--token", portal.tokens["submitter"], "--test-runs", "--json",
    ])  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert code == 0, printed["errors"]
    points = printed["points"]
    assert len(points) == 8 and all(p["run_id"] for p in points)
    registered = _runs(portal)
    for p in points:
        run = registered[p["run_id"]]
        assert run["concurrency"] == p["concurrency"] and run["is_test"] is True
        assert run["has_archive"] is True
    # The rival organisation sees none of them.
    rival = httpx.get(f"{portal.url}/submission-api/runs", timeout=30,
                      headers={"X-API-Key": portal.tokens["rival"]}).json()  # fmt: skip
    assert not {p["run_id"] for p in points} & {r["id"] for r in rival}


def test_a_handover_that_fails_says_which_runs_were_registered(
    portal: RunningPortal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token the portal does not know: nothing registered. A folder the official
    parser refuses after one that went through: that one is registered, and said. An
    archive the portal refuses: the run registered for it is deleted again."""
    from harness.curves.handover import HandoverFailed, register_runs

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    first, second, third = BundleFactory().run_folders(tmp_path / "runs")[:3]
    api = f"{portal.url}/submission-api"
    with pytest.raises(HandoverFailed, match="Authentication failed") as refused:
        register_runs([first], api, "not-a-token")
    assert refused.value.registered == []
    (second / "point.yaml").unlink()
    with pytest.raises(HandoverFailed, match="missing required file") as refused:
        register_runs([first, second], api, portal.tokens["submitter"])
    [kept] = refused.value.registered
    assert kept.run_dir == first and _runs(portal)[kept.run_id]["has_archive"] is True
    (third / "notes.txt").symlink_to("/etc/hostname")  # a link: no archive may hold one
    before = set(_runs(portal))
    with pytest.raises(HandoverFailed, match="422") as refused:
        register_runs([third], api, portal.tokens["submitter"])
    assert refused.value.registered == [] and set(_runs(portal)) == before
