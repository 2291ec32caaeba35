"""One point's load in one process: the run's settings, the issue order, and the event loop
that sends the requests and records their events.

Load patterns: ``concurrency`` (closed loop: a slot is refilled when its response ends),
``offline`` (the whole dataset at once), ``poisson`` (open loop at a target rate, with
arrivals scheduled from the start so lateness does not drift). Issue order follows the
official client: ``random.Random(seed)`` shuffles the dataset once per pass.

At a duration cap no new request is issued; those in flight are drained (bounded by
``drain_timeout_s``) and any still running then are cancelled, recorded as dropped, and
excluded from every metric (the official client drops them silently).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from harness.load.agentic import ClientTurn, Conversation, salted
from harness.load.client import Response, send
from harness.load.dataset import Sample
from harness.load.fastclient import FastClient
from harness.metrics import events as ev
from harness.metrics.events import EventWriter, Prompt

LOAD_PATTERNS = ("concurrency", "offline", "poisson", "agentic_inference")
AGENTIC = "agentic_inference"


@dataclass
class RunConfig:
    endpoint: str
    model: str
    load_pattern: str = "concurrency"
    concurrency: int = 1
    target_qps: float | None = None
    duration_s: float | None = None
    n_samples: int | None = None
    warmup_requests: int = 0
    streaming: bool = True
    api: str = "chat"  # "chat" (/v1/chat/completions) or "completions"
    max_tokens: int = 1024
    seed: int = 42  # the sample order (the official dataloader seed)
    # The Poisson arrivals (the official scheduler seed); None: the same as ``seed``.
    scheduler_seed: int | None = None
    drain_timeout_s: float = 240.0
    request_timeout_s: float = 600.0
    # Stop issuing once this many requests in a row have failed (an unreachable or broken
    # endpoint); None keeps going whatever happens.
    abort_after_failures: int | None = 50
    # "fast": the lean asyncio client (plain http); "httpx": httpx (https too).
    client: str = "auto"
    # Agentic replay (digest §2.4): trajectories to run (default one pass), the cache salt
    # (mandatory for official runs), the recorded tool delays between turns, the header
    # that routes a conversation to one session.
    trajectories: int | None = None
    enable_salt: bool = True
    inject_tool_delay: bool = True
    routing_header: str = "X-Session-ID"
    api_key: str | None = field(default=None, repr=False)
    extra_body: dict[str, Any] = field(default_factory=dict)
    # Processes that share the load, each with its own event loop (harness/load/workers.py).
    workers: int = 1
    # Ask a streaming server for its own token count (stream_options.include_usage), kept
    # beside the re-count; the official client never asks, so it is off by default.
    request_usage: bool = False

    def validate(self) -> None:
        if self.load_pattern not in LOAD_PATTERNS:
            raise ValueError(f"load pattern must be one of {', '.join(LOAD_PATTERNS)}")
        if self.load_pattern == "concurrency" and self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.load_pattern == "poisson" and not (self.target_qps and self.target_qps > 0):
            raise ValueError("a poisson run needs --target-qps > 0")
        if self.client not in ("auto", "fast", "httpx"):
            raise ValueError("client must be auto, fast or httpx")
        if self.client == "fast" and not self.endpoint.startswith("http://"):
            raise ValueError("the fast client speaks plain http only; use the httpx client")
        if self.workers < 1:
            raise ValueError("--workers must be at least 1")
        if self.workers > 1 and self.load_pattern == AGENTIC:
            raise ValueError("--workers applies to concurrency, poisson and offline runs")
        if self.load_pattern == AGENTIC:
            return  # a run of trajectories: neither a duration nor a sample count
        if self.duration_s is None and self.n_samples is None and self.load_pattern != "offline":
            raise ValueError("give --duration or --n-samples")

    @property
    def arrival_seed(self) -> int:
        """The Poisson arrivals' seed: ``scheduler_seed``, else ``seed``."""
        return self.seed if self.scheduler_seed is None else self.scheduler_seed

    def redacted(self) -> dict[str, Any]:
        data = asdict(self)
        if data.get("api_key"):
            data["api_key"] = "<redacted>"
        return data

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self.api == "chat" else "/v1/completions"

    @property
    def url(self) -> str:
        return self.endpoint.rstrip("/") + self.path


