"""The assistant's door (issue 50, item 4): an MCP client of the `mcp` package's own, over
streamable HTTP against the running portal, lists the tools and gets the API's answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support import PROJECT_ROOT
from tests.support.fakes import RecordingQueue
from tests.support.portal import RunningPortal

pytestmark = pytest.mark.slow
SLA: dict[str, Any] = {"benchmark": "llama3_1-8b", "ttft_p90_max_ms": 500, "tps_per_user_min": 50}
# A first MCP request, as a client sends it to a door on loopback (its DNS-rebinding guard).
LOOPBACK = "http://127.0.0.1:8000"
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "a test", "version": "1"}}}  # fmt: skip
ACCEPT = {"accept": "application/json, text/event-stream"}


def _ask(url: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def asked() -> tuple[set[str], list[Any]]:
        async with (
            streamable_http_client(f"{url}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            answers = [await session.call_tool(name, arguments) for name, arguments in calls]
            return tools, answers

    return anyio.run(asked)


def test_an_assistant_finds_the_systems_the_api_ranks(portal: RunningPortal) -> None:
    api = httpx.get(f"{portal.url}/api/v1/results", params=SLA, timeout=30).json()
    first = api["ranking"][0]
    tools, (found, refused, result, cohorts) = _ask(
        portal.url,
        [
            ("find_systems", SLA),
            ("find_systems", {"benchmark": "no-such-model"}),
            ("get_result", {"ref": first["result_id"]}),
            ("list_cohorts", {}),
        ],
    )
    assert tools == {"list_benchmarks", "list_cohorts", "find_systems", "plan_capacity",
                     "compare_systems", "get_result"}  # fmt: skip
    # The same SLA answer as GET /api/v1/results: the same systems, points and figures.
    assert not found.is_error
    assert found.structured_content["ranking"] == api["ranking"]
    # A refusal in the API's words, naming the parameter.
    assert refused.is_error
    said = "".join(getattr(part, "text", "") for part in refused.content)
    assert "benchmark: no published curves for benchmark 'no-such-model'" in said
    report = httpx.get(f"{portal.url}/api/v1/results/{first['result_id']}", timeout=30).json()
    assert result.structured_content["curve"]["points"] == report["curve"]["points"]
    assert result.structured_content["citation"] == report["citation"]
    listed = httpx.get(f"{portal.url}/api/v1/cohorts", timeout=30).json()["data"]
    assert [c["id"] for c in cohorts.structured_content["result"]] == [c["id"] for c in listed]


def test_llms_txt_names_the_api_and_the_door(portal: RunningPortal) -> None:
    answer = httpx.get(f"{portal.url}/llms.txt", timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    assert answer.text.startswith("# MLPerf Endpoints Portal")
    for named in ("/api/v1/results", "/mcp", "find_systems", "/openapi.json"):
        assert named in answer.text


def test_the_door_over_stdio_answers_as_over_http(
    demo_env: tuple[Settings, Database], tmp_path: Path
) -> None:
    """`endpoints-portal mcp`: the same tools for a client that starts the server itself."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    settings, _database = demo_env
    env = {**os.environ, "ENDPOINTS_PORTAL_DATA_DIR": str(settings.data_dir)}
    if settings.database_url:
        env["ENDPOINTS_PORTAL_DATABASE_URL"] = settings.database_url
    command = str(Path(sys.executable).parent / "endpoints-portal")
    server = StdioServerParameters(command=command, args=["mcp"], env=env, cwd=str(tmp_path))

    async def asked() -> tuple[set[str], Any]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            return tools, await session.call_tool("find_systems", SLA)

    tools, found = anyio.run(asked)
    assert {"find_systems", "get_result"} <= tools and not found.is_error
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        api = client.get("/api/v1/results", params=SLA).json()
    assert found.structured_content["ranking"] == api["ranking"]


def test_the_door_opens_on_its_first_knock_in_each_start(
    demo_env: tuple[Settings, Database],
) -> None:
    """The MCP library is not loaded with the app (a quarter of a web process's start-up);
    the door opens when first asked, and again in each start of the same app."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, app.main; print(sorted({m.split('.')[0] for m in "
         "sys.modules} & {'mcp', 'mcp_types'}))"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr
    settings, _database = demo_env
    app = create_app(settings, queue=RecordingQueue())
    for _start in range(2):
        with TestClient(app, base_url=LOOPBACK) as client:
            answer = client.post("/mcp", json=HELLO, headers=ACCEPT)
            assert answer.status_code == 200, answer.text
            assert answer.json()["result"]["serverInfo"]["name"] == "mlperf-endpoints-portal"
    # Between starts no door is kept: it says so rather than hang.
    closed = TestClient(app, base_url=LOOPBACK).post("/mcp", json=HELLO, headers=ACCEPT)
    assert closed.status_code == 503 and "not open" in closed.text


def test_a_door_that_cannot_open_says_so_and_the_portal_runs_on(
    demo_env: tuple[Settings, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("no MCP today")

    monkeypatch.setattr("app.results.web.assistant.assistant_server", broken)
    settings, _database = demo_env
    with TestClient(create_app(settings, queue=RecordingQueue()), base_url=LOOPBACK) as client:
        for _knock in range(2):
            refused = client.post("/mcp", json=HELLO, headers=ACCEPT)
            assert refused.status_code == 503 and "not open" in refused.text
        assert client.get("/healthz").status_code == 200
        assert client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).status_code == 200
