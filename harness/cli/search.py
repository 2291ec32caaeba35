"""``endpoints-harness search``: the highest concurrency (or QPS) whose point meets an SLA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.kit import EXIT_FAILED, EXIT_OK, Failure, emit_json, json_option
from harness.cli.options import (
    counter_of,
    request_fields,
    request_options,
    samples_of,
    sla_of,
    sla_options,
    tokenizer_options,
)
from harness.curves.search import probe_table
from harness.curves.search import search as search_levels
from harness.load.engine import RunConfig


@click.command("search", short_help="the highest load whose point meets an SLA")
@click.option("--endpoint", required=True)
@click.option("--model", required=True)
@click.option("--dataset", required=True)
@click.option("--prompt-column", default=None)
@tokenizer_options("needed for --tps-per-user-min")
@click.option(
    "--load-pattern", type=click.Choice(("concurrency", "poisson")), default="concurrency"
)
@click.option("--start", type=float, default=1, help="first level probed (default 1)")
@click.option("--max-level", type=float, default=None, help="highest level probed")
@click.option(
    "--step", type=float, default=None, help="precision: users (1), or share of QPS (0.05)"
)
@click.option("--probe-duration", type=float, default=10.0, help="seconds per probe")
@click.option("--max-probes", type=int, default=16)
@click.option("--duration", type=float, default=60.0, help="seconds of the final run")
@request_options
@click.option("--no-streaming", is_flag=True)
@click.option("--seed", type=int, default=42)
@click.option("--output", required=True, type=click.Path(path_type=Path),
              help="the final run folder")  # fmt: skip
@sla_options
@json_option
def search(
    dataset: str,
    prompt_column: str | None,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    load_pattern: str,
    output: Path,
    as_json: bool,
    **s: Any,
) -> int:
    """Find the highest concurrency (or QPS) whose point meets an SLA, then run it for
    --duration; exit 1 when none does or the final run misses it."""
    sla = sla_of(s["ttft_p90_max_ms"], s["tps_per_user_min"], s["max_error_rate"])
    if sla is None:
        raise Failure("give --ttft-p90-max-ms, --tps-per-user-min or both")
    samples = samples_of(dataset, prompt_column, agentic=False)
    counter = counter_of(tokenizer, chat_template, tokenizer_registry)
    poisson = load_pattern == "poisson"
    base = RunConfig(
        **request_fields(s),
        load_pattern=load_pattern,
        target_qps=1.0 if poisson else None,
        streaming=not s["no_streaming"],
        seed=s["seed"],
    )
    if not as_json:
        click.echo(probe_table(load_pattern, []))
    try:
        result = search_levels(
            base,
            samples,
            counter,
            sla,
            output,
            start=s["start"],
            max_level=s["max_level"] or (10_000 if poisson else 4096),
            step=s["step"],
            probe_s=s["probe_duration"],
            final_s=s["duration"],
            max_probes=s["max_probes"],
            on_probe=None
            if as_json
            else (lambda p: click.echo(probe_table(load_pattern, [p]).splitlines()[1])),
        )
    except ValueError as exc:
        raise Failure(str(exc)) from None
    misses = None if result.final is None else sla.summary_misses(result.final.summary.result)
    if as_json:
        emit_json({"stopped": result.stopped, "level": result.level,
                   "run_dir": str(output) if result.final else None, "misses": misses})  # fmt: skip
        return EXIT_OK if misses == [] else EXIT_FAILED
    unit = "QPS" if poisson else "concurrency"
    click.echo(f"search: {result.stopped}")
    if misses is None:
        click.echo(f"no {unit} meets the SLA; no final run")
        return EXIT_FAILED
    click.echo(
        f"highest {unit} within the SLA: {result.level:g}; final run "
        f"({s['duration']:g} s) {'meets it' if not misses else 'misses: ' + '; '.join(misses)}"
        f"; run folder {output}"
    )
    return EXIT_OK if not misses else EXIT_FAILED