@dataclass(frozen=True)
class Progress:
    elapsed_s: float
    issued: int
    finished: int
    in_flight: int


def sample_order(n: int, seed: int) -> Iterator[int]:
    """Endless issue order: each pass is ``range(n)`` shuffled by one seeded RNG."""
    rng = random.Random(seed)
    while True:
        order = list(range(n))
        rng.shuffle(order)
        yield from order


class LoadSession:
    def __init__(self, config: RunConfig, samples: list[Sample], writer: EventWriter) -> None:
        self.config = config
        self.samples = samples
        self.writer = writer
        self.index_map: dict[str, int] = {}
        self.in_flight: set[asyncio.Task[None]] = set()
        self.issued = 0
        self.finished = 0
        self.dropped = 0
        self.failures_in_a_row = 0
        self.aborted: str | None = None
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        limit = max(config.concurrency, 1) if config.load_pattern == "concurrency" else 1024
        use_fast = config.client == "fast" or (
            config.client == "auto" and config.endpoint.startswith("http://")
        )
        self.fast: FastClient | None = None
        self.client: httpx.AsyncClient | None = None
        if use_fast:
            self.fast = FastClient(
                config.endpoint, headers=headers, timeout_s=config.request_timeout_s
            )
        else:
            self.client = httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(config.request_timeout_s, connect=30.0),
                limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
            )

    def body(self, sample: Sample) -> dict[str, Any]:
        c = self.config
        body: dict[str, Any] = {
            "model": c.model,
            "stream": c.streaming,
            "max_tokens": sample.max_tokens or c.max_tokens,
        }
        if c.api == "chat":
            body["messages"] = sample.messages or [{"role": "user", "content": sample.prompt or ""}]
            body["max_completion_tokens"] = body["max_tokens"]
        else:
            body["prompt"] = sample.prompt or json.dumps(sample.messages)
        if c.request_usage and c.streaming:
            body["stream_options"] = {"include_usage": True}
        body.update(c.extra_body)
        return body

    async def issue(self, index: int) -> None:
        sample = self.samples[index]
        await self.request(
            Prompt(text=sample.prompt, messages=sample.messages), self.body(sample), index=index
        )

    async def request(
        self,
        prompt: Prompt,
        body: dict[str, Any],
        *,
        index: int | None = None,
        conversation_id: str = "",
        turn: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """Send one request, writing its events; returns the response."""
        sample_uuid = uuid.uuid4().hex
        if index is not None:
            self.index_map[sample_uuid] = index
        self.issued += 1
        where: ev.Where = {"conversation_id": conversation_id, "turn": turn}
        self.writer.write(ev.ISSUED, time.monotonic_ns(), sample_uuid, prompt.to_data(), **where)

        def first(ns: int) -> None:
            self.writer.write(ev.RECV_FIRST, ns, sample_uuid, **where)

        response: Response
        if self.fast is not None:
            response = await self.fast.send(
                self.config.path,
                body,
                streaming=self.config.streaming,
                on_first=first,
                headers=headers,
            )
        else:
            assert self.client is not None
            response = await send(
                self.client,
                self.config.url,
                body,
                streaming=self.config.streaming,
                on_first=first,
                headers=headers,
            )
        self.finished += 1
        done = response.complete_ns or time.monotonic_ns()
        if response.error is not None:
            self.failures_in_a_row += 1
            limit = self.config.abort_after_failures
            if limit is not None and self.failures_in_a_row >= limit and self.aborted is None:
                self.aborted = (
                    f"stopped issuing after {limit} failed requests in a row "
                    f"(last: {response.error[1][:200]})"
                )
            self.writer.write(ev.ERROR, done, sample_uuid, ["ErrorData", *response.error], **where)
            self.writer.write(ev.COMPLETE, done, sample_uuid, None, **where)
            return response
        assert response.output is not None
        self.failures_in_a_row = 0
        self.writer.write(
            ev.COMPLETE,
            done,
            sample_uuid,
            response.output.to_data(),
            finish_reason=response.finish_reason,
            usage_tokens=response.usage_tokens,
            **where,
        )
        return response

    def record_skipped(self, conversation_id: str, turn: int, reason: str) -> None:
        """A turn never sent because its conversation was aborted: a failure on record."""
        sample_uuid = uuid.uuid4().hex
        now = time.monotonic_ns()
        where: ev.Where = {"conversation_id": conversation_id, "turn": turn}
        self.issued += 1
        self.writer.write(ev.ISSUED, now, sample_uuid, Prompt().to_data(), **where)
        self.writer.write(
            ev.ERROR, now, sample_uuid, ["ErrorData", "TurnAbortedByPriorFailure", reason], **where
        )
        self.writer.write(ev.COMPLETE, now, sample_uuid, None, **where)

    async def close(self, ticker: asyncio.Task[None] | None) -> None:
        if ticker is not None:
            ticker.cancel()
        if self.client is not None:
            await self.client.aclose()
        if self.fast is not None:
            await self.fast.aclose()

    def spawn(self, index: int) -> asyncio.Task[None]:
        task = asyncio.create_task(self.issue(index))
        self.in_flight.add(task)
        task.add_done_callback(self.in_flight.discard)
        return task

    async def drain(self) -> None:
        if not self.in_flight:
            return
        _, pending = await asyncio.wait(set(self.in_flight), timeout=self.config.drain_timeout_s)
        for task in pending:
            task.cancel()
        self.dropped += len(pending)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def run_phase(
        self, count: int | None, deadline: float | None, order: Iterator[int]
    ) -> None:
        c = self.config

        def more(issued_here: int) -> bool:
            if self.aborted is not None:
                return False
            if count is not None and issued_here >= count:
                return False
            return deadline is None or time.monotonic() < deadline

        if c.load_pattern == "concurrency":
            issued_here = 0
            slots = asyncio.Semaphore(c.concurrency)
            while more(issued_here):
                try:
                    # Waiting for a free slot must not outlast the duration cap.
                    timeout = None if deadline is None else max(deadline - time.monotonic(), 0)
                    await asyncio.wait_for(slots.acquire(), timeout)
                except TimeoutError:
                    break
                if not more(issued_here):
                    slots.release()
                    break
                task = self.spawn(next(order))
                task.add_done_callback(lambda _t: slots.release())
                issued_here += 1
        elif c.load_pattern == "offline":
            total = count if count is not None else len(self.samples)
            for _ in range(total):
                self.spawn(next(order))
                await asyncio.sleep(0)  # let responses be read between issues
        else:  # poisson
            rng = random.Random(c.arrival_seed)
            start = time.monotonic()
            at = start
            issued_here = 0
            while more(issued_here):
                at += rng.expovariate(c.target_qps or 1.0)
                delay = at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                if not more(issued_here):
                    break
                self.spawn(next(order))
                issued_here += 1
        await self.drain()


async def _tick(
    session: LoadSession, on_progress: Callable[[Progress], None], every_s: float
) -> None:
    started = time.monotonic()
    while True:
        await asyncio.sleep(every_s)
        now = Progress(
            time.monotonic() - started, session.issued, session.finished, len(session.in_flight)
        )
        # In a thread: a callback that waits (the portal's worker writes the job's progress
        # to its database) must never hold this loop, whose timestamps are the measurement.
        await asyncio.to_thread(on_progress, now)


async def run_samples(
    config: RunConfig,
    samples: list[Sample],
    writer: EventWriter,
    on_progress: Callable[[Progress], None] | None = None,
) -> LoadSession:
    session = LoadSession(config, samples, writer)
    ticker = (
        asyncio.create_task(_tick(session, on_progress, 0.5)) if on_progress is not None else None
    )
    try:
        writer.write(ev.SESSION_STARTED, time.monotonic_ns())
        if config.warmup_requests:
            await session.run_phase(
                config.warmup_requests, None, sample_order(len(samples), config.seed + 1)
            )
        writer.write(ev.START_TRACKING, time.monotonic_ns())
        deadline = time.monotonic() + config.duration_s if config.duration_s else None
        await session.run_phase(config.n_samples, deadline, sample_order(len(samples), config.seed))
        writer.write(ev.STOP_TRACKING, time.monotonic_ns())
        writer.write(ev.SESSION_ENDED, time.monotonic_ns())
    finally:
        await session.close(ticker)
    return session


def _turn_body(
    config: RunConfig,
    conversation: Conversation,
    turn: ClientTurn,
    messages: list[dict[str, Any]],
) -> dict[str, Any]:
    """The chat completion request of one turn, with the conversation's tools."""
    body: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        "stream": config.streaming,
        "max_tokens": turn.max_tokens or config.max_tokens,
        "max_completion_tokens": turn.max_tokens or config.max_tokens,
        **config.extra_body,
    }
    if conversation.tools:
        body["tools"] = conversation.tools
    return body


