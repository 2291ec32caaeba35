"""Runs the tests share: a sweep spec, a sweep against the simulator (bundle, events,
tokenizer), and an agentic conversation."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from app.demo.bundles import SEED_SET_A, BundleFactory
from harness.curves.sweep import SweepSpec, run_sweep
from harness.load.dataset import load_dataset
from harness.load.engine import RunConfig
from harness.sim import SimConfig, sim_token_counter
from tests.support.sim import RunningSim


def spec_file(tmp_path: Path) -> Path:
    factory = BundleFactory()
    accuracy = {
        "accuracy_scores": [
            {
                "dataset_name": "cnn_dailymail",
                "dataset_type": "accuracy",
                "num_samples": 13368,
                "score": {
                    "rouge1": 38.9,
                    "rouge2": 15.95,
                    "rougeL": 24.55,
                    "rougeLsum": 35.8,
                    "gen_len": 8167644,
                },
            },
        ]
    }
    (tmp_path / "system_desc.json").write_text(json.dumps(factory._system_desc()))
    (tmp_path / "system_power.json").write_text(json.dumps(factory._system_power()))
    (tmp_path / "accuracy_results.json").write_text(json.dumps(accuracy))
    spec = {
        "division": "Standardized",
        "model_name": "llama3_1-8b",
        "model_precision": "bf16",
        "link_to_model": "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
        "dataset": "sim_prompts",  # not in the official minimum-count table
        "dataset_name": "sim prompts",
        "dataset_link": "https://example.org/sim",
        "seed_set": "A",
        "seeds": SEED_SET_A,
        "target_cohort": "2026-12-C0",
        "submission_id": "sweep-001",
        "system_desc": "system_desc.json",
        "system_power": "system_power.json",
        "accuracy_results": "accuracy_results.json",
    }
    path = tmp_path / "submission.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def make_sweep(base: Path) -> tuple[Path, list[tuple[str, Path]], Path]:
    """A sweep against the simulator: the bundle, each point's events, the tokenizer."""
    tokenizer_dir = base / "tokenizer"
    tokenizer_dir.mkdir(parents=True)
    sim_token_counter().tokenizer.save(str(tokenizer_dir / "tokenizer.json"))
    dataset = base / "prompts.jsonl"
    dataset.write_text(
        "".join(json.dumps({"prompt": f"lorem ipsum {i}"}) + "\n" for i in range(70))
    )
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=0.3, output_tokens=12, max_batch=48)) as sim:
        result = run_sweep(
            base=RunConfig(endpoint=sim.url, model="sim"),
            spec=SweepSpec.load(spec_file(base), c_max=64),
            samples=load_dataset(dataset),
            counter=sim_token_counter(),
            c_max=64,
            output=base / "out",
            duration_s=lambda _p: 0.3,
            progress=lambda _m: None,
        )
    assert result.errors == []
    system = result.submission_dir / "results"
    [system_dir] = [d for d in system.iterdir() if d.is_dir()]
    events = [
        (f"{system_dir.name}/llama3_1-8b/r{p.concurrency}", r.run_dir / "events.jsonl")
        for p, r in result.runs
    ]
    return result.archive, events, tokenizer_dir


CALL = [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]


def conversation(cid: str, delay: float = 0.0) -> list[dict]:  # type: ignore[type-arg]
    return [
        {
            "conversation_id": cid,
            "turn": 1,
            "role": "user",
            "content": "find x",
            "system": "You are helpful.",
            "tools": [{"type": "function", "function": {"name": "lookup"}}],
        },
        {"conversation_id": cid, "turn": 2, "role": "assistant", "tool_calls": CALL},
        {
            "conversation_id": cid,
            "turn": 3,
            "role": "tool",
            "delay_seconds": delay,
            "tool_results": [{"tool_call_id": "c1", "content": "x is 4"}],
        },
        {"conversation_id": cid, "turn": 4, "role": "assistant", "content": "x is 4."},
        {
            "conversation_id": cid,
            "turn": 5,
            "role": "user",
            "content": "thanks",
            "max_new_tokens": 7,
        },
    ]
