"""Run events in, re-counts out: a sweep's honest run re-counts to its own numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.models import utcnow
from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.runs.services.retokenization import run_retokenization
from app.runs.services.super_passes import define_super_pass
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.sweeps import make_sweep

# The portal's client, its settings and queue, the submission's id, and each point's events.
Uploaded = tuple[TestClient, Settings, RecordingQueue, str, list[tuple[str, Path]]]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, Path]], Path]:
    return make_sweep(tmp_path_factory.mktemp("sweep"))


@pytest.fixture
def setup(settings: Settings, database: Database, swept, tmp_path: Path) -> Iterator[Uploaded]:  # type: ignore[no-untyped-def]
    with _uploaded(settings, database, swept, tmp_path) as env:
        yield env


@contextmanager
def _uploaded(  # type: ignore[no-untyped-def]
    settings: Settings, database: Database, swept, tmp_path: Path, **overrides: object
) -> Iterator[Uploaded]:
    """The sweep uploaded and checked, on a portal with *overrides* to its settings."""
    archive, events, tokenizer_dir = swept
    registry = tmp_path / "tokenizers.json"
    registry.write_text(json.dumps({"llama3_1-8b": {"location": str(tokenizer_dir)}}))
    settings = settings.model_copy(update={"tokenizer_registry": registry, **overrides})
    queue = RecordingQueue()
    token = create_accounts(database)["chair"]
    with TestClient(create_app(settings, queue=queue), headers=bearer(token)) as client:
        upload = client.post(
            "/api/v1/submissions", files={"file": ("b.tar.gz", archive.read_bytes())}
        )
        assert upload.status_code == 201
        sid = upload.json()["id"]
        with database.session() as session:
            run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
        yield client, settings, queue, sid, events


def _run_all(database: Database, settings: Settings, queue: RecordingQueue) -> None:
    with database.session() as session:
        for job_id, kind in queue.sent:
            if kind == "retokenize_point":
                run_retokenization(session=session, settings=settings, job_id=job_id)


def test_honest_events_recount_to_the_submitted_numbers(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    for label, path in events:
        response = client.put(
            f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes()
        )
        assert response.status_code == 201, response.text
        assert response.json()["created"] is True and response.json()["retokenizations"]
        assert response.json()["stored_size"] < response.json()["size"]  # compressed at rest
    again = client.put(
        f"/api/v1/submissions/{sid}/points/{events[0][0]}/events", content=events[0][1].read_bytes()
    )
    assert again.status_code == 200 and again.json()["created"] is False
    _run_all(database, settings, queue)
    recounts = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
    assert len(recounts) == len(events)
    analysed = 0
    for recount in recounts:
        assert recount["job"]["state"] == "succeeded", recount
        problems = [f["message"] for f in recount["findings"] if f["severity"] != "info"]
        assert problems == [], (recount["point"], problems)
        # The harness writes events_sha256 into the summary: the chain is whole.
        chain = {f["rule"]: f["message"] for f in recount["findings"]}
        assert "the same file" in chain["events-summary-hash"]
        assert "summary-point-seeds" in chain and "events-summary-duration" in chain
        # The run over time, served on its own, adds up to the re-count.
        series = client.get(f"/api/v1/retokenizations/{recount['id']}/timeseries").json()
        issued = recount["recount"]["n_samples_issued"]
        assert sum(series["issued"]) == issued == series["requests"]
        assert sum(series["completed"]) + sum(series["failed"]) == issued
        tokens = sum(v * series["bin_s"] for v in series["output_tps"] if v is not None)
        assert tokens == pytest.approx(recount["recount"]["total_output_tokens"], rel=1e-6)
        assert 0 < series["last_issue_s"] <= series["end_s"]
        assert len(series["in_flight"]) == len(series["t_s"]) and series["in_flight"][-1] == 0
        for row in recount["compared"]:
            if row["reported"] is not None and row["recounted"] is not None:
                assert row["recounted"] == pytest.approx(row["reported"], rel=1e-6), row
        # Fixed-concurrency points: the steady state the sweep declared (from its own
        # analysis) is the one the portal finds; the Offline point has none.
        view = recount["steady_state"]
        response = client.get(f"/api/v1/retokenizations/{recount['id']}/steady-state")
        if view is None:
            assert response.status_code == 404 and "no steady-state analysis" in response.text
            continue
        analysed += 1
        assert response.json() == view
        assert view["declared"]["status"] == view["status"]
        assert view["declared"]["verdict"] == view["verdict"]
        assert "steady-state-detected" in chain and "steady-state-declared" in chain
    assert 0 < analysed < len(recounts)
    missing = client.get("/api/v1/retokenizations/nope/timeseries")
    assert missing.status_code == 404 and "no re-tokenization" in missing.text
    page = client.get(f"/submissions/{sid}")
    assert "Re-tokenization" in page.text and "re-counted" in page.text
    assert page.text.count('class="timeseries"') == len(events)
    assert page.text.count('class="steady-state"') == analysed


def test_the_events_are_cut_at_the_benchmark_s_super_pass(  # type: ignore[no-untyped-def]
    settings, database, swept, tmp_path
) -> None:
    """The sweep declares super-passes of one pass over its 70 prompts; the operator's
    benchmark definition sets 35, so the events are analysed at 35 and the difference is
    a warning on every analysed point."""
    with _uploaded(settings, database, swept, tmp_path, extra_datasets=["sim_prompts"]) as env:
        client, settings, queue, sid, events = env
        with database.session() as session:
            define_super_pass(
                session, settings, "sim_prompts", 35, "the test's definition", clock=utcnow
            )
            session.commit()
        for label, path in events:
            client.put(
                f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes()
            )
        _run_all(database, settings, queue)
        recounts = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
        analysed = [r for r in recounts if r["steady_state"] is not None]
        assert analysed
        for recount in analysed:
            view = recount["steady_state"]
            assert view["method"]["super_pass_size"] == 35
            assert view["super_pass_basis"] == (
                "the benchmark definition for sim_prompts (the test's definition)"
            )
            [warning] = [f for f in recount["findings"] if f["rule"] == "steady-state-super-pass"]
            assert warning["severity"] == "warning" and warning["message"].startswith(
                "point.yaml's super-passes are 70 requests; the benchmark definition for "
                "sim_prompts (the test's definition) is 35"
            )
        page = client.get(f"/submissions/{sid}").text
        assert "cut into super-passes of 35 (the benchmark definition for sim_prompts" in page


def test_inflated_tokens_in_events_are_caught(setup, database, tmp_path) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    label, path = events[2]
    doctored = tmp_path / "events.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["event_type"] == "sample.complete" and event["data"]:
            event["data"][1][0] = " "  # a whitespace first chunk: a fake first token
        lines.append(json.dumps(event))
    doctored.write_text("\n".join(lines) + "\n")
    assert (
        client.put(
            f"/api/v1/submissions/{sid}/points/{label}/events", content=doctored.read_bytes()
        ).status_code
        == 201
    )
    _run_all(database, settings, queue)
    [recount] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
    rules = {f["rule"]: f for f in recount["findings"]}
    # The blank first chunk is evidence for a reviewer; the tokens it cost are an error.
    assert rules["fake-first-token"]["severity"] == "warning"
    assert rules["recounted-output-tokens"]["severity"] == "error"
    # The verdict box counts re-count errors too, not only the checks'.
    page = client.get(f"/submissions/{sid}").text
    errors = sum(f["severity"] == "error" for f in recount["findings"])
    assert f"re-counts: {errors} error(s)" in page and "checks: 0 error(s)" in page


def test_the_tokenizer_shown_is_named_not_located(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    label, path = events[0]
    client.put(f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes())
    _run_all(database, settings, queue)
    [recount] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
    assert recount["tokenizer"].startswith("llama3_1-8b reference tokenizer (tokenizer.json sha256")
    location = json.loads(settings.tokenizer_registry.read_text())["llama3_1-8b"]["location"]
    page = client.get(f"/submissions/{sid}").text
    assert location not in page
    # What the re-count's checks (its integrity checks among them) found in order is said
    # too, not only what they found wrong.
    held = [f for f in recount["findings"] if f["severity"] == "info"]
    assert held and f'id="checks-held-{recount["id"]}"' in page
    assert any(f["rule"] == "events-summary-counts" for f in held)
    plural = "s" if len(held) != 1 else ""
    assert f"{len(held)} check{plural} of this re-count found nothing wrong" in page


def test_without_a_tokenizer_nothing_is_said_to_be_re_counted(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    bare = settings.model_copy(update={"tokenizer_registry": None})
    label, path = events[0]
    client.put(f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes())
    _run_all(database, bare, queue)
    [recount] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
    assert recount["tokenizer"] is None
    (missing,) = [f for f in recount["findings"] if f["rule"] == "tokenizer-missing"]
    assert missing["severity"] == "warning" and "/" not in missing["message"]
    # The chain from the events to the summary needs no tokenizer: checked, and shown.
    rules = {f["rule"]: f for f in recount["findings"]}
    assert rules["events-summary-counts"]["severity"] == "info"
    assert rules["recounted-sample-accounting"]["severity"] == "info"
    # The steady state needs TPOT, so it says why it was not analysed.
    steady = rules["steady-state-detected"]
    assert steady["message"].startswith("Not analysed: no reference tokenizer")
    page = client.get(f"/submissions/{sid}").text
    assert (
        "not re-counted" in page and "Not re-counted: the portal has no reference tokenizer" in page
    )
    assert "completed samples re-counted" not in page
    assert 'id="recount-all"' in page  # this portal has the tokenizer: it offers re-counts
    with TestClient(create_app(bare, queue=queue), headers=client.headers) as without:
        page = without.get(f"/submissions/{sid}").text
        assert 'id="no-tokenizer"' in page and "llama3_1-8b" in page
        assert 'id="recount-all"' not in page  # not offered where nothing can be counted
        assert 'class="link retry"' not in page  # nor again, point by point


def test_bad_uploads_are_refused_and_leave_nothing(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    assert (
        client.put(f"/api/v1/submissions/{sid}/points/x/y/r1/events", content=b"{}").status_code
        == 404
    )
    assert (
        client.put(f"/api/v1/submissions/{sid}/points/{events[0][0]}/events", content=b"").json()[
            "error"
        ]["code"]
        == "empty"
    )
    small = settings.model_copy(update={"max_events_bytes": 1000})
    with TestClient(create_app(small, queue=queue), headers=client.headers) as tight:
        response = tight.put(
            f"/api/v1/submissions/{sid}/points/{events[0][0]}/events",
            content=events[0][1].read_bytes(),
        )
        assert response.status_code == 413
    assert client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"] == []
    assert list(settings.tmp_dir.glob("events-*")) == []


def test_events_uploads_have_a_rate_and_a_number_of_files_per_point(  # type: ignore[no-untyped-def]
    settings, database, swept, tmp_path
) -> None:
    """Issue 44: 25 distinct events files of up to 8 GiB each were taken in seconds."""
    limits = {"events_files_per_point": 2, "events_uploads_per_hour": 4}
    with _uploaded(settings, database, swept, tmp_path, **limits) as env:
        client, settings, _queue, sid, events = env
        label, path = events[0]
        url = f"/api/v1/submissions/{sid}/points/{label}/events"
        base = path.read_bytes()
        sent = [client.put(url, content=base + b"\n" * n) for n in range(3)]
        assert [r.status_code for r in sent[:2]] == [201, 201]
        assert sent[2].status_code == 409 and sent[2].json()["error"]["code"] == "events-quota"
        assert client.get(f"/api/v1/submissions/{sid}").status_code == 200
        fourth = client.put(url, content=base)
        assert fourth.status_code == 409  # the quota, before the body is read
        fifth = client.put(url, content=base)
        assert fifth.status_code == 429 and "retry-after" in fifth.headers
    assert list(settings.tmp_dir.glob("events-*")) == []


def test_cancel_and_retry(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    label, path = events[1]
    client.put(f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes())
    [queued] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
    assert client.post(f"/api/v1/retokenizations/{queued['id']}/cancel").status_code == 202
    _run_all(database, settings, queue)  # the cancelled job does nothing
    body = client.get(f"/api/v1/retokenizations/{queued['id']}").json()
    assert body["job"]["state"] == "cancelled" and body["recount"] == {}
    assert client.post(f"/api/v1/retokenizations/{queued['id']}/cancel").status_code == 409
    retry = client.post(f"/api/v1/submissions/{sid}/retokenizations", json={"point": label})
    assert retry.status_code == 202 and len(retry.json()["data"]) == 1
    _run_all(database, settings, queue)
    latest = client.get(f"/api/v1/retokenizations/{retry.json()['data'][0]}").json()
    assert latest["job"]["state"] == "succeeded"
    missing = client.post(f"/api/v1/submissions/{sid}/retokenizations", json={"point": "a/b/r9"})
    assert missing.status_code == 404


def test_a_recount_is_shown_with_its_job_as_one_moment_saw_them(setup, database) -> None:  # type: ignore[no-untyped-def]
    """Found in CI: a page that had loaded the submission (with its jobs) before the worker
    finished showed a finished re-count whose job was still running."""
    from app.runs.services.retokenization import list_retokenizations
    from app.runs.services.views import retokenization_view
    from app.submissions.services.views import get_submission

    client, settings, queue, sid, events = setup
    label, path = events[0]
    put = client.put(f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes())
    assert put.status_code == 201
    with database.session() as reader:
        submission = get_submission(reader, sid)
        assert submission is not None
        assert [j.state for j in submission.jobs if j.kind == "retokenize_point"] == ["queued"]
        _run_all(database, settings, queue)  # the worker, in its own session
        [retok] = list_retokenizations(reader, submission)
        view = retokenization_view(retok, [])
        assert view.finished and view.job is not None and view.job.state == "succeeded"


def test_a_recount_counted_in_parts_says_so(  # type: ignore[no-untyped-def]
    settings, database, swept, tmp_path
) -> None:
    from app.pipeline import JOB_KINDS

    with _uploaded(
        settings, database, swept, tmp_path, retokenize_split_bytes=1, retokenize_max_parts=2
    ) as (client, split, queue, sid, events):
        label, path = events[0]
        client.put(f"/api/v1/submissions/{sid}/points/{label}/events", content=path.read_bytes())
        [job_id] = [j for j, kind in queue.sent if kind == "retokenize_point"]
        with database.session() as session:
            JOB_KINDS["retokenize_point"].run(
                session=session, settings=split, job_id=job_id, queue=queue
            )
        [waiting] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
        assert waiting["job"]["state"] == "waiting" and not waiting["finished"]
        assert [(p["part"], p["parts"], p["job"]["state"]) for p in waiting["parts"]] == [
            (1, 2, "queued"), (2, 2, "queued"),
        ]  # fmt: skip
        page = client.get(f"/submissions/{sid}").text
        assert "counting in 2 parts on the workers" in page and "part 2 of 2: queued" in page
        while queue.sent:
            (job_id, kind), *queue.sent = queue.sent
            with database.session() as session:
                JOB_KINDS[kind].run(session=session, settings=split, job_id=job_id, queue=queue)
        [done] = client.get(f"/api/v1/submissions/{sid}/retokenizations").json()["data"]
        assert done["job"]["state"] == "succeeded"
        assert sum(p["responses"] for p in done["parts"]) == done["recount"]["n_samples_completed"]
        assert "counted in 2 parts by the workers" in client.get(f"/submissions/{sid}").text


def test_only_the_submitter_of_record_attests_the_same_system(setup, database) -> None:  # type: ignore[no-untyped-def]
    client, settings, queue, sid, events = setup
    tokens = create_accounts(database)  # the same users: fresh tokens
    body = {"point": events[0][0], "endpoint_url": "http://127.0.0.1:9", "same_system": True}
    # The chair may ask for a reproduction, not vouch for the submitter's system (§11.4).
    chair = client.post(f"/api/v1/submissions/{sid}/reproductions", json=body)
    assert chair.status_code == 403 and chair.json()["error"]["code"] == "not-yours"
    assert "only the submitting organisation may attest" in chair.json()["error"]["message"]
    # The submitting organisation may: the request goes on to its other checks.
    own = client.post(
        f"/api/v1/submissions/{sid}/reproductions",
        json=body,
        headers=bearer(tokens["submitter"]),
    )
    assert own.json().get("error", {}).get("code") != "not-yours", own.text
    # Without the attestation the chair's request is not refused for it.
    plain = client.post(
        f"/api/v1/submissions/{sid}/reproductions", json={**body, "same_system": False}
    )
    assert plain.json().get("error", {}).get("code") != "not-yours", plain.text
