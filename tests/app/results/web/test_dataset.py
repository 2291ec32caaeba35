"""A released cohort travels (issue 50): its dataset in the official layout, signed, that
openssl, ``endpoints-portal verify`` and the official visualiser all read, and the every-
cohort points tables."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.db.models import Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.results.services.dataset import cohort_dataset
from app.review.services.decisions import decide
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.services import require
from tests.support.submissions import finalize_unreviewed, pt, submit

COHORT = "2026-12-C1"
ROOT = f"endpoints-{COHORT}"


@pytest.fixture
def released(
    database: Database, settings: Settings, good_archive: Path, tmp_path: Path
) -> dict[str, int]:
    """A finalized result and a provisional one released in 2026-12-C1; the next cohort
    released too (the chain's second release)."""
    other = BundleFactory(system=SystemSpec(name="Borealis Node", saturation_tps=30_000),
                          submission_id="sub-borealis").archive(tmp_path / "b.tar.gz")  # fmt: skip
    verified = submit(database, settings, good_archive)
    provisional = submit(database, settings, other, mode="provisional")
    with database.session() as session:
        finalize_unreviewed(session, settings, must(session.get(Submission, verified)),
                            pt(2026, 12, 7))  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id=COHORT,
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id="2027-01-C0",
                       at=pt(2027, 1, 6, 8))  # fmt: skip
        session.commit()
    return {"verified": verified, "provisional": provisional}


@pytest.fixture
def client(settings: Settings, database: Database) -> TestClient:
    return TestClient(create_app(settings, queue=RecordingQueue()))


def _unpack(content: bytes, into: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(content)) as tar:
        tar.extractall(into, filter="data")
    return into / ROOT


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "endpoints-portal"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _openssl(folder: Path, key: Path) -> subprocess.CompletedProcess[str]:
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(key), "-rawin",
               "-in", "manifest.json", "-sigfile", "manifest.json.sig"]  # fmt: skip
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)


def test_the_dataset_is_signed_and_every_change_fails_verification(
    released: dict[str, int], client: TestClient, tmp_path: Path
) -> None:
    require(shutil.which("openssl") is not None, "the openssl command")
    answer = client.get(f"/api/v1/cohorts/{COHORT}/dataset")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/gzip"
    assert f'filename="{ROOT}.tar.gz"' in answer.headers["content-disposition"]
    # The former export address answers with the same dataset.
    assert client.get(f"/api/v1/cohorts/{COHORT}/export").content == answer.content
    folder = _unpack(answer.content, tmp_path / "dataset")
    key = tmp_path / "key.pem"
    key.write_text(client.get("/.well-known/release-signing-key.pem").text)
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/.well-known/release-signing-keys.json").text)
    chain = tmp_path / "chain.jsonl"
    chain.write_text(client.get("/api/v1/record/chain.jsonl").text)
    assert _openssl(folder, key).returncode == 0
    verified = _cli("verify", str(folder), "--keys", str(keys), "--chain", str(chain))
    assert verified.returncode == 0, verified.stderr
    assert "verified" in verified.stdout
    archive = tmp_path / "dataset.tar.gz"
    archive.write_bytes(answer.content)
    assert _cli("verify", str(archive), "--key", str(key)).returncode == 0

    # One byte of a point changed in the manifest: openssl and verify both refuse it.
    manifest = (folder / "manifest.json").read_bytes()
    at = manifest.index(b'"system_tps":') + len(b'"system_tps":')
    changed = manifest[:at] + (b"8" if manifest[at : at + 1] != b"8" else b"7") + manifest[at + 1 :]
    (folder / "manifest.json").write_bytes(changed)
    assert _openssl(folder, key).returncode != 0
    refused = _cli("verify", str(folder), "--keys", str(keys))
    assert refused.returncode == 1 and "signature does not hold" in refused.stderr
    (folder / "manifest.json").write_bytes(manifest)
    # One byte of a point's result file changed: its digest no longer matches.
    summary = next(folder.rglob("result_summary.json"))
    summary.write_bytes(summary.read_bytes().replace(b"1", b"2", 1))
    refused = _cli("verify", str(folder), "--keys", str(keys))
    assert refused.returncode == 1 and "SHA-256 is not the manifest's" in refused.stderr


