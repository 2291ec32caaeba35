"""One public record: right after a chair invalidates a point and a finalized result is
withdrawn, and again after the next publication step, anonymous compare, history and the
agentic view show what the results show; bad parameters are refused by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.accounts.services.accounts import principal_for_token
from app.db.models import CohortRelease, Publication, Submission, utcnow
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec
from app.main import create_app
from app.results.services.public import list_cohorts, record_version
from app.review.services.decisions import set_point_state, withdraw
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.submissions import finalize_unreviewed, pt, submit

# PostgreSQL too: the public read path's queries are SQL.
pytestmark = pytest.mark.postgresql

NINE = (1, 2, 4, 8, 64, 128, 256, 512, 1024)  # two more than the minimum: one may go


def _result(tmp_path: Path, name: str, speed: float) -> Path:
    return BundleFactory(
        system=SystemSpec(name=f"Acme {name}", saturation_tps=40_000 * speed),
        curves=(CurveSpec(model="llama3_1-8b", concurrencies=NINE),),
        submission_id=f"sub-{name}",
    ).archive(tmp_path / f"{name}.tar.gz")


@pytest.fixture
def record(
    database: Database, settings: Settings, tmp_path: Path
) -> Iterator[tuple[TestClient, dict[str, str], dict[str, Any]]]:
    """Three finalized results published in 2026-12-C1; then one loses a point and
    another is withdrawn, the day after."""
    tokens = create_accounts(database)
    ids: dict[str, str] = {}
    sids = {name: submit(database, settings, _result(tmp_path, name, speed))
            for name, speed in (("kept", 1.0), ("trimmed", 0.9), ("gone", 0.8))}  # fmt: skip
    with database.session() as session:
        for name, sid in sids.items():
            submission = session.get(Submission, sid)
            assert submission is not None
            finalize_unreviewed(session, settings, submission, pt(2026, 12, 7))
            ids[name] = submission.public_id
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        chair = principal_for_token(session, tokens["chair"])
        owner = principal_for_token(session, tokens["submitter"])
        assert chair is not None and owner is not None
        trimmed = session.get(Submission, sids["trimmed"])
        assert trimmed is not None
        set_point_state(session=session, settings=settings, submission=trimmed,
                        point_label=f"{trimmed.curves[0].system.dir_name}/llama3_1-8b/r2",
                        state="invalidated", who=chair, reason="wrong token counts",
                        at=pt(2026, 12, 17))  # fmt: skip
        gone = session.get(Submission, sids["gone"])
        assert gone is not None
        withdraw(session=session, settings=settings, submission=gone, who=owner,
                 reason="hardware recalled", at=pt(2026, 12, 17))  # fmt: skip
        session.commit()
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client, ids, {"settings": settings, "database": database}


def _results(client: TestClient) -> dict[str, tuple[str, list[str]]]:
    body = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
    return {c["submission"]: (c["status"], sorted(p["dir"] for p in c["points"]))
            for c in body["curves"]}  # fmt: skip


def _agree(client: TestClient, ids: dict[str, str]) -> None:
    shown = _results(client)
    assert set(shown) == {ids["kept"], ids["trimmed"]}  # the withdrawn result left
    assert "r2" not in shown[ids["trimmed"]][1]
    compared = client.get(
        "/api/v1/compare", params=[("submission", ids["kept"]), ("submission", ids["trimmed"])]
    ).json()
    for s in compared["submissions"]:
        dirs = sorted(p["dir"] for p in s["curve"]["points"])
        assert (s["result_status"], dirs) == shown[s["submission"]]
    named = client.get(
        "/api/v1/compare", params=[("submission", ids["kept"]), ("submission", ids["gone"])]
    )
    assert named.status_code == 404 and named.json()["error"]["field"] == "submission"
    assert "withdrawn on 2026-12-17" in named.json()["error"]["message"]
    for name in ("kept", "trimmed"):
        where = {"organization": "Acme Corp", "system": f"Acme {name}", "benchmark": "llama3_1-8b"}
        history = client.get("/api/v1/history", params=where).json()
        for entry in history["entries"]:
            entry_points = sorted(p["dir"] for p in entry["points"])
            assert (entry["status"], entry_points) == shown[ids[name]]
    gone = client.get(
        "/api/v1/history",
        params={"organization": "Acme Corp", "system": "Acme gone", "benchmark": "llama3_1-8b"},
    ).json()
    [entry] = gone["entries"]
    assert entry["status"] == "withdrawn" and entry["points"] == [] and entry["left_on"]
    assert entry["left_because"] == "hardware recalled"


def test_compare_and_history_show_what_the_results_show_right_after_and_later(
    record: tuple[TestClient, dict[str, str], dict[str, Any]],
) -> None:
    client, ids, env = record
    _agree(client, ids)  # right after the decisions
    with env["database"].session() as session:
        publish_cohort(session=session, settings=env["settings"], cohort_id="2027-01-C0",
                       at=pt(2027, 1, 6, 8))  # fmt: skip
        session.commit()
    _agree(client, ids)  # and after the next publication step
    # The history page says it too, without drawing the withdrawn result.
    page = client.get(
        "/history",
        params={"organization": "Acme Corp", "system": "Acme gone", "benchmark": "llama3_1-8b"},
    )
    assert "withdrawn on 2026-12-17" in page.text


# Each refused the same way by the API and the page; one record serves them all (a
# refusal changes nothing).
BAD_AGENTIC_PARAMETERS = [
    ({"organization": "Acme Corp", "cohort": "2031-01-C0"}, "cohort"),
    ({"organization": "Acme Corp", "cohort": "next week"}, "cohort"),
    ({"organization": ""}, "organization"),
    ({"organization": "   "}, "organization"),
    ({"organization": "Acme Corp", "status": "bogus"}, "status"),
    ({"organization": "Nobody Inc"}, "organization"),
]


def test_the_agentic_view_refuses_bad_parameters_by_name(
    record: tuple[TestClient, dict[str, str], dict[str, Any]],
) -> None:
    client, _ids, _env = record
    for params, field in BAD_AGENTIC_PARAMETERS:
        answer = client.get("/api/v1/agentic", params=params)
        assert answer.status_code == 422, (params, answer.text)
        error = answer.json()["error"]
        assert error["field"] == field and error["message"] and error["message"] != "''", params
        page = client.get("/agentic", params=params)
        assert page.status_code == 422 and 'id="agentic-error"' in page.text, params


def test_a_released_cohort_shows_the_decisions_taken_since_on_every_surface(
    record: tuple[TestClient, dict[str, str], dict[str, Any]],
) -> None:
    import io
    import json
    import tarfile

    client, ids, _env = record
    # 2026-12-C1 was released before the decisions: viewed now, it honours them.
    body = client.get(
        "/api/v1/results", params={"benchmark": "llama3_1-8b", "cohort": "2026-12-C1"}
    ).json()
    shown = {c["submission"]: sorted(p["dir"] for p in c["points"]) for c in body["curves"]}
    assert set(shown) == {ids["kept"], ids["trimmed"]} and "r2" not in shown[ids["trimmed"]]
    csv_rows = client.get(
        "/api/v1/results",
        params={
            "benchmark": "llama3_1-8b",
            "cohort": "2026-12-C1",
            "format": "csv",
            "table": "points",
        },
    ).text
    assert ids["gone"] not in csv_rows
    # The cohort's archive: the withdrawn result tagged, with no points; the invalidated
    # point gone from its curve.
    export = client.get("/api/v1/cohorts/2026-12-C1/export")
    assert export.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(export.content)) as tar:
        member = tar.extractfile("endpoints-2026-12-C1/manifest.json")
        assert member is not None
        record_doc = json.loads(member.read())
    by_id = {r["submission"]: r for r in record_doc["results"]}
    assert by_id[ids["gone"]]["status"] == "withdrawn" and by_id[ids["gone"]]["points"] == []
    assert "r2" not in [p["dir"] for p in by_id[ids["trimmed"]]["points"]]
    assert sorted(p["dir"] for p in by_id[ids["kept"]]["points"]) == shown[ids["kept"]]
    # The cohort's record lists its versions as written, counting only what they still
    # show: nothing of the withdrawn result, one point fewer of the trimmed one.
    versions = client.get("/api/v1/cohorts/2026-12-C1").json()["data"]
    counted = {v["submission"]: [c["points"] for c in v["curves"]] for v in versions}
    every = len(shown[ids["kept"]])
    assert counted == {ids["kept"]: [every], ids["trimmed"]: [every - 1], ids["gone"]: [0]}
    assert len(shown[ids["trimmed"]]) == every - 1


def test_the_record_is_named_anew_by_each_version_added_or_removed(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    """The public read path keeps what it built under the record's version (the newest
    publication, the count of removed ones): a version added or removed names a new
    record, and the cohorts' counts read after it follow."""
    sid = submit(database, settings, _result(tmp_path, "versioned", 1.0))
    with database.session() as session:
        session.add(CohortRelease(cohort="2026-12-C1", published_at=utcnow(), published_by="t"))
        first = record_version(session)
        version = Publication(submission_id=sid, cohort="2026-12-C1", status="provisional")
        session.add(version)
        session.flush()
        added = record_version(session)
        assert [c.publications for c in list_cohorts(session)] == [1]
        version.removed_at = utcnow()
        session.flush()
        removed = record_version(session)
        assert [c.publications for c in list_cohorts(session)] == [0]
    assert len({first, added, removed}) == 3
