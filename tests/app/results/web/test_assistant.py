"""The assistant's door (issue 50, item 4): an MCP client of the `mcp` package's own, over
streamable HTTP against the running portal, lists the tools and gets the API's answers."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from tests.support.portal import RunningPortal

pytestmark = pytest.mark.slow
SLA: dict[str, Any] = {"benchmark": "llama3_1-8b", "ttft_p90_max_ms": 500, "tps_per_user_min": 50}


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