def test_the_dataset_holds_what_the_rules_make_public(
    released: dict[str, int], client: TestClient, tmp_path: Path
) -> None:
    folder = _unpack(client.get(f"/api/v1/cohorts/{COHORT}/dataset").content, tmp_path / "d")
    manifest = json.loads((folder / "manifest.json").read_bytes())
    by_status = {r["status"]: r for r in manifest["results"]}
    assert set(by_status) == {"verified", "provisional"}
    listed = {f["path"] for f in manifest["files"]}
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert on_disk - {"manifest.json", "manifest.json.sig"} == listed
    for status, result in by_status.items():
        files = [p for p in listed if p.startswith(result["path"] + "/")]
        assert any(p.endswith("/system_power.json") for p in files)
        points = {p.split("/")[-2] for p in files if p.endswith("result_summary.json")}
        assert points == {p["dir"] for p in result["points"]}
        # Code and documents only of a finalized result (rules §11.9).
        assert any("/src/" in p for p in files) == (status == "verified"), files
    release = client.get("/api/v1/record/entries", params={"limit": 500}).json()["data"]
    [entry] = [e for e in release if e["subject"] == f"release/{COHORT}"]
    assert manifest["release_entry"] == {"seq": entry["seq"], "digest": entry["digest"]}
    # points.csv: the explorer's CSV columns, a row per point shown.
    rows = list(csv.DictReader((folder / "points.csv").open()))
    assert {r["cohort"] for r in rows} == {COHORT}
    assert sum(len(r["points"]) for r in manifest["results"]) == len(rows)


