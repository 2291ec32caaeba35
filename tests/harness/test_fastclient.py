"""The lean client gives exactly what the httpx client gives, on every response shape."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from harness.client import send
from harness.fastclient import FastClient
from harness.sim import SimConfig

CHAT = {"model": "sim", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 12}


async def _both(url: str, path: str, body: dict[str, Any], streaming: bool):  # type: ignore[no-untyped-def]
    fast = FastClient(url)
    firsts: list[int] = []
    try:
        ours = await fast.send(path, body, streaming=streaming, on_first=firsts.append)
    finally:
        await fast.aclose()
    async with httpx.AsyncClient() as client:
        theirs = await send(client, url + path, body, streaming=streaming)
    return ours, theirs, firsts


@pytest.mark.parametrize(
    ("config", "path", "body", "streaming"),
    [
        (
            SimConfig(ttft_ms=1, tpot_ms=0, output_tokens=12, output_spread=0),
            "/v1/chat/completions",
            {**CHAT, "stream": True},
            True,
        ),
        (SimConfig.instant(12), "/v1/chat/completions", {**CHAT, "stream": True}, True),
        (
            SimConfig(ttft_ms=1, tpot_ms=0, output_tokens=8, output_spread=0, reasoning_tokens=5),
            "/v1/chat/completions",
            {**CHAT, "stream": True},
            True,
        ),
        (
            SimConfig(ttft_ms=1, tpot_ms=0, output_tokens=8, output_spread=0, tokens_per_chunk=3),
            "/v1/completions",
            {"model": "sim", "prompt": "hi", "stream": True},
            True,
        ),
        (
            SimConfig(ttft_ms=1, tpot_ms=0, output_tokens=8, output_spread=0),
            "/v1/chat/completions",
            {**CHAT, "stream": False},
            False,
        ),
        (
            SimConfig(
                ttft_ms=1, tpot_ms=0, output_tokens=8, output_spread=0, whitespace_first_rate=1
            ),
            "/v1/chat/completions",
            {**CHAT, "stream": True},
            True,
        ),
    ],
    ids=["paced", "prebuilt", "reasoning", "completions", "non-streaming", "whitespace-first"],
)
def test_same_output_as_httpx(sim, config, path, body, streaming) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(config)
    ours, theirs, firsts = asyncio.run(_both(endpoint.url, path, body, streaming))
    assert ours.error is None and theirs.error is None
    assert ours.output == theirs.output
    assert ours.finish_reason == theirs.finish_reason == "stop"
    if streaming:
        assert firsts == [ours.recv_first_ns]
        assert ours.issued_ns <= ours.recv_first_ns <= ours.complete_ns  # TPOT can't go negative


def test_errors_and_dropped_connections_are_failures(sim) -> None:  # type: ignore[no-untyped-def]
    overloaded = sim(SimConfig(error_rate=1.0))
    ours, theirs, _ = asyncio.run(
        _both(overloaded.url, "/v1/chat/completions", {**CHAT, "stream": True}, True)
    )
    assert ours.error is not None and ours.error[1].startswith("HTTP 503")
    assert theirs.error is not None and theirs.error[1].startswith("HTTP 503")
    dropping = sim(
        SimConfig(ttft_ms=1, tpot_ms=0.5, output_tokens=30, output_spread=0, drop_rate=1.0)
    )
    ours, theirs, _ = asyncio.run(
        _both(dropping.url, "/v1/chat/completions", {**CHAT, "stream": True}, True)
    )
    assert ours.error is not None and ours.error[0] == "ConnectionLost"
    assert theirs.error is not None


def test_connections_are_reused_and_unreachable_hosts_fail_cleanly(sim) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(SimConfig.instant(5))

    async def run() -> tuple[int, Any]:
        fast = FastClient(endpoint.url)
        for _ in range(20):
            assert (
                await fast.send("/v1/chat/completions", {**CHAT, "stream": True}, streaming=True)
            ).error is None
        idle = len(fast._idle)
        await fast.aclose()
        refused = await FastClient("http://127.0.0.1:9").send(
            "/v1/chat/completions", CHAT, streaming=True
        )
        return idle, refused

    idle, refused = asyncio.run(run())
    assert idle == 1  # one keep-alive connection served all twenty, one after another
    assert refused.error is not None and refused.complete_ns is not None
    with pytest.raises(ValueError, match="plain http"):
        FastClient("https://example.org")
