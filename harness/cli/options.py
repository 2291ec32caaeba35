"""Options several commands take, declared once: the tokenizer to count with, how requests
are sent to the endpoint, and an SLA."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.cli.kit import Failure
from harness.curves.search import SlaTarget
from harness.load.agentic import load_agentic
from harness.load.dataset import DatasetError, load_dataset
from harness.metrics.tokens import TokenCounter, TokenizerNotFound, load_counter, load_registry

F = TypeVar("F", bound=Callable[..., Any])


def _stacked(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(command: F) -> F:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def tokenizer_options(
    tokenizer_help: str | None = None, template_help: str | None = None
) -> Callable[[F], F]:
    """``--tokenizer``, ``--chat-template``, ``--tokenizer-registry``."""
    return _stacked(
        click.option("--tokenizer", default=None, help=tokenizer_help),
        click.option("--chat-template", default=None, help=template_help),
        click.option("--tokenizer-registry", default=None, help="JSON registry file"),
    )


def request_options(command: F) -> F:
    """How each request is sent: ``--api``, ``--max-tokens``, ``--drain-timeout``,
    ``--api-key``, ``--warmup``."""
    return _stacked(
        click.option("--warmup", type=int, default=0, help="warmup requests before tracking"),
        click.option("--api", type=click.Choice(("chat", "completions")), default="chat"),
        click.option("--max-tokens", type=int, default=1024),
        click.option("--drain-timeout", type=float, default=240.0),
        click.option("--api-key", default=None),
    )(command)


def request_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The RunConfig fields of ``--endpoint``, ``--model`` and :func:`request_options`."""
    return {
        "endpoint": options["endpoint"],
        "model": options["model"],
        "api": options["api"],
        "max_tokens": options["max_tokens"],
        "warmup_requests": options["warmup"],
        "api_key": options["api_key"],
        "drain_timeout_s": options["drain_timeout"],
    }


def sla_options(command: F) -> F:
    """The SLA a point is held to: TTFT P90, tokens/s per user, the failed share."""
    return _stacked(
        click.option("--ttft-p90-max-ms", type=float, default=None, help="SLA: TTFT P90 limit"),
        click.option(
            "--tps-per-user-min",
            type=float,
            default=None,
            help="SLA: 1000 / TPOT P90 ms (agentic: e2e_avg_interactivity)",
        ),
        click.option(
            "--max-error-rate", type=float, default=0.05, help="SLA: failed share that misses"
        ),
    )(command)


def sla_of(ttft_p90_max_ms: float | None, tps_per_user_min: float | None,
           max_error_rate: float) -> SlaTarget | None:  # fmt: skip
    if ttft_p90_max_ms is None and tps_per_user_min is None:
        return None
    return SlaTarget(ttft_p90_max_ms, tps_per_user_min, max_error_rate)


def counter_of(
    spec: str | None, chat_template: str | None, registry: str | None
) -> TokenCounter | None:
    """The tokenizer *spec* names (a registry name, a folder or a file), or None."""
    if not spec:
        return None
    entries = load_registry(Path(registry)) if registry else None
    try:
        return load_counter(spec, entries, chat_template)
    except TokenizerNotFound as exc:
        raise Failure(str(exc)) from None


def steady_state_options(command: F) -> F:
    """How a run's steady state is looked for (``analyze``, ``report``)."""
    return _stacked(
        click.option(
            "--superpass-size",
            type=int,
            default=None,
            help="requests per super-pass (default: the dataset size the run recorded)",
        ),
        click.option(
            "--warmup", type=int, default=1, help="leading super-passes dropped (default 1)"
        ),
        click.option(
            "--min-duration-s",
            type=float,
            default=None,
            help="the window's minimum issue-time span (default: rules §6.2 for the point)",
        ),
        click.option("--region", default=None, help="the point's region, for the §6.2 minimum"),
    )(command)


def samples_of(dataset: str, prompt_column: str | None, *, agentic: bool) -> list[Any]:
    """The dataset's samples, or its multi-turn conversations when *agentic*."""
    try:
        if agentic:
            return list(load_agentic(Path(dataset)))
        return list(load_dataset(Path(dataset), prompt_column))
    except DatasetError as exc:
        raise Failure(str(exc)) from None
