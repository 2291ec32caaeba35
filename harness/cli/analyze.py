"""``endpoints-harness analyze``: a run folder's time series and steady state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.analysis.run import analyse_run
from harness.cli.folders import analysis_inputs, counted_folder, print_steady_state
from harness.cli.kit import Failed, emit_json, json_option
from harness.cli.options import steady_state_options, tokenizer_options


@click.command("analyze", short_help="a run's time series and steady state")
@click.argument("run_dir", type=click.Path(path_type=Path))
@tokenizer_options("default: the run's own", "default: the run's own, else the tokenizer's")
@steady_state_options
@json_option
def analyze(
    run_dir: Path,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    as_json: bool,
    **steady: Any,
) -> None:
    """A run folder's time series and steady state (written to analysis/*.json)."""
    folder = counted_folder(run_dir, tokenizer, chat_template, tokenizer_registry)
    inputs = analysis_inputs(folder, **steady)
    analysis = analyse_run(inputs.run_dir, inputs.counter, inputs.options, inputs.method)
    if analysis.timeseries is None:
        raise Failed("no tracked request in events.jsonl: nothing to analyse")
    if as_json:
        emit_json({"analysis": str(run_dir / "analysis"), "steady_state": analysis.steady_state})
        return
    print_steady_state(analysis.steady_state)
    click.echo(run_dir / "analysis")
