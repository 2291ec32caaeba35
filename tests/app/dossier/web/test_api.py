"""A submission as the API answers for it: its checks, curves and systems together."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.db.session import Database
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.bundles import upload
from tests.support.fakes import RecordingQueue


def test_submission_findings_and_curve_after_checks(
    client: TestClient,
    settings: Settings,
    database: Database,
    queue: RecordingQueue,
    bad_archive: Path,
) -> None:
    body = upload(client, bad_archive.read_bytes()).json()
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
    detail = client.get(f"/api/v1/submissions/{body['id']}").json()
    assert detail["state"] == "rejected" and detail["finished"] is True
    assert detail["counts"]["errors"] == 2
    curve = detail["curves"][0]
    assert curve["x_metric"] == "tps_per_user" and len(curve["points"]) == 8
    assert curve["offline_ceiling"]["concurrency"] == 13368
    ys = [y for _, y in curve["step_line"]]
    assert ys == sorted(ys, reverse=True)
    findings = client.get(f"/api/v1/submissions/{body['id']}/findings").json()
    assert findings["verdict"] == "rejected" and findings["checker_version"] == "1.5.3.0"
    errors = [f for f in findings["findings"] if not f["passed"]]
    assert {f["rule"] for f in errors} == {"metric-consistency-system-tps", "seed-runtime-match"}
    keys = {"rule", "severity", "passed", "clause", "title", "message", "fix", "path", "point"}
    assert all(keys <= set(f) for f in findings["findings"])
    # Rejected is final (rules §11.1): resubmit as new.
    recheck = client.post(f"/api/v1/submissions/{body['id']}/checks")
    assert recheck.status_code == 409 and recheck.json()["error"]["code"] == "rejected"
    assert len(queue.sent) == 1


def test_the_submission_shows_its_disclosures_and_names_systems_as_results_do(
    client: TestClient,
    settings: Settings,
    database: Database,
    queue: RecordingQueue,
    good_archive: Path,
) -> None:
    body = upload(client, good_archive.read_bytes()).json()
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
    detail = client.get(f"/api/v1/submissions/{body['id']}").json()
    (system,) = detail["systems"]
    assert system["system"] == "Acme H200 x8" and system["system_dir"] == "Acme_H200_x8"
    assert system["serving_framework"] == "vLLM 0.11"
    fields = system["disclosures"]
    assert fields["System category"] == "datacenter" and fields["Cooling"] == "air"
    assert fields["Model precision"] == "bf16" and fields["Serving framework"] == "vLLM 0.11"
    windows = system["steady_state"]
    assert windows and all(w["verdict"] == "STEADY STATE" for w in windows.values())
    (curve,) = detail["curves"]
    assert curve["system"] == system["system"] and curve["system_dir"] == system["system_dir"]
    # Metrics to the precision the results API publishes.
    for point in curve["points"]:
        assert point["system_tps"] == round(point["system_tps"], 3)
    page = client.get(f"/submissions/{body['id']}").text
    assert "What the system discloses" in page and "vLLM 0.11" in page and "STEADY STATE" in page
