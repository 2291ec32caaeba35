"""``endpoints-harness sweep``: a whole curve, assembled into a bundle the official
checker passes, and (``--register-with``) each run registered with a Submission API."""

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
from harness.curves.handover import HandoverFailed, register_runs, submission_api_address
from harness.load.engine import RunConfig


def _address(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    try:
        return None if value is None else submission_api_address(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("sweep", short_help="run a whole curve into a checked bundle")
@click.option("--endpoint", required=True)
@click.option("--model", required=True, help="model name the endpoint serves")
@click.option("--max-concurrency", type=int, required=True, help="C_max (> 32)")
@click.option("--dataset", required=True)
@click.option("--prompt-column", default=None)
@click.option(
    "--submission",
    required=True,
    type=click.Path(path_type=Path),
    help="YAML: disclosures, system_desc, system_power, accuracy_results",
)
@tokenizer_options()
@click.option("--offline", type=click.Choice(("dedicated", "elected")), default="dedicated")
@click.option(
    "--agentic",
    is_flag=True,
    help="the dataset is multi-turn; points replay conversations, no Offline",
)
@click.option(
    "--trajectories",
    type=int,
    default=None,
    help="agentic: conversations per point (default: one pass)",
)
@click.option(
    "--duration-per-point",
    type=float,
    default=None,
    help="seconds per point (default: the rules' 600 s / 1200 s)",
)
@request_options
@click.option("--output", required=True, type=click.Path(path_type=Path))
@sla_options
@click.option(
    "--register-with",
    default=None,
    callback=_address,
    metavar="URL",
    help="register each run with this Submission API (e.g. http://127.0.0.1:8000/submission-api)",
)
@click.option(
    "--token",
    envvar="PRISM_USER_API_TOKEN",
    default=None,
    help="its API key (PRISM_USER_API_TOKEN)",
)
@click.option("--test-runs", is_flag=True, help="register the runs as test runs (never published)")
@json_option
def sweep(
    dataset: str,
    prompt_column: str | None,
    submission: Path,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    agentic: bool,
    max_concurrency: int,
    output: Path,
    register_with: str | None,
    token: str | None,
    test_runs: bool,
    as_json: bool,
    **settings: Any,
) -> int:
    """Run a whole curve and assemble a checked bundle; exit 1 when the checker fails it."""
    from harness.curves.sweep import SweepSpec, run_sweep

    if register_with and not token:
        raise Failure("--register-with needs --token or PRISM_USER_API_TOKEN")
    samples = samples_of(dataset, prompt_column, agentic=agentic)
    counter = counter_of(tokenizer, chat_template, tokenizer_registry)
    try:
        spec = SweepSpec.load(submission, max_concurrency)
    except (ValueError, OSError) as exc:
        raise Failure(str(exc)) from None
    seconds = settings["duration_per_point"]
    result = run_sweep(
        base=RunConfig(**request_fields(settings)),
        spec=spec,
        samples=samples,
        counter=counter,
        c_max=max_concurrency,
        output=output,
        offline=settings["offline"],
        duration_s=(lambda _point: seconds) if seconds else None,
        trajectories=settings["trajectories"],
    )
    sla = sla_of(settings["ttft_p90_max_ms"], settings["tps_per_user_min"],
                 settings["max_error_rate"])  # fmt: skip
    points = [
        {
            "concurrency": planned.concurrency,
            "role": planned.role,
            "run_dir": str(run.run_dir),
            "sla_misses": None if sla is None else sla.summary_misses(run.summary.result),
        }
        for planned, run in result.runs
    ]
    if register_with and token:
        _register(points, register_with, token, test_runs)
    if as_json:
        emit_json({"bundle": str(result.archive), "errors": result.errors,
                   "warnings": result.warnings, "points": points})  # fmt: skip
    else:
        _print(points, result.errors, result.warnings, result.archive, sla is not None)
    return EXIT_OK if not result.errors else EXIT_FAILED


def _register(points: list[dict[str, Any]], address: str, token: str, is_test: bool) -> None:
    """Each point's run registered; its id kept with the point."""
    try:
        registered = register_runs([Path(p["run_dir"]) for p in points], address, token,
                                   is_test=is_test)  # fmt: skip
    except HandoverFailed as exc:
        kept = [f"registered {r.run_id} ({r.run_dir.name})" for r in exc.registered]
        raise Failure(f"registering the runs with {address}: {exc}", hints=kept) from None
    for point, run in zip(points, registered, strict=True):
        point["run_id"] = run.run_id


def _print(points: list[dict[str, Any]], errors: list[str], warnings: list[str],
           archive: Path, with_sla: bool) -> None:  # fmt: skip
    for point in points:
        line = f"c={point['concurrency']:<6} {point['role']:<16}"
        if with_sla:
            misses = point["sla_misses"]
            line += " within the SLA" if not misses else " misses: " + "; ".join(misses)
        if point.get("run_id"):
            line += f" run {point['run_id']}"
        if with_sla or point.get("run_id"):
            click.echo(line)
    for line in errors:
        click.echo(f"ERROR   {line}")
    for line in warnings:
        click.echo(f"WARNING {line}")
    click.echo(f"bundle: {archive}")
