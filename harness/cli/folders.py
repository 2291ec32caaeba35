"""A run folder the commands read, and the tokenizer its tokens are counted with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from harness.analysis.run import NoSuperPassSize, run_method, steady_state_applies
from harness.analysis.steady_state import Method, window_text
from harness.cli.kit import Failure, note
from harness.cli.options import counter_of
from harness.load.loadgen import options_from_run_dir
from harness.metrics.summary import SummaryOptions
from harness.metrics.tokens import TokenCounter, load_registry


def run_tokenizer(params: dict[str, Any], registry: dict[str, Any]) -> str | None:
    """The tokenizer the run was counted with, as the official client picks it (harness-
    metrics §5): ``model_params.tokenizer_name`` if set, else ``model_params.name`` when it
    is a local folder with a tokenizer or a registry name; None when neither is."""
    named = params.get("tokenizer_name")
    if named:
        return str(named)
    name = params.get("name")
    if not name:
        return None
    folder = Path(str(name))
    if folder.is_dir() and any(
        (folder / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json")
    ):
        return str(folder)
    return str(name) if name in registry else None


@dataclass(frozen=True)
class CountedFolder:
    run_dir: Path
    spec: str | None
    template: str | None
    counter: TokenCounter | None


def counted_folder(
    run_dir: Path, tokenizer: str | None, chat_template: str | None, registry: str | None
) -> CountedFolder:
    """A run folder with events and the tokenizer it is counted with: *tokenizer*, else the
    run's own; refused saying what to pass when it cannot be loaded."""
    if not (run_dir / "events.jsonl").is_file():
        raise Failure(f"{run_dir} has no events.jsonl")
    config_path = run_dir / "config.yaml"
    config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else {}
    params = (config or {}).get("model_params") or {}
    entries = load_registry(Path(registry) if registry else None)
    spec = tokenizer or run_tokenizer(params, entries)
    template = chat_template or params.get("chat_template")
    try:
        return CountedFolder(run_dir, spec, template, counter_of(spec, template, registry))
    except Failure as exc:
        if not tokenizer and params.get("tokenizer_name"):
            exc.hints.append(
                f"the run names tokenizer {params['tokenizer_name']!r}; hub ids are not "
                "downloaded: pass --tokenizer with a local copy or a registry name"
            )
        raise


@dataclass(frozen=True)
class AnalysisInputs:
    run_dir: Path
    counter: TokenCounter | None
    options: SummaryOptions
    method: Method | None  # None: steady state does not apply to the run


def analysis_inputs(
    folder: CountedFolder,
    *,
    superpass_size: int | None,
    warmup: int,
    min_duration_s: float | None,
    region: str | None,
) -> AnalysisInputs:
    """What ``analyze`` and ``report`` need, with their steady-state options."""
    options = options_from_run_dir(folder.run_dir)
    options.count_input_tokens = False
    method = None
    if steady_state_applies(options.load_pattern):
        pattern = options.run_config.get("load_pattern") or {}
        try:
            method = run_method(
                folder.run_dir,
                int(pattern.get("target_concurrency") or 1),
                super_pass_size=superpass_size,
                warmup=warmup,
                min_duration_s=min_duration_s,
                region=region,
            )
        except NoSuperPassSize as exc:
            raise Failure(str(exc)) from None
    else:
        note(
            f"note: a {options.load_pattern} run has no steady state (rules §2.4: "
            "fixed-concurrency points only); the time series only"
        )
    return AnalysisInputs(folder.run_dir, folder.counter, options, method)


def print_steady_state(doc: dict[str, Any] | None) -> None:
    if doc is None:
        return
    line = f"steady state: {doc['status']}, {doc['verdict']}"
    if doc.get("window"):
        line += f"; {window_text(doc['window'])}"
    if doc.get("reason"):
        line += f"; {doc['reason']}"
    click.echo(line)
