"""Streaming OpenAI-compatible client: SSE parsing and response accumulation.

Timestamps are ``time.monotonic_ns()`` taken in the coroutine that reads the stream, in
order: issued, then first chunk, then complete. So a response's TPOT can never be
negative (the official client stamps completion on another path and sometimes is).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from harness.metrics.events import Output

_loads = orjson.loads


@dataclass
class Response:
    issued_ns: int
    recv_first_ns: int | None = None
    complete_ns: int | None = None
    output: Output | None = None
    finish_reason: str | None = None
    error: tuple[str, str] | None = None  # (error_type, message)
    # The server's own count (usage.completion_tokens), when it sent one: a non-streamed
    # answer always may, a stream when asked (stream_options.include_usage).
    usage_tokens: int | None = None


@dataclass
class _Accumulator:
    """Official accumulation rules (harness-metrics digest §3)."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    first_seen: bool = False
    finish_reason: str | None = None
    usage_tokens: int | None = None

    def feed(self, delta: dict[str, Any]) -> bool:
        """Take one delta; True when it is the response's first real chunk."""
        text = delta.get("content")
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        calls = delta.get("tool_calls")
        first = False
        if text:
            self.content.append(text)
            first = not self.first_seen
        elif reasoning:
            self.reasoning.append(reasoning)
            first = not self.first_seen
        elif calls:
            first = not self.first_seen
        if calls:
            for call in calls:
                index = int(call.get("index", 0))
                slot = self.tool_calls.setdefault(
                    index,
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""
        if first:
            self.first_seen = True
        return first

    def take_message(self, message: dict[str, Any]) -> None:
        """A whole non-streamed response (chat ``message`` or completions ``text``)."""
        choice = (message.get("choices") or [{}])[0]
        msg = choice.get("message") or {"content": choice.get("text", "")}
        self.content.append(msg.get("content") or "")
        if reasoning := msg.get("reasoning_content") or msg.get("reasoning"):
            self.reasoning.append(reasoning)
        self.finish_reason = choice.get("finish_reason")
        self.usage_tokens = usage_tokens(message)

    def output(self, streaming: bool) -> Output:
        calls = [self.tool_calls[i] for i in sorted(self.tool_calls)] or None
        if not streaming:
            return Output("".join(self.content), "".join(self.reasoning) or None, calls)
        if self.reasoning:
            return Output(
                "".join(self.content),
                [self.reasoning[0], "".join(self.reasoning[1:])],
                calls,
            )
        if not self.content:
            return Output([], None, calls)
        return Output([self.content[0], "".join(self.content[1:])], None, calls)


def http_error(status: int, size: int) -> tuple[str, str]:
    """An error answer as recorded: its status and length, never its body (what the
    server wrote is the server's, and a record must not carry it on)."""
    return ("HTTPError", f"HTTP {status} ({size} bytes)")


def usage_tokens(message: dict[str, Any]) -> int | None:
    usage = message.get("usage")
    count = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _deltas(frame: bytes) -> list[dict[str, Any]]:
    """The choice deltas in one SSE event (``data: {...}`` lines; [DONE] and comments
    skipped); a chunk with the server's usage gives a ``{"_usage": n}`` delta."""
    out: list[dict[str, Any]] = []
    for line in frame.splitlines():
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if not payload.startswith(b"{"):
            continue
        message = _loads(payload)
        if (count := usage_tokens(message)) is not None:
            out.append({"_usage": count})
        for choice in message.get("choices") or ():
            delta = choice.get("delta")
            if delta is None and "text" in choice:  # /v1/completions
                delta = {"content": choice.get("text")}
            delta = dict(delta or {})
            if choice.get("finish_reason"):
                delta["_finish"] = choice["finish_reason"]
            out.append(delta)
    return out


async def send(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    *,
    streaming: bool,
    on_first: Any = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """Send one request; ``on_first(ns)`` is called when the first real chunk arrives."""
    response = Response(issued_ns=time.monotonic_ns())
    acc = _Accumulator()
    try:
        async with client.stream("POST", url, json=body, headers=headers) as http:
            if http.status_code >= 400:
                response.error = http_error(http.status_code, len(await http.aread()))
                response.complete_ns = time.monotonic_ns()
                return response
            if not streaming:
                acc.take_message(_loads(await http.aread()))
            else:

                def handle(frame: bytes) -> None:
                    for delta in _deltas(frame):
                        finish = delta.pop("_finish", None)
                        if finish:
                            acc.finish_reason = finish
                        if "_usage" in delta:
                            acc.usage_tokens = delta.pop("_usage")
                        if acc.feed(delta):
                            response.recv_first_ns = time.monotonic_ns()
                            if on_first is not None:
                                on_first(response.recv_first_ns)

                buffer = b""
                async for chunk in http.aiter_bytes():
                    buffer = (buffer + chunk).replace(b"\r\n", b"\n")
                    *frames, buffer = buffer.split(b"\n\n")
                    for frame in frames:
                        handle(frame)
                handle(buffer)
        response.complete_ns = time.monotonic_ns()
        response.output = acc.output(streaming)
        response.finish_reason = acc.finish_reason
        response.usage_tokens = acc.usage_tokens
        if streaming and not acc.first_seen:
            response.error = ("EmptyResponse", "the stream ended without a content chunk")
    except (httpx.HTTPError, ValueError) as exc:
        response.complete_ns = time.monotonic_ns()
        response.error = (type(exc).__name__, str(exc) or type(exc).__name__)
    return response
