"""``endpoints-harness recompute``: rebuild a run's summary from its events.jsonl."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.folders import counted_folder
from harness.cli.kit import Failure, emit_json, warn
from harness.cli.options import counter_of, tokenizer_options
from harness.load.loadgen import official_summary, options_from_run_dir, write_summary
from harness.metrics.ranges import PartCounts, Precounted, count_part
from harness.metrics.tokens import TokenCounter

Spec = tuple[str | None, str | None, str | None]


@click.command("recompute", short_help="rebuild a run's summary from events.jsonl")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.argument("more_counts", nargs=-1, type=click.Path(path_type=Path))
@tokenizer_options()
@click.option(
    "--official-failures",
    is_flag=True,
    help="count failed requests as completions, as the official client does",
)
@click.option("--output", default=None, type=click.Path(path_type=Path),
              help="write into another folder")  # fmt: skip
@click.option(
    "--jobs", type=int, default=1, help="count tokens in this many processes, merged exactly"
)
@click.option(
    "--counts",
    multiple=True,
    type=click.Path(path_type=Path),
    help="the parts 'count-part' wrote (every one of them): no tokenizing here",
)
def recompute(
    run_dir: Path,
    more_counts: tuple[Path, ...],
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
    official_failures: bool,
    output: Path | None,
    jobs: int,
    counts: tuple[Path, ...],
) -> None:
    """Rebuild a run's summary from events.jsonl; prints the headline figures as JSON."""
    # `--counts a.npz b.npz …` as the command has always been written: the files after the
    # first reach click as extra arguments.
    if more_counts and not counts:
        raise click.UsageError(f"unexpected extra argument {more_counts[0]}")
    parts = [*counts, *more_counts]
    folder = counted_folder(run_dir, tokenizer, chat_template, tokenizer_registry)
    if folder.counter is None:
        warn(
            "no tokenizer for this run (model_params.tokenizer_name, a local "
            "model_params.name or --tokenizer): ISL, OSL and TPOT are empty and tps is "
            "null, as the official client leaves them"
        )
    options = options_from_run_dir(run_dir)
    options.failures_as_completions = official_failures
    counted: TokenCounter | Precounted | None = folder.counter
    try:
        if parts:
            counted = Precounted([PartCounts.load(part) for part in parts])
        elif jobs > 1 and folder.counter is not None:
            spec = (folder.spec, folder.template, tokenizer_registry)
            counted = _count_in_processes(run_dir / "events.jsonl", spec, jobs)
    except (OSError, ValueError) as exc:
        raise Failure(str(exc)) from None
    # Read before it is rewritten: report.txt compares every number with it.
    official = official_summary(run_dir)
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        (output / "events.jsonl").write_bytes((run_dir / "events.jsonl").read_bytes())
        run_dir = output
    try:
        summary = write_summary(run_dir, counted, options, official)
    except KeyError as exc:  # a line no part counted: parts of another file
        raise Failure(str(exc.args[0])) from None
    for problem in summary.problems:
        warn(problem)
    for line in summary.comparison:
        if "(DIFFERS)" in line:
            click.echo(f"differs from the folder's summary: {line}", err=True)
    headline = ("n_samples_completed", "duration_ns", "tps")
    emit_json({k: summary.result[k] for k in headline}, indent=None)  # one line, as ever


def _count_one_part(events: Path, spec: Spec, part: int, parts: int) -> PartCounts:
    counter = counter_of(*spec)
    assert counter is not None
    return count_part(events, counter, part, parts)


def _count_in_processes(events: Path, spec: Spec, parts: int) -> Precounted:
    """Every part in a process of its own, merged (harness/metrics/ranges.py)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(parts, mp_context=context) as pool:
        futures = [pool.submit(_count_one_part, events, spec, k, parts) for k in range(parts)]
        return Precounted([f.result() for f in futures])
