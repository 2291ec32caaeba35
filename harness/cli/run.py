"""``endpoints-harness run``: measure one point into a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from harness.cli.kit import Failure, emit_json, json_option, note, warn
from harness.cli.options import (
    counter_of,
    request_fields,
    request_options,
    samples_of,
    tokenizer_options,
)
from harness.load.engine import LOAD_PATTERNS, RunConfig
from harness.load.loadgen import run_point


@click.command("run", short_help="measure one point into a run folder")
@click.option("--endpoint", required=True, help="base URL, e.g. http://127.0.0.1:8001")
@click.option("--model", required=True)
@click.option("--dataset", required=True, help="JSONL, CSV or Parquet")
@click.option("--prompt-column", default=None)
@tokenizer_options(
    "registry model name, tokenizer dir or file", "template file (overrides the tokenizer's)"
)
@click.option("--load-pattern", type=click.Choice(LOAD_PATTERNS), default="concurrency")
@click.option("--concurrency", type=int, default=1)
@click.option("--target-qps", type=float, default=None)
@click.option("--duration", type=float, default=None, help="seconds to issue for")
@click.option("--n-samples", type=int, default=None)
@request_options
@click.option("--no-streaming", is_flag=True)
@click.option("--seed", type=int, default=42)
@click.option(
    "--trajectories",
    type=int,
    default=None,
    help="agentic: conversations to run (default: one pass)",
)
@click.option("--no-salt", is_flag=True, help="agentic: no cache salt")
@click.option(
    "--no-tool-delay",
    is_flag=True,
    help="agentic: do not wait the recorded tool time between turns",
)
@click.option(
    "--client",
    type=click.Choice(("auto", "fast", "httpx")),
    default="auto",
    help="auto: the lean client for http://, httpx for https://",
)
@click.option(
    "--workers",
    type=int,
    default=1,
    help="processes sharing the load, each with its own event loop (not agentic)",
)
@click.option(
    "--request-usage",
    is_flag=True,
    help="ask a streaming server for its token count (stream_options.include_usage), "
    "recorded beside the re-count; the official client never asks",
)
@click.option(
    "--output", required=True, type=click.Path(path_type=Path), help="run folder to write"
)
@json_option
def run(
    dataset: str,
    prompt_column: str | None,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    output: Path,
    as_json: bool,
    **settings: Any,
) -> None:
    """Measure one point into a run folder, laid out as the official client writes it."""
    agentic = settings["load_pattern"] == "agentic_inference"
    samples = samples_of(dataset, prompt_column, agentic=agentic)
    counter = counter_of(tokenizer, chat_template, tokenizer_registry)
    config = _config(settings)
    try:
        config.validate()
    except ValueError as exc:
        raise Failure(str(exc)) from None
    result = run_point(config, samples, output, counter, progress=note)
    # Remember how to recompute: the tokenizer is part of the run's definition.
    config_path = output / "config.yaml"
    data = yaml.safe_load(config_path.read_text())
    data["model_params"]["tokenizer_name"] = tokenizer
    data["model_params"]["chat_template"] = chat_template
    config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    r = result.summary.result
    if result.aborted:
        warn(result.aborted)
    if as_json:
        emit_json({"run_dir": str(output), "aborted": result.aborted, "result": r})
        return
    tps = r["tps"] if r["tps"] is None else round(r["tps"], 1)
    click.echo(
        f"completed {r['n_samples_completed']}/{r['n_samples_issued']} "
        f"(failed {r['n_samples_failed']}, dropped {r['n_samples_dropped']}); "
        f"tps {tps}; run folder {output}"
    )


def _config(s: dict[str, Any]) -> RunConfig:
    return RunConfig(
        **request_fields(s),
        load_pattern=s["load_pattern"],
        concurrency=s["concurrency"],
        target_qps=s["target_qps"],
        duration_s=s["duration"],
        n_samples=s["n_samples"],
        streaming=not s["no_streaming"],
        seed=s["seed"],
        client=s["client"],
        trajectories=s["trajectories"],
        enable_salt=not s["no_salt"],
        inject_tool_delay=not s["no_tool_delay"],
        workers=s["workers"],
        request_usage=s["request_usage"],
    )
