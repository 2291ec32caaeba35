"""The official submission workflow, unchanged (issue 45): the pinned
``endpoints-submission-cli`` itself (its commands' code in the test's process; its console
script where a test says so, and under the MCP server), against the running portal and its
worker over real HTTP, on the embedded store (the portal's signed URLs) and on the
S3-compatible store (the store's presigned URLs, a worker taking what is staged)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from app.db.models import TransferGrant
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec
from app.settings import Settings
from tests.support.hostile import pax_digit_run
from tests.support.official_cli import MCP, OfficialCli
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.slow, pytest.mark.postgresql]

# Ten runs: the regions' minimum of a curve (1 + 3 + 3 and the Offline run) and two more,
# so that a run can be removed and the curve stays whole.
CONCURRENCIES = (1, 8, 16, 32, 64, 128, 256, 512, 1024)


@pytest.fixture
def cli(portal: RunningPortal, tmp_path: Path) -> OfficialCli:
    return OfficialCli(portal, tmp_path / "home", tmp_path)


@pytest.fixture
def run_folders(tmp_path: Path) -> list[Path]:
    """Run folders of a system no other test submits (its own name and speed)."""
    name = f"Acme CLI {uuid.uuid4().hex[:6]}"
    factory = BundleFactory(
        system=SystemSpec(name=name, peak_tps_per_user=180.0 + uuid.uuid4().int % 97 / 10),
        curves=(CurveSpec(concurrencies=CONCURRENCIES),),
    )
    return factory.run_folders(tmp_path / "runs")


def _portal_view(portal: RunningPortal, public_id: str, timeout: float = 90) -> dict[str, Any]:
    """The portal's own API on the submission, once its checks are over (the bundle may
    still be on its way through the store: it has no portal record until it is taken)."""
    deadline = time.monotonic() + timeout
    with portal.client("submitter") as client:
        while time.monotonic() < deadline:
            answer = client.get(f"/api/v1/submissions/{public_id}")
            if answer.status_code == 200 and answer.json()["finished"]:
                body: dict[str, Any] = answer.json()
                return body
            time.sleep(0.3)
    raise AssertionError(
        f"{public_id} was not checked in {timeout} s:\n{portal.log.read_text()[-3000:]}"
    )


def _replaced(portal: RunningPortal, public_id: str, times: int, timeout: float = 60) -> None:
    """Until the submission's bundle was replaced *times* times (through S3, a worker
    takes the rebuilt bundle a moment after the CLI has put it)."""
    deadline = time.monotonic() + timeout
    with portal.client("submitter") as client:
        while time.monotonic() < deadline:
            events = client.get(f"/api/v1/submissions/{public_id}/timeline").json()["data"]
            if [e["action"] for e in events].count("bundle replaced") >= times:
                return
            time.sleep(0.3)
    raise AssertionError(f"{public_id}'s bundle was not replaced {times} time(s)")


def _outcome(portal: RunningPortal, run_id: str, timeout: float = 60) -> str:
    """What became of the run's upload, once something did (the grant's own record)."""
    settings = Settings(data_dir=portal.data_dir, database_url=portal.env.get("DATABASE_URL"))
    database = Database(settings.effective_database_url)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            with database.session() as session:
                outcome = session.scalar(
                    select(TransferGrant.outcome).where(TransferGrant.subject_id == run_id)
                )
            if outcome is not None:
                return outcome
            time.sleep(0.3)
    finally:
        database.dispose()
    raise AssertionError(f"nothing became of run {run_id}'s upload")


def _active_points(view: dict[str, Any]) -> list[str]:
    return sorted(
        f"{c['system_dir']}/{c['benchmark_model']}/{p['dir']}"
        for c in view["curves"] for p in c["points"] if p["state"] == "active"
    )  # fmt: skip


def test_runs_are_registered_listed_pinned_and_deleted(
    cli: OfficialCli, run_folders: list[Path]
) -> None:
    run_id = cli.create_run(run_folders[0])
    listed = {r["id"]: r for r in cli.json("runs", "list")}
    assert listed[run_id]["concurrency"] == 1 and listed[run_id]["model"]
    got = cli.json("runs", "get", "--run-id", run_id)
    assert got["is_valid"] and got["archive_uri"] and got["system_info"]["submitter_org_names"]
    assert got["expires_at"] is not None and not got["pinned"]
    cli.run("runs", "pin", "--run-id", run_id)
    assert cli.json("runs", "get", "--run-id", run_id)["expires_at"] is None
    cli.run("runs", "unpin", "--run-id", run_id)
    assert cli.json("runs", "get", "--run-id", run_id)["expires_at"] is not None
    # Another organisation's token sees none of it.
    assert run_id not in {r["id"] for r in cli.json("runs", "list", as_="rival")}
    refused = cli.run("runs", "get", "--run-id", run_id, as_="rival", ok=False)
    assert refused.returncode == 1 and "404" in refused.stderr
    cli.run("runs", "delete", "--run-id", run_id)
    assert run_id not in {r["id"] for r in cli.json("runs", "list")}


# The CLI checks the bundle itself on each create, update and remove-run (5 s each on a
# quiet machine): beside another suite the workflow took more than the default 300 s.
@pytest.mark.timeout(900)
def test_a_submission_is_composed_checked_changed_and_withdrawn_with_the_cli(
    portal: RunningPortal, cli: OfficialCli, run_folders: list[Path], tmp_path: Path
) -> None:
    run_ids = [cli.create_run(folder) for folder in run_folders]
    sid = cli.create_submission(run_ids)
    view = _portal_view(portal, sid)
    # The CLI's checker passed; the portal's own checks took the same bundle, one point a run.
    assert view["state"] == "passed_checks", view
    assert len(_active_points(view)) == len(run_ids)
    record = cli.json("submissions", "get", "--submission-id", sid)
    assert record["status"] == "REVIEW_PENDING" and sorted(record["run_ids"]) == sorted(run_ids)
    assert record["submission_checker_version"] and len(record["runs"]) == len(run_ids)
    assert sid in {s["id"] for s in cli.json("submissions", "list")}
    downloads = tmp_path / "downloads"
    cli.run("submissions", "get", "--submission-id", sid, "--download-to", str(downloads))
    with portal.client("submitter") as client:
        stored = client.get(f"/api/v1/submissions/{sid}/archive").content
    assert (downloads / f"{sid}.tar.gz").read_bytes() == stored

    # update --run-ids: a run removed, the bundle rebuilt and checked again.
    by_concurrency = {r["id"]: r["concurrency"] for r in record["runs"]}
    dropped = next(r for r, c in by_concurrency.items() if c == 256)
    cli.run("submissions", "update", "--submission-id", sid,
            *[f"--run-ids={r}" for r in run_ids if r != dropped])  # fmt: skip
    _replaced(portal, sid, 1)
    view = _portal_view(portal, sid)
    assert view["state"] == "passed_checks" and len(_active_points(view)) == len(run_ids) - 1
    assert not any(p.endswith("/r256") for p in _active_points(view))
    # remove-run: another, the same way.
    second = next(r for r, c in by_concurrency.items() if c == 32)
    cli.run("submissions", "remove-run", "--submission-id", sid, "--run-id", second)
    _replaced(portal, sid, 2)
    view = _portal_view(portal, sid)
    assert len(_active_points(view)) == len(run_ids) - 2
    remaining = cli.json("submissions", "get", "--submission-id", sid)["run_ids"]
    assert dropped not in remaining and second not in remaining
    with portal.client("submitter") as client:
        actions = [
            e["action"] for e in client.get(f"/api/v1/submissions/{sid}/timeline").json()["data"]
        ]
    assert actions.count("bundle replaced") == 2 and actions.count("point state") == 2

    # Another organisation's token sees none of it.
    assert sid not in {s["id"] for s in cli.json("submissions", "list", as_="rival")}
    assert (
        cli.run("submissions", "get", "--submission-id", sid, as_="rival", ok=False).returncode == 1
    )

    # As a submitter's shell starts it: the installed console script.
    cli.run("submissions", "withdraw", "--submission-id", sid, script=True)
    assert cli.json("submissions", "get", "--submission-id", sid)["status"] == "WITHDRAWN"


def test_a_hostile_or_reused_upload_through_a_signed_url_is_refused_with_nothing_kept(
    portal: RunningPortal, cli: OfficialCli, run_folders: list[Path]
) -> None:
    """A signed upload URL taken for a run, sent a hostile archive: the run keeps no
    archive, the store takes nothing; sent again, it is used already (or, staged in S3,
    changes nothing the portal took)."""
    run_id = cli.create_run(run_folders[0])
    cli.run("runs", "delete", "--run-id", run_id)
    # Registered again without an archive: the body the CLI sends, by hand.
    body = cli.json("runs", "get", "--run-id", cli.create_run(run_folders[1]))
    payload = {k: body[k] for k in ("benchmark_version", "started_at", "finished_at", "system_info",
                                    "config", "result_summary", "point_config")}  # fmt: skip
    api = f"{portal.url}/submission-api"
    key = {"X-API-Key": portal.tokens["submitter"]}
    fresh = httpx.post(f"{api}/runs", json=payload, headers=key, timeout=30).json()["id"]
    url = httpx.get(f"{api}/runs/{fresh}/archive/upload-url", headers=key, timeout=30).json()
    upload = url["upload_url"]
    hostile = httpx.put(upload, content=pax_digit_run(), timeout=60,
                        headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    if upload.startswith(portal.url):  # the portal's own URL: refused in its answer
        assert hostile.status_code == 422 and hostile.json()["error"]["code"] == "bad-tar-header"
        again = httpx.put(upload, content=b"anything", timeout=30,
                          headers={"Content-Type": "application/octet-stream"})  # fmt: skip
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "signed-url-used"
    else:  # staged in S3: the worker reads it, refuses it and removes it
        assert hostile.status_code == 200
    assert _outcome(portal, fresh).startswith("refused: bad-tar-header")
    run = httpx.get(f"{api}/runs/{fresh}", headers=key, timeout=30).json()
    assert run["is_valid"] is False and run["archive_uri"] is None
    # A signature that is not the portal's, or an expiry moved, is refused.
    if upload.startswith(portal.url):
        forged = upload.replace("expires=", "expires=9")
        answer = httpx.put(forged, content=b"x", timeout=30)
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "bad-signed-url"


def test_the_cli_s_mcp_server_lists_the_runs_through_the_portal(
    cli: OfficialCli, run_folders: list[Path]
) -> None:
    """The ``mcp`` extra's server runs the same CLI for an AI assistant: through it, the
    portal's runs (an MCP client of the ``mcp`` package's own, over stdio)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    run_id = cli.create_run(run_folders[0])
    server = StdioServerParameters(command=MCP, env=cli.env(), cwd=cli.workdir)

    async def listed() -> tuple[set[str], Any]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            return tools, await session.call_tool("list_runs", {})

    tools, answer = anyio.run(listed)
    assert {"list_runs", "create_submission", "withdraw_submission"} <= tools
    assert not answer.is_error
    text = "".join(getattr(part, "text", "") for part in answer.content)
    assert run_id in text
