"""The lean client gives exactly what the httpx client gives, on every response shape."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.load.client import send
from harness.load.fastclient import FastClient, _Connection, _Exchange
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


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    pieces=st.lists(st.binary(min_size=1, max_size=40), max_size=8),
    extensions=st.lists(st.booleans(), min_size=8, max_size=8),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_dechunking_gives_the_body_however_the_bytes_arrive(
    pieces: list[bytes], extensions: list[bool], cuts: list[int]
) -> None:
    """Chunked framing (sizes with and without extensions, CRLF inside the data) split
    at any byte boundaries across reads."""
    wire = (
        b"".join(
            f"{len(p):x}{';ext=1' if extensions[i] else ''}\r\n".encode() + p + b"\r\n"
            for i, p in enumerate(pieces)
        )
        + b"0\r\n\r\n"
    )
    bounds = sorted({min(c, len(wire)) for c in cuts} | {len(wire)})

    async def feed() -> tuple[bytes, list[bool]]:
        exchange = _Exchange(False, None)
        done = []
        start = 0
        for end in bounds:
            exchange.raw += wire[start:end]
            start = end
            done.append(_Connection._dechunk(exchange))
        return bytes(exchange.body), done

    body, done = asyncio.run(feed())
    assert body == b"".join(pieces)
    assert done[-1] is True and not any(done[:-1])


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer k\r\nX-Injected: yes"},
        {"Authorization": "Bearer k\r\nContent-Length: 0\r\n\r\nGET /admin HTTP/1.1"},
        {"Authorization": "Bearer k\n"},
        {"Authorization": "Bearer k\x00"},
        {"X-Bad Name": "v"},
        {"Authorization": "Bearer ключ"},
    ],
)
def test_a_header_that_would_split_the_request_is_refused_not_sent(
    headers: dict[str, str],
) -> None:
    with pytest.raises(ValueError, match="header"):
        FastClient("http://127.0.0.1:9", headers=headers)

    async def send_one() -> None:
        client = FastClient("http://127.0.0.1:9")
        await client.send("/v1/chat/completions", CHAT, streaming=False, headers=headers)

    with pytest.raises(ValueError, match="header"):
        asyncio.run(send_one())


def test_an_endpoint_path_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError, match="path"):
        FastClient("http://127.0.0.1:9/v1\r\nX-Injected: yes")


def test_an_error_answer_is_recorded_as_its_status_and_length_never_its_body() -> None:
    secret = b"internal: db password hunter2"

    async def scenario() -> tuple[Any, Any]:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            await reader.read(2)  # the tiny body, or nothing
            head = b"HTTP/1.1 500 Oops\r\nContent-Length: %d\r\n\r\n" % len(secret)
            writer.write(head + secret)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            ours, theirs, _ = await _both(
                f"http://127.0.0.1:{port}", "/v1/chat/completions", CHAT, False
            )
            return ours, theirs

    ours, theirs = asyncio.run(scenario())
    for response in (ours, theirs):
        assert response.error == ("HTTPError", f"HTTP 500 ({len(secret)} bytes)")
