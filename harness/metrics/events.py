"""``events.jsonl``: the official event schema (harness-metrics digest §6.3).

One JSON object per line: ``event_type``, ``timestamp_ns`` (monotonic ns of the load
generator), ``sample_uuid``, ``conversation_id``, ``turn``, ``data`` and, on completes,
``finish_reason``. Payloads are positional lists, as the official client writes them.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, TypedDict, TypeVar, overload

import orjson  # a pinned dependency: much faster than json on the hot path

_dumps = orjson.dumps
_loads = orjson.loads


class Where(TypedDict):
    """Which conversation and turn an event belongs to (agentic runs)."""

    conversation_id: str
    turn: int | None


SESSION_STARTED = "session.started"
SESSION_ENDED = "session.ended"
START_TRACKING = "session.start_performance_tracking"
STOP_TRACKING = "session.stop_performance_tracking"
ISSUED = "sample.issued"
RECV_FIRST = "sample.recv_first"
RECV_NON_FIRST = "sample.recv_non_first"
COMPLETE = "sample.complete"
ERROR = "error.generic"


@dataclass(frozen=True)
class Prompt:
    text: str | None = None
    token_ids: list[int] | None = None
    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None

    def to_data(self) -> list[Any]:
        return [
            "PromptData",
            self.text,
            self.token_ids,
            self.messages,
            self.tools,
            None,
            None,
            None,
        ]

    @classmethod
    def from_data(cls, data: Any) -> Prompt:
        if not isinstance(data, list) or not data or data[0] != "PromptData":
            return cls()
        padded = list(data) + [None] * 8
        return cls(text=padded[1], token_ids=padded[2], messages=padded[3], tools=padded[4])


_T = TypeVar("_T")


class _once(Generic[_T]):  # noqa: N801 - used as a decorator, like cached_property
    """``functools.cached_property`` without the lock Python 3.11 takes on every first
    read: a response's joined text is read per response on the re-count's hot path."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self.compute = compute
        self.name = compute.__name__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _once[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...
    def __get__(self, instance: object, owner: type | None = None) -> _T | _once[_T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value  # later reads find it in the instance, past this descriptor


@dataclass(frozen=True)
class Output:
    """``TextModelOutput``: ``output`` is ``[first_chunk, rest]`` (or a string when there
    is reasoning or no streaming); ``reasoning`` is ``[first_chunk, rest]`` or None."""

    output: str | list[str] | None
    reasoning: str | list[str] | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def to_data(self) -> list[Any]:
        return ["TextModelOutput", self.output, self.reasoning, self.tool_calls]

    @classmethod
    def from_data(cls, data: Any) -> Output | None:
        if not isinstance(data, list) or not data or data[0] != "TextModelOutput":
            return None
        padded = list(data) + [None] * 4
        return cls(output=padded[1], reasoning=padded[2], tool_calls=padded[3])

    @staticmethod
    def _join(value: str | list[str] | None) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        try:
            return "".join(value)  # chunks are strings in every log we write or have seen
        except TypeError:
            return "".join(str(v) for v in value)

    # Read several times per response (the summary, the re-count's scans): joined once.
    @_once
    def content(self) -> str:
        return self._join(self.output)

    @_once
    def reasoning_text(self) -> str:
        return self._join(self.reasoning)

    def after_first_chunk(self) -> tuple[str, str]:
        """(content, reasoning) that arrived after the first chunk (digest §4, TPOT)."""
        if self.reasoning:
            rest = self.reasoning[1:] if isinstance(self.reasoning, list) else []
            return self.content, self._join(rest)
        if isinstance(self.output, list):
            return self._join(self.output[1:]), ""
        return "", ""  # a non-streamed answer has no "after the first chunk"


def event_line(kind: str, timestamp_ns: int) -> bytes:
    """One session event (no sample) as a line of ``events.jsonl``."""
    record = {
        "event_type": kind,
        "timestamp_ns": timestamp_ns,
        "sample_uuid": "",
        "conversation_id": "",
        "turn": None,
        "data": None,
    }
    return _dumps(record) + b"\n"


def peak_in_flight(path: Path) -> int:
    """The most requests in flight at once, read back from an ``events.jsonl``."""
    in_flight = peak = 0
    for _line, event in read_events(path, strict=False):
        kind = event.get("event_type")
        if kind == ISSUED:
            in_flight += 1
            peak = max(peak, in_flight)
        elif kind == COMPLETE:
            in_flight -= 1
    return peak


class EventWriter:
    """Appends events to a JSONL file; buffered, one line per event."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] = path.open("wb", buffering=1024 * 1024)

    def write(
        self,
        event_type: str,
        timestamp_ns: int,
        sample_uuid: str = "",
        data: Any = None,
        *,
        conversation_id: str = "",
        turn: int | None = None,
        finish_reason: str | None = None,
        usage_tokens: int | None = None,
    ) -> None:
        record: dict[str, Any] = {
            "event_type": event_type,
            "timestamp_ns": timestamp_ns,
            "sample_uuid": sample_uuid,
            "conversation_id": conversation_id,
            "turn": turn,
            "data": data,
        }
        if finish_reason is not None:
            record["finish_reason"] = finish_reason
        if usage_tokens is not None:
            # The server's own count: our extension, which an official reader ignores.
            record["usage"] = {"completion_tokens": usage_tokens}
        self._fh.write(_dumps(record) + b"\n")

    def close(self) -> None:
        self._fh.close()


class MalformedEvent(Exception):
    def __init__(self, line_number: int, reason: str) -> None:
        super().__init__(f"events.jsonl line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason


def read_events(
    path: Path, *, strict: bool = True, progress: Callable[[int, int], None] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, event)`` streaming the file; never loads it whole.

    With ``strict=False`` a malformed line is yielded as ``(n, {"_error": reason})``.
    ``progress(lines, bytes)`` is called every 10,000 lines. A ``.gz`` file is read
    decompressed.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    read = 0
    with opener(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            read += len(raw)
            if progress is not None and number % 10_000 == 0:
                progress(number, read)
            line = raw.strip()
            if not line:
                continue
            try:
                event = _loads(line)
                if not isinstance(event, dict) or "event_type" not in event:
                    raise ValueError("not an event object")
                if not isinstance(event.get("timestamp_ns"), int):
                    raise ValueError("timestamp_ns is not an integer")
            except ValueError as exc:
                if strict:
                    raise MalformedEvent(number, str(exc)) from exc
                yield number, {"_error": str(exc)}
                continue
            yield number, event
