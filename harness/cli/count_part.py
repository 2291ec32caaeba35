"""``endpoints-harness count-part``: count one part of a run's tokens, for ``recompute
--counts`` (the parts on as many machines as there are)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.folders import counted_folder
from harness.cli.kit import Failure
from harness.cli.options import tokenizer_options
from harness.metrics.ranges import count_part as count_one_part


@click.command("count-part", short_help="count one part of a run's tokens")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--part", type=int, required=True, help="which part, from 0")
@click.option("--parts", type=int, required=True, help="how many parts in all")
@click.option("--output", required=True, type=click.Path(path_type=Path),
              help="the .npz file to write")  # fmt: skip
@tokenizer_options()
def count_part(
    run_dir: Path,
    part: int,
    parts: int,
    output: Path,
    tokenizer: str | None,
    chat_template: str | None,
    tokenizer_registry: str | None,
) -> None:
    """Count one part of a run's tokens, for 'recompute --counts'."""
    folder = counted_folder(run_dir, tokenizer, chat_template, tokenizer_registry)
    if folder.counter is None:
        raise Failure("no tokenizer for this run: pass --tokenizer")
    try:
        counted = count_one_part(run_dir / "events.jsonl", folder.counter, part, parts)
    except ValueError as exc:
        raise Failure(str(exc)) from None
    counted.save(output)
    click.echo(f"{output}: part {part} of {parts}, {len(counted.n_out):,} responses")
