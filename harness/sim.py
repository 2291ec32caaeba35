"""A simulated OpenAI-compatible streaming endpoint, for tests, demos and benchmarks.

Capacity model: at most ``max_batch`` requests decode at once and the rest queue; a
request's first token comes after its queueing plus a prefill time that grows with the
prompt; each further token takes ``tpot_ms × (1 + batch_slowdown × (active − 1))``. A
concurrency sweep against it therefore draws a realistic Pareto curve: per-user speed
falls and system throughput saturates as load grows.

Fault injection (per request, seeded): HTTP errors, connections dropped mid-stream,
whitespace-only first chunks, slow first chunks. Raw asyncio HTTP/1.1 with keep-alive and
chunked SSE, so the server is never the bottleneck of a client benchmark.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

WORDS = (
    "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
    "sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore",
)  # fmt: skip


def sim_token_counter() -> Any:
    """A reference tokenizer for the simulator: one token per word it emits, so client-side
    counts match the server's and timing can be compared token for token."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from harness.metrics.tokens import TokenCounter

    vocab = {word: i for i, word in enumerate(("[UNK]", *WORDS))}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return TokenCounter(tokenizer, None, name="serve-sim words")


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
)
STREAM_END = b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"


def usage_chunk(completion_tokens: int) -> bytes:
    """The last event of a stream whose client asked for usage: no choices, the count."""
    payload = (
        b"data: "
        + json.dumps(
            {"id": "sim", "object": "chat.completion.chunk", "choices": [],
             "usage": {"completion_tokens": completion_tokens}}
        ).encode()
        + b"\n\n"
    )  # fmt: skip
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def sse_chunk(chat: bool, delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One SSE event, framed as one HTTP chunk."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if chat:
        choice["delta"] = delta
    else:
        choice["text"] = delta.get("content", "")
    payload = (
        b"data: "
        + json.dumps({"id": "sim", "object": "chat.completion.chunk", "choices": [choice]}).encode()
        + b"\n\n"
    )
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


@dataclass
class SimConfig:
    ttft_ms: float = 30.0
    prefill_ms_per_1k_tokens: float = 20.0
    tpot_ms: float = 5.0
    batch_slowdown: float = 0.02
    max_batch: int = 64
    output_tokens: int = 128  # used when the request asks for more
    output_spread: float = 0.3  # lognormal CoV of the output length (0: fixed)
    tokens_per_chunk: int = 1
    reasoning_tokens: int = 0  # emit this many reasoning tokens before the content
    error_rate: float = 0.0
    drop_rate: float = 0.0
    whitespace_first_rate: float = 0.0
    slow_first_rate: float = 0.0
    slow_first_ms: float = 500.0
    # Faults over the run, by the order requests arrive: per-token time that keeps growing
    # (this fraction more per 1,000 requests: a ramp that never settles), a level shift
    # (from request ``shift_after`` on, per-token time × ``shift_factor``), and a burst of
    # ``error_burst_count`` failed requests from request ``error_burst_start`` on.
    tpot_drift_per_1k: float = 0.0
    shift_after: int | None = None
    shift_factor: float = 1.0
    error_burst_start: int | None = None
    error_burst_count: int = 0
    seed: int = 0

    @classmethod
    def instant(cls, chunks: int = 100) -> SimConfig:
        """No delays at all, a fixed number of one-token chunks: a roofline server."""
        return cls(
            ttft_ms=0,
            prefill_ms_per_1k_tokens=0,
            tpot_ms=0,
            batch_slowdown=0,
            max_batch=1_000_000,
            output_tokens=chunks,
            output_spread=0,
        )


@dataclass
class SimStats:
    requests: int = 0
    errors: int = 0
    drops: int = 0
    # Server-side timings per completed request, to measure a client's error against.
    ttft_ns: list[int] = field(default_factory=list)
    tpot_ns: list[float] = field(default_factory=list)
    # Requests per X-Session-ID value: how a multi-turn client routed its conversations.
    sessions: dict[str, int] = field(default_factory=dict)


class SimServer:
    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.stats = SimStats()
        self._rng = random.Random(config.seed)
        self._slots = asyncio.Semaphore(config.max_batch)
        self._active = 0
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()
        # Whole responses built once, when nothing about them varies (the roofline mode).
        self._prebuilt: dict[tuple[bool, int], bytes] = {}

    # -- HTTP plumbing -----------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0, *, shared: bool = False) -> int:
        """Listen; *shared* lets several processes listen on one port (SO_REUSEPORT), the
        kernel spreading connections over them."""
        self._server = await asyncio.start_server(
            self._connection, host, port, backlog=4096, reuse_port=shared or None
        )
        return int(self._server.sockets[0].getsockname()[1])

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                session = headers.get("x-session-id")
                if session is not None:
                    self.stats.sessions[session] = self.stats.sessions.get(session, 0) + 1
                keep = await self._dispatch(method, path, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (
            asyncio.IncompleteReadError,
            ConnectionError,
            asyncio.LimitOverrunError,
            ValueError,
            asyncio.CancelledError,
        ):
            pass
        finally:
            writer.close()

    @staticmethod
    def _plain(writer: asyncio.StreamWriter, status: str, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )

    async def _dispatch(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if method == "GET" and path in ("/health", "/v1/models"):
            self._plain(writer, "200 OK", {"status": "ok", "data": [{"id": "sim"}]})
            await writer.drain()
            return True
        if method == "GET" and path == "/sim/stats":
            s = self.stats
            self._plain(
                writer,
                "200 OK",
                {
                    "requests": s.requests,
                    "errors": s.errors,
                    "drops": s.drops,
                    "ttft_ns": s.ttft_ns,
                    "tpot_ns": s.tpot_ns,
                    "sessions": s.sessions,
                },
            )
            await writer.drain()
            return True
        if method != "POST" or path not in ("/v1/chat/completions", "/v1/completions"):
            self._plain(writer, "404 Not Found", {"error": {"message": f"no route {path}"}})
            await writer.drain()
            return True
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            self._plain(writer, "400 Bad Request", {"error": {"message": "body is not JSON"}})
            await writer.drain()
            return True
        return await self._complete(request, path.endswith("chat/completions"), writer)

    # -- the model -------------------------------------------------------------------

    def _prompt_tokens(self, request: dict[str, Any]) -> int:
        if "messages" in request:
            text = " ".join(str(m.get("content") or "") for m in request["messages"])
        else:
            text = str(request.get("prompt", ""))
        return len(text.split())

    def _output_tokens(self, request: dict[str, Any], rng: random.Random) -> int:
        c = self.config
        asked = request.get("max_completion_tokens") or request.get("max_tokens") or c.output_tokens
        n = c.output_tokens
        if c.output_spread > 0:
            sigma = c.output_spread
            n = int(round(rng.lognormvariate(0, sigma) * c.output_tokens / (1 + sigma * sigma / 2)))
        return max(1, min(int(asked), n))

    async def _complete(
        self, request: dict[str, Any], chat: bool, writer: asyncio.StreamWriter
    ) -> bool:
        c = self.config
        number = self.stats.requests  # 0-based, in the order requests arrive
        self.stats.requests += 1
        rng = random.Random(self._rng.random())
        in_burst = (
            c.error_burst_start is not None
            and c.error_burst_start <= number < c.error_burst_start + c.error_burst_count
        )
        if rng.random() < c.error_rate or in_burst:
            self.stats.errors += 1
            self._plain(
                writer, "503 Service Unavailable", {"error": {"message": "simulated overload"}}
            )
            await writer.drain()
            return True
        received = time.monotonic_ns()
        n_out = self._output_tokens(request, rng)
        drop_after = rng.randrange(1, n_out + 1) if rng.random() < c.drop_rate else None
        whitespace_first = rng.random() < c.whitespace_first_rate
        slow_first = rng.random() < c.slow_first_rate
        stream = bool(request.get("stream", False))
        options = request.get("stream_options")
        usage = isinstance(options, dict) and bool(options.get("include_usage"))
        plain = drop_after is None and not whitespace_first and not usage
        if stream and self._is_static() and plain:
            key = (chat, n_out)
            if key not in self._prebuilt:
                self._prebuilt[key] = self._build_stream(chat, n_out)
            writer.write(self._prebuilt[key])
            await writer.drain()
            return True
        async with self._slots:
            self._active += 1
            try:
                prefill = (
                    c.ttft_ms + c.prefill_ms_per_1k_tokens * self._prompt_tokens(request) / 1000
                )
                if slow_first:
                    prefill += c.slow_first_ms
                if prefill > 0:
                    await asyncio.sleep(prefill / 1000)
                slowdown = self._slowdown(number)
                if not stream:
                    await self._sleep_tokens(n_out, slowdown)
                    text = " ".join(WORDS[i % len(WORDS)] for i in range(n_out))
                    self._plain(writer, "200 OK", self._message(chat, text, n_out, request))
                    await writer.drain()
                    return True
                return await self._stream(
                    writer, chat, n_out, received, drop_after, whitespace_first, slowdown, usage
                )
            finally:
                self._active -= 1

    def _is_static(self) -> bool:
        c = self.config
        return (
            c.ttft_ms == c.tpot_ms == c.prefill_ms_per_1k_tokens == 0
            and c.reasoning_tokens == 0
            and c.slow_first_rate == 0
        )

    def _build_stream(self, chat: bool, n_out: int) -> bytes:
        """The bytes ``_stream`` would send with no delays, for reuse."""
        parts = [STREAM_HEAD]

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            parts.append(sse_chunk(chat, delta, finish))

        if chat:
            event({"role": "assistant", "content": ""})
        step = max(self.config.tokens_per_chunk, 1)
        for position in range(0, n_out, step):
            count = min(step, n_out - position)
            event(
                {"content": "".join(" " + WORDS[(position + i) % len(WORDS)] for i in range(count))}
            )
        event({}, "stop")
        parts.append(STREAM_END)
        return b"".join(parts)

    async def _sleep_tokens(self, n: int, slowdown: float) -> None:
        per = self._per_token_s(slowdown)
        if per > 0:
            await asyncio.sleep(per * n)

    def _slowdown(self, number: int) -> float:
        """The faults' factor on per-token time for the request that arrived *number*th."""
        c = self.config
        factor = 1 + c.tpot_drift_per_1k * number / 1000
        if c.shift_after is not None and number >= c.shift_after:
            factor *= c.shift_factor
        return factor

    def _per_token_s(self, slowdown: float = 1.0) -> float:
        c = self.config
        return slowdown * c.tpot_ms * (1 + c.batch_slowdown * max(self._active - 1, 0)) / 1000

    @staticmethod
    def _message(chat: bool, text: str, n_out: int, request: dict[str, Any]) -> dict[str, Any]:
        usage = {"completion_tokens": n_out}
        if chat:
            return {
                "id": "sim",
                "object": "chat.completion",
                "model": request.get("model", "sim"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        return {
            "id": "sim",
            "object": "text_completion",
            "model": request.get("model", "sim"),
            "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
            "usage": usage,
        }

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        chat: bool,
        n_out: int,
        received: int,
        drop_after: int | None,
        whitespace_first: bool,
        slowdown: float,
        usage: bool = False,
    ) -> bool:
        c = self.config
        writer.write(STREAM_HEAD)

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            writer.write(sse_chunk(chat, delta, finish))

        if chat:
            event({"role": "assistant", "content": ""})  # role-only: never a first token
        sent = 0
        first_ns = None
        next_at = time.monotonic()
        kinds = ["reasoning"] * c.reasoning_tokens + ["content"] * n_out
        for position in range(0, len(kinds), max(c.tokens_per_chunk, 1)):
            group = kinds[position : position + max(c.tokens_per_chunk, 1)]
            words = "".join(" " + WORDS[(position + i) % len(WORDS)] for i in range(len(group)))
            if position == 0 and whitespace_first:
                words = " " * len(group)
            key = "reasoning_content" if group[0] == "reasoning" else "content"
            event({key: words})
            if first_ns is None:
                first_ns = time.monotonic_ns()
            sent += len(group)
            if drop_after is not None and sent >= drop_after:
                self.stats.drops += 1
                await writer.drain()
                writer.transport.abort()
                return False
            per = self._per_token_s(slowdown) * len(group)
            if per > 0:
                next_at += per
                await writer.drain()
                delay = next_at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
        event({}, "stop")
        if usage:
            writer.write(usage_chunk(len(kinds)))
        writer.write(STREAM_END)
        await writer.drain()
        done = time.monotonic_ns()
        if first_ns is not None:
            self.stats.ttft_ns.append(first_ns - received)
            if len(kinds) > 1:
                self.stats.tpot_ns.append((done - first_ns) / (len(kinds) - 1))
        return True


def run_server(
    config: SimConfig, host: str = "127.0.0.1", port: int = 8001, processes: int = 1
) -> None:
    """Serve until interrupted, on uvloop when it is installed; with *processes* > 1,
    that many processes share the port (each its own loop, SO_REUSEPORT), so the
    simulator is not what limits a client that drives thousands of streams. The fault
    and capacity models then hold per process."""
    if processes > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        others = [
            context.Process(target=_serve_one, args=(config, host, port, True), daemon=True)
            for _ in range(processes - 1)
        ]
        for process in others:
            process.start()
        try:
            _serve_one(config, host, port, True)
        finally:
            for process in others:
                process.terminate()
        return
    _serve_one(config, host, port, False)


def _serve_one(config: SimConfig, host: str, port: int, shared: bool) -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        asyncio.run(serve(config, host, port, shared))
        return
    uvloop.run(serve(config, host, port, shared))


async def serve(
    config: SimConfig, host: str = "127.0.0.1", port: int = 8001, shared: bool = False
) -> None:
    server = SimServer(config)
    bound = await server.start(host, port, shared=shared)
    print(f"serve-sim listening on http://{host}:{bound}", flush=True)
    await server.serve_forever()
