"""Agentic multi-turn datasets: validation, prompt reconstruction and cache salting
(harness-metrics digest §2.4).

A dataset is flat JSONL, one row per message: ``conversation_id``, ``turn``, ``role`` and
``content``/``system``/``tools``/``tool_calls``/``tool_results``/``reasoning_content``/
``delay_seconds``/``max_new_tokens``. Every user or tool row is a *client turn*: one
request whose messages are the conversation so far **as recorded in the dataset** (never
the live model's replies), so every run sends the same prompts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.load.dataset import DatasetError, read_jsonl

_NEXT_ROLES = {
    None: {"user"},
    "user": {"assistant"},
    "assistant": {"tool", "user"},
    "tool": {"assistant", "user"},
}
_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_results", "reasoning_content")


@dataclass(frozen=True)
class ClientTurn:
    turn: int
    messages: list[dict[str, Any]]  # the whole prompt for this request, system first
    delay_s: float  # recorded time before this turn (tool execution), not serving time
    max_tokens: int | None


@dataclass
class Conversation:
    id: str
    turns: list[ClientTurn] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    has_system: bool = False


def _message(row: dict[str, Any]) -> list[dict[str, Any]]:
    if row.get("tool_results"):
        return [
            {"role": "tool", "tool_call_id": r["tool_call_id"], "content": r["content"]}
            for r in row["tool_results"]
        ]
    message = {k: row[k] for k in _MESSAGE_KEYS if row.get(k) is not None}
    if row["role"] == "assistant" and row.get("tool_calls") and "content" not in message:
        message["content"] = None
    message.pop("tool_results", None)
    return [message]


def load_agentic(path: Path) -> list[Conversation]:
    """Read, validate and rebuild every conversation; errors name the line."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in read_jsonl(path):
        if row.get("_type") == "dataset_metadata":
            continue
        for key in ("conversation_id", "turn", "role"):
            if key not in row:
                raise DatasetError(f"{path}:{number}: missing {key!r}")
        rows.append((number, row))
    if not rows:
        raise DatasetError(f"{path}: the dataset has no conversations")

    conversations: list[Conversation] = []
    seen: set[str] = set()
    current: Conversation | None = None
    history: list[dict[str, Any]] = []
    previous_role: str | None = None
    previous_row: dict[str, Any] | None = None
    expected_turn = 1
    for number, row in rows:
        cid = str(row["conversation_id"])
        if current is None or cid != current.id:
            if cid in seen:
                raise DatasetError(
                    f"{path}:{number}: rows of conversation {cid!r} are not contiguous"
                )
            seen.add(cid)
            current = Conversation(cid)
            conversations.append(current)
            history, previous_role, previous_row, expected_turn = [], None, None, 1
        if row["turn"] != expected_turn:
            raise DatasetError(
                f"{path}:{number}: conversation {cid!r} expected turn {expected_turn}, "
                f"got {row['turn']!r}"
            )
        role = row["role"]
        if role not in _NEXT_ROLES.get(previous_role, set()):
            raise DatasetError(
                f"{path}:{number}: a {role!r} row cannot follow "
                f"{previous_role or 'the start'} in conversation {cid!r}"
            )
        if role == "tool":
            if not (previous_row and previous_row.get("tool_calls")):
                raise DatasetError(
                    f"{path}:{number}: a tool row must follow an assistant tool call"
                )
            for result in row.get("tool_results") or []:
                if "tool_call_id" not in result or "content" not in result:
                    raise DatasetError(
                        f"{path}:{number}: tool_results entries need tool_call_id and content"
                    )
        if not history and row.get("system"):
            history.append({"role": "system", "content": row["system"]})
            current.has_system = True
        if current.tools is None and row.get("tools"):
            current.tools = row["tools"]
        messages = _message(row)
        if role in ("user", "tool"):
            delay = float(row.get("delay_seconds") or 0)
            max_tokens = row.get("max_completion_tokens") or row.get("max_new_tokens")
            current.turns.append(
                ClientTurn(
                    turn=row["turn"],
                    messages=[*history, *messages],
                    delay_s=delay if delay > 0 else 0.0,
                    max_tokens=int(max_tokens) if max_tokens else None,
                )
            )
        history = [*history, *messages]
        previous_role, previous_row = role, row
        expected_turn += 1
    return conversations


def salt_tag(value: str) -> str:
    return hashlib.blake2b(value.encode("utf-8"), digest_size=2).hexdigest()


def salted(messages: list[dict[str, Any]], repeat: int, source_id: str) -> list[dict[str, Any]]:
    """Wrap the system prompt in per-pass and per-conversation salt, as the official client
    does, so prefix caches never carry over between passes."""
    if not messages or messages[0].get("role") != "system":
        raise ValueError(f"conversation {source_id!r} has no system prompt to salt")
    system = dict(messages[0])
    system["content"] = (
        f"[salt: {salt_tag(str(repeat))}]\n\n{system['content']}\n\n[salt: {salt_tag(source_id)}]"
    )
    return [system, *messages[1:]]
