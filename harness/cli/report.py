"""``endpoints-harness report``: analyse a run and draw it over time (offline HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.folders import analysis_inputs, counted_folder, print_steady_state
from harness.cli.kit import Failed, Failure
from harness.cli.options import steady_state_options, tokenizer_options


@click.command("report", short_help="analyze, and draw the run over time (HTML)")
@click.argument("run_dir", type=click.Path(path_type=Path))
@tokenizer_options("default: the run's own", "default: the run's own, else the tokenizer's")
@steady_state_options
@click.option("--plotly-js", default=None, type=click.Path(path_type=Path),
              help="default: the copy shipped here")  # fmt: skip
def report(
    run_dir: Path,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    plotly_js: Path | None,
    **steady: Any,
) -> None:
    """Analyse a run, and draw it over time (analysis/report.html, works offline)."""
    from harness.analysis.report import PlotlyMissing, write_report
    from harness.analysis.report import plotly_js as plotly_script

    folder = counted_folder(run_dir, tokenizer, chat_template, tokenizer_registry)
    inputs = analysis_inputs(folder, **steady)
    try:
        script = plotly_script(plotly_js)
    except (PlotlyMissing, OSError) as exc:
        raise Failure(str(exc)) from None
    analysis = write_report(inputs.run_dir, inputs.counter, inputs.options, script, inputs.method)
    series = analysis.timeseries
    if series is None:
        raise Failed("no tracked request in events.jsonl: nothing to draw")
    print_steady_state(analysis.steady_state)
    click.echo(
        f"{run_dir / 'analysis' / 'report.html'} ({len(series['t_s'])} bins of {series['bin_s']} s)"
    )