def _saltable(conversations: list[Conversation]) -> None:
    """Cache salting goes into the system prompt: every conversation needs one."""
    missing = [c.id for c in conversations if not c.has_system]
    if missing:
        raise ValueError(
            f"cache salting needs a system prompt; conversation(s) without one: "
            f"{', '.join(missing[:5])}"
        )


async def run_conversations(
    config: RunConfig,
    conversations: list[Conversation],
    writer: EventWriter,
    on_progress: Callable[[Progress], None] | None = None,
) -> LoadSession:
    """Closed loop over conversations: at most one turn in flight per conversation."""
    session = LoadSession(config, [], writer)
    ticker = (
        asyncio.create_task(_tick(session, on_progress, 0.5)) if on_progress is not None else None
    )
    budget = config.trajectories or len(conversations)
    slots = asyncio.Semaphore(max(config.concurrency, 1))
    state = {"assigned_all": False, "stopped": False}
    drivers: set[asyncio.Task[None]] = set()

    async def drive(k: int) -> None:
        conversation = conversations[k % len(conversations)]
        repeat = k // len(conversations) + 1
        logical = conversation.id if repeat == 1 else f"{conversation.id}__repeat_{repeat}"
        try:
            for i, turn in enumerate(conversation.turns):
                if i > 0 and config.inject_tool_delay and turn.delay_s > 0:
                    await asyncio.sleep(turn.delay_s)  # tool time: not serving time
                messages = (
                    salted(turn.messages, repeat, conversation.id)
                    if config.enable_salt
                    else turn.messages
                )
                body = _turn_body(config, conversation, turn, messages)
                response = await session.request(
                    Prompt(messages=messages, tools=conversation.tools),
                    body,
                    conversation_id=logical,
                    turn=turn.turn,
                    headers={config.routing_header: logical},
                )
                if response.error is not None:
                    reason = f"turn {turn.turn} failed: {response.error[1][:200]}"
                    for rest in conversation.turns[i + 1 :]:
                        session.record_skipped(logical, rest.turn, reason)
                    break
        finally:
            slots.release()
            # The window closes when a conversation ends and none is left to start.
            if state["assigned_all"] and not state["stopped"]:
                state["stopped"] = True
                writer.write(ev.STOP_TRACKING, time.monotonic_ns())

    try:
        writer.write(ev.SESSION_STARTED, time.monotonic_ns())
        writer.write(ev.START_TRACKING, time.monotonic_ns())
        if config.enable_salt:
            _saltable(conversations)
        started = time.monotonic()
        for k in range(budget):
            await slots.acquire()
            # A duration caps when conversations start; those running finish their turns.
            late = config.duration_s is not None and time.monotonic() - started >= config.duration_s
            if session.aborted is not None or late:
                slots.release()
                break
            task = asyncio.create_task(drive(k))
            drivers.add(task)
            task.add_done_callback(drivers.discard)
        state["assigned_all"] = True
        if drivers:
            await asyncio.gather(*drivers, return_exceptions=True)
        if not state["stopped"]:
            writer.write(ev.STOP_TRACKING, time.monotonic_ns())
        writer.write(ev.SESSION_ENDED, time.monotonic_ns())
    finally:
        await session.close(ticker)
    return session


# File descriptors beyond one per connection: the events file, the loop, stdio, imports.
SPARE_FILES = 256


def ensure_open_files(connections: int) -> None:
    """Raise this process's open-file limit to hold *connections* sockets (children inherit
    it), up to the hard limit; say what to change when even that is too low."""
    import resource

    needed = connections + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ValueError(
            f"{connections} connections need {needed} open files, but this process may open "
            f"at most {hard} (ulimit -Hn); raise the hard limit or lower the concurrency"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def run_event_loop(coroutine: Any) -> Any:
    """uvloop when it is installed (faster sockets and callbacks), else asyncio's loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)