def test_the_official_visualiser_reads_the_dataset_with_the_portals_figures(
    released: dict[str, int], client: TestClient, tmp_path: Path
) -> None:
    folder = _unpack(client.get(f"/api/v1/cohorts/{COHORT}/dataset").content, tmp_path / "d")
    out = tmp_path / "export.json"
    command = [str(Path(sys.executable).parent / "mlperf-viz"), str(folder), "--export", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    exported: dict[str, Any] = json.loads(out.read_text())
    assert not exported["warnings"], exported["warnings"]
    manifest = json.loads((folder / "manifest.json").read_bytes())
    compared = 0
    for result in manifest["results"]:
        every = {"status": ["verified", "provisional"]}
        curve = client.get(f"/api/v1/results/{result['result_id']}", params=every).json()["curve"]
        bundle_id = result["path"].split("/")[-1]
        suffix = f"-{bundle_id}-{curve['system_dir']}-{curve['benchmark']}"
        (entry,) = [s["id"] for s in exported["submissions"] if s["id"].endswith(suffix)]
        runs = {r["label"]: r["run"] for r in exported["runs"] if r["submission_id"] == entry}
        assert set(runs) == {p["dir"] for p in curve["points"]}
        for point in curve["points"]:
            derived = runs[point["dir"]]["derived_fields"]
            assert point["system_tps"] == pytest.approx(derived["system_tps"], abs=1e-3)
            assert point["tps_per_user"] == pytest.approx(derived["tps_per_user"], abs=1e-3)
            assert point["ttft_p90_ms"] == pytest.approx(derived["ttft"], abs=1e-3)
            compared += 1
    assert compared >= 14


def test_an_invalidation_is_a_new_dataset_and_the_chain_holds(
    released: dict[str, int], client: TestClient, database: Database, settings: Settings,
    tmp_path: Path,
) -> None:  # fmt: skip
    before = client.get(f"/api/v1/cohorts/{COHORT}/dataset").content
    with database.session() as session:
        decide(session=session, settings=settings,
               submission=must(session.get(Submission, released["verified"])),
               action="invalidate", actor="chair", reason="tokens miscounted",
               at=pt(2027, 1, 8))  # fmt: skip
        session.commit()
    after = client.get(f"/api/v1/cohorts/{COHORT}/dataset").content
    assert after != before
    folder = _unpack(after, tmp_path / "d")
    manifest = json.loads((folder / "manifest.json").read_bytes())
    statuses = sorted(r["status"] for r in manifest["results"])
    assert statuses == ["invalidated", "provisional"]
    gone = next(r for r in manifest["results"] if r["status"] == "invalidated")
    assert gone["points"] == [] and gone["path"] is None
    kinds = [e["kind"] for e in client.get("/api/v1/record/entries").json()["data"]]
    assert kinds.count("release") == 2 and kinds[-1] == "invalidation"
    assert manifest["as_of"]["seq"] == len(kinds)
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/.well-known/release-signing-keys.json").text)
    chain = tmp_path / "chain.jsonl"
    chain.write_text(client.get("/api/v1/record/chain.jsonl").text)
    assert _cli("verify", str(folder), "--keys", str(keys), "--chain", str(chain)).returncode == 0
    # An entry dropped from the chain is found.
    lines = chain.read_text().splitlines()
    chain.write_text("\n".join(lines[:2] + lines[3:]) + "\n")
    broken = _cli("verify", "--keys", str(keys), "--chain", str(chain))
    assert broken.returncode == 1 and "ledger: entry 3" in broken.stderr


def test_a_download_under_way_reads_its_state_whole_when_a_newer_one_replaces_it(
    released: dict[str, int], database: Database, settings: Settings
) -> None:
    """CI, under load: a dataset's headers came and its body never did. The cached file of
    the record's older state is removed when a newer state is built; the answer for the
    older one reads on from the descriptor it opened."""
    with database.session() as session:
        older = cohort_dataset(session, settings, COHORT)
        decide(session=session, settings=settings,
               submission=must(session.get(Submission, released["verified"])),
               action="invalidate", actor="chair", reason="tokens miscounted",
               at=pt(2027, 1, 8))  # fmt: skip
        session.commit()
        newer = cohort_dataset(session, settings, COHORT)
    newer.file.close()
    assert not older.path.exists() and newer.path.exists()
    with older.file, tarfile.open(fileobj=older.file) as tar:
        manifest = json.load(must(tar.extractfile(f"{ROOT}/manifest.json")))
    assert sorted(r["status"] for r in manifest["results"]) == ["provisional", "verified"]


def test_every_cohorts_points_as_csv_and_parquet(
    released: dict[str, int], client: TestClient, tmp_path: Path
) -> None:
    table = client.get("/api/v1/points.csv")
    assert table.status_code == 200 and table.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(table.text)))
    # Each cohort's record: 2026-12-C1 shows both results, and so does 2027-01-C0.
    assert {r["cohort"] for r in rows} == {COHORT, "2027-01-C0"}
    assert {r["status"] for r in rows} == {"verified", "provisional"}
    assert all(r["result_id"] for r in rows)
    parquet = tmp_path / "points.parquet"
    parquet.write_bytes(client.get("/api/v1/points.parquet").content)
    read = pq.read_table(parquet).to_pylist()
    assert len(read) == len(rows)
    assert sorted((r["cohort"], r["result_id"], r["dir"]) for r in read) == sorted(
        (r["cohort"], r["result_id"], r["dir"]) for r in rows
    )
    assert client.get("/api/v1/points.xlsx").status_code == 422


def test_the_explorer_offers_the_cohorts_dataset_and_the_tables(
    released: dict[str, int], client: TestClient
) -> None:
    import re

    page = client.get("/results", params={"cohort": COHORT}).text
    href = re.search(r'href="([^"]+)" id="export-dataset"', page)
    assert href is not None and href.group(1) == f"/api/v1/cohorts/{COHORT}/dataset"
    assert client.get(href.group(1)).headers["content-type"] == "application/gzip"
    for table in ("export-every-csv", "export-every-parquet"):
        link = re.search(rf'href="([^"]+)" id="{table}"', page)
        assert link is not None and client.get(link.group(1)).status_code == 200
