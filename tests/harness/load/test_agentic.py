"""Agentic multi-turn replay: dataset rules, prompt reconstruction, salt, and a run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest
from submission_checker.models.file.point_summary import PointSummary

from harness.load.agentic import load_agentic, salt_tag, salted
from harness.load.dataset import DatasetError
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point
from harness.metrics.events import read_events
from harness.sim import SimConfig, sim_token_counter
from tests.support.sweeps import CALL, conversation


def _write(path: Path, rows: list[dict]) -> Path:  # type: ignore[type-arg]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_prompts_are_rebuilt_from_the_recorded_conversation(tmp_path: Path) -> None:
    rows = [{"_type": "dataset_metadata", "version": 1}, *conversation("a", delay=1.5)]
    [conv] = load_agentic(_write(tmp_path / "d.jsonl", rows))
    assert [t.turn for t in conv.turns] == [1, 3, 5]  # user and tool rows are client turns
    tool_turn = conv.turns[1]
    assert [m["role"] for m in tool_turn.messages] == ["system", "user", "assistant", "tool"]
    assert tool_turn.messages[2] == {"role": "assistant", "tool_calls": CALL, "content": None}
    assert tool_turn.messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "x is 4"}
    assert tool_turn.delay_s == 1.5
    last = conv.turns[2]
    assert last.messages[-2] == {"role": "assistant", "content": "x is 4."}  # recorded reply
    assert last.max_tokens == 7 and conv.tools and conv.has_system


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda rows: rows[:1] + rows[2:], "expected turn 2"),
        (lambda rows: [dict(rows[0], role="assistant")] + rows[1:], "cannot follow the start"),
        (
            lambda rows: rows[:2] + [dict(rows[2], tool_results=[{"content": "x"}])] + rows[3:],
            "tool_call_id",
        ),
        (
            lambda rows: rows[:1] + [dict(rows[1], tool_calls=None, content="hi")] + rows[2:],
            "must follow an assistant tool call",
        ),
        (lambda rows: rows[:2] + conversation("b")[:1] + rows[2:], "not contiguous"),
    ],
)
def test_malformed_datasets_are_refused_naming_the_line(tmp_path: Path, mutate, message) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / "d.jsonl", mutate(conversation("a")))
    with pytest.raises(DatasetError, match=message) as error:
        load_agentic(path)
    assert "d.jsonl:" in str(error.value)


def test_salt_wraps_the_system_prompt_per_pass_and_conversation() -> None:
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]
    out = salted(messages, 2, "conv-9")
    r = hashlib.blake2b(b"2", digest_size=2).hexdigest()
    c = hashlib.blake2b(b"conv-9", digest_size=2).hexdigest()
    assert out[0]["content"] == f"[salt: {r}]\n\nS\n\n[salt: {c}]"
    assert salt_tag("2") == r and len(r) == 4
    assert messages[0]["content"] == "S"  # the dataset is not changed
    with pytest.raises(ValueError, match="no system prompt"):
        salted([{"role": "user", "content": "u"}], 1, "c")


def test_agentic_run_routes_sessions_and_reports_interactivity(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(SimConfig(ttft_ms=2, tpot_ms=0.5, output_tokens=10, output_spread=0))
    dataset = _write(
        tmp_path / "d.jsonl", [*conversation("a", 0.05), *conversation("b"), *conversation("c")]
    )
    config = RunConfig(
        endpoint=endpoint.url,
        model="sim",
        load_pattern="agentic_inference",
        concurrency=2,
        trajectories=5,
    )
    result = run_point(config, load_agentic(dataset), tmp_path / "run", sim_token_counter())
    r = result.summary.result
    assert r["n_samples_issued"] >= 3 * 3 and r["n_samples_failed"] == 0
    sessions = httpx.get(f"{endpoint.url}/sim/stats").json()["sessions"]
    assert sessions == {"a": 3, "b": 3, "c": 3, "a__repeat_2": 3, "b__repeat_2": 3}
    events = [e for _, e in read_events(result.run_dir / "events.jsonl")]
    assert sum(e["event_type"] == "session.stop_performance_tracking" for e in events) == 1
    issued = [e for e in events if e["event_type"] == "sample.issued"]
    assert {(e["conversation_id"], e["turn"]) for e in issued} >= {("a", 1), ("a", 3), ("a", 5)}
    assert r["e2e_avg_interactivity"] == pytest.approx(
        r["output_tokens_per_turn_total"] / r["e2e_turn_time_seconds_total"]
    )
    # every turn, inside the window or after it: turns 1 and 3 give 10 tokens, turn 5 asks for 7
    assert r["output_sequence_lengths_full_run"]["output_sequence_lengths"]["total"] == 5 * (
        10 + 10 + 7
    )
    # The official checker derives the same interactivity from the stored totals.
    assert PointSummary.model_validate(r).e2e_avg_interactivity == pytest.approx(
        r["e2e_avg_interactivity"]
    )


def test_a_failed_turn_aborts_its_conversation(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(SimConfig(error_rate=1.0))
    dataset = _write(tmp_path / "d.jsonl", conversation("a"))
    result = run_point(
        RunConfig(endpoint=endpoint.url, model="sim", load_pattern="agentic_inference"),
        load_agentic(dataset),
        tmp_path / "run",
        sim_token_counter(),
    )
    r = result.summary.result
    assert (r["n_samples_issued"], r["n_samples_completed"], r["n_samples_failed"]) == (3, 0, 3)
    errors = [
        e["data"][1]
        for _, e in read_events(result.run_dir / "events.jsonl")
        if e["event_type"] == "error.generic"
    ]
    assert errors == ["HTTPError", "TurnAbortedByPriorFailure", "TurnAbortedByPriorFailure"]


def test_salting_needs_a_system_prompt(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [dict(r) for r in conversation("a")]
    rows[0].pop("system")
    endpoint = sim(SimConfig.instant(3))
    with pytest.raises(ValueError, match="system prompt"):
        run_point(
            RunConfig(endpoint=endpoint.url, model="sim", load_pattern="agentic_inference"),
            load_agentic(_write(tmp_path / "d.jsonl", rows)),
            tmp_path / "run",
            None,
        )
