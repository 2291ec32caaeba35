"""``endpoints-harness``: run a point, recompute a run folder, serve the simulator."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.analysis.run import NoSuperPassSize, analyse_run, run_method, steady_state_applies
from harness.analysis.steady_state import Method, window_text
from harness.curves.search import SlaTarget, probe_table, search
from harness.load.agentic import load_agentic
from harness.load.dataset import DatasetError, load_dataset
from harness.load.engine import LOAD_PATTERNS, RunConfig
from harness.load.loadgen import (
    official_summary,
    options_from_run_dir,
    run_point,
    write_summary,
)
from harness.metrics.ranges import PartCounts, Precounted, count_part
from harness.metrics.summary import SummaryOptions
from harness.metrics.tokens import TokenCounter, TokenizerNotFound, load_counter, load_registry
from harness.sim import SimConfig, run_server


def _counter(
    spec: str | None, chat_template: str | None, registry: str | None
) -> TokenCounter | None:
    if not spec:
        return None
    entries = load_registry(Path(registry)) if registry else None
    return load_counter(spec, entries, chat_template)


def cmd_run(args: argparse.Namespace) -> int:
    try:
        samples: list[Any] = (
            load_agentic(Path(args.dataset))
            if args.load_pattern == "agentic_inference"
            else load_dataset(Path(args.dataset), args.prompt_column)
        )
        counter = _counter(args.tokenizer, args.chat_template, args.tokenizer_registry)
    except (DatasetError, TokenizerNotFound) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    config = RunConfig(
        endpoint=args.endpoint,
        model=args.model,
        load_pattern=args.load_pattern,
        concurrency=args.concurrency,
        target_qps=args.target_qps,
        duration_s=args.duration,
        n_samples=args.n_samples,
        warmup_requests=args.warmup,
        streaming=not args.no_streaming,
        api=args.api,
        max_tokens=args.max_tokens,
        seed=args.seed,
        drain_timeout_s=args.drain_timeout,
        api_key=args.api_key,
        client=args.client,
        trajectories=args.trajectories,
        enable_salt=not args.no_salt,
        inject_tool_delay=not args.no_tool_delay,
        workers=args.workers,
        request_usage=args.request_usage,
    )
    try:
        config.validate()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.output)
    result = run_point(config, samples, out, counter, progress=lambda m: print(m, file=sys.stderr))
    # Remember how to recompute: the tokenizer is part of the run's definition.
    config_path = out / "config.yaml"
    data = yaml.safe_load(config_path.read_text())
    data["model_params"]["tokenizer_name"] = args.tokenizer
    data["model_params"]["chat_template"] = args.chat_template
    config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    r = result.summary.result
    if result.aborted:
        print(f"warning: {result.aborted}", file=sys.stderr)
    print(
        f"completed {r['n_samples_completed']}/{r['n_samples_issued']} "
        f"(failed {r['n_samples_failed']}, dropped {r['n_samples_dropped']}); "
        f"tps {r['tps'] if r['tps'] is None else round(r['tps'], 1)}; run folder {out}"
    )
    return 0


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


def _run_folder(args: argparse.Namespace) -> tuple[Path, dict[str, Any], str | None] | None:
    """A run folder's path, its model_params and the tokenizer to count with (--tokenizer,
    else the run's own); None, said on stderr, when it has no events."""
    run_dir = Path(args.run_dir)
    if not (run_dir / "events.jsonl").is_file():
        print(f"error: {run_dir} has no events.jsonl", file=sys.stderr)
        return None
    config_path = run_dir / "config.yaml"
    config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else {}
    params = (config or {}).get("model_params") or {}
    registry = load_registry(Path(args.tokenizer_registry) if args.tokenizer_registry else None)
    return run_dir, params, args.tokenizer or run_tokenizer(params, registry)


@dataclass(frozen=True)
class _Counted:
    run_dir: Path
    spec: str | None
    template: str | None
    counter: TokenCounter | None


def _counted_folder(args: argparse.Namespace) -> _Counted | None:
    """A run folder and the tokenizer it is counted with (``_run_folder``), loaded; None,
    said on stderr with what to pass, when it cannot be."""
    folder = _run_folder(args)
    if folder is None:
        return None
    run_dir, params, spec = folder
    template = args.chat_template or params.get("chat_template")
    try:
        return _Counted(run_dir, spec, template, _counter(spec, template, args.tokenizer_registry))
    except TokenizerNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        if not args.tokenizer and params.get("tokenizer_name"):
            print(
                f"the run names tokenizer {params['tokenizer_name']!r}; hub ids are not "
                "downloaded: pass --tokenizer with a local copy or a registry name",
                file=sys.stderr,
            )
        return None


def cmd_recompute(args: argparse.Namespace) -> int:
    folder = _counted_folder(args)
    if folder is None:
        return 2
    run_dir, spec, counter = folder.run_dir, folder.spec, folder.counter
    if counter is None:
        print(
            "warning: no tokenizer for this run (model_params.tokenizer_name, a local "
            "model_params.name or --tokenizer): ISL, OSL and TPOT are empty and tps is "
            "null, as the official client leaves them",
            file=sys.stderr,
        )
    options = options_from_run_dir(run_dir)
    options.failures_as_completions = args.official_failures
    counts: TokenCounter | Precounted | None = counter
    try:
        if args.counts:
            counts = Precounted([PartCounts.load(Path(f)) for f in args.counts])
        elif args.jobs > 1 and counter is not None:
            counts = _count_in_processes(
                run_dir / "events.jsonl",
                (spec, folder.template, args.tokenizer_registry),
                args.jobs,
            )
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Read before it is rewritten: report.txt compares every number with it.
    official = official_summary(run_dir)
    if args.output:
        target = Path(args.output)
        target.mkdir(parents=True, exist_ok=True)
        (target / "events.jsonl").write_bytes((run_dir / "events.jsonl").read_bytes())
        run_dir = target
    try:
        summary = write_summary(run_dir, counts, options, official)
    except KeyError as exc:  # a line no part counted: parts of another file
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    for problem in summary.problems:
        print(f"warning: {problem}", file=sys.stderr)
    differing = [line for line in summary.comparison if "(DIFFERS)" in line]
    for line in differing:
        print(f"differs from the folder's summary: {line}", file=sys.stderr)
    print(json.dumps({k: summary.result[k] for k in ("n_samples_completed", "duration_ns", "tps")}))
    return 0


def _analysis_inputs(
    args: argparse.Namespace,
) -> tuple[Path, TokenCounter | None, SummaryOptions, Method | None] | None:
    """What ``analyze`` and ``report`` need: the folder, its tokenizer, the summary options
    and the steady-state method (None for a run steady state does not apply to); None,
    said on stderr, when one cannot be had."""
    folder = _counted_folder(args)
    if folder is None:
        return None
    run_dir, counter = folder.run_dir, folder.counter
    options = options_from_run_dir(run_dir)
    options.count_input_tokens = False
    method = None
    if steady_state_applies(options.load_pattern):
        try:
            method = run_method(
                run_dir,
                int((options.run_config.get("load_pattern") or {}).get("target_concurrency") or 1),
                super_pass_size=args.superpass_size,
                warmup=args.warmup,
                min_duration_s=args.min_duration_s,
                region=args.region,
            )
        except NoSuperPassSize as exc:
            print(f"error: {exc}", file=sys.stderr)
            return None
    else:
        print(
            f"note: a {options.load_pattern} run has no steady state (rules §2.4: "
            "fixed-concurrency points only); the time series only",
            file=sys.stderr,
        )
    return run_dir, counter, options, method


def _print_steady_state(doc: dict[str, Any] | None) -> None:
    if doc is None:
        return
    line = f"steady state: {doc['status']}, {doc['verdict']}"
    if doc.get("window"):
        line += f"; {window_text(doc['window'])}"
    if doc.get("reason"):
        line += f"; {doc['reason']}"
    print(line)


def cmd_analyze(args: argparse.Namespace) -> int:
    inputs = _analysis_inputs(args)
    if inputs is None:
        return 2
    run_dir, counter, options, method = inputs
    analysis = analyse_run(run_dir, counter, options, method)
    if analysis.timeseries is None:
        print("error: no tracked request in events.jsonl: nothing to analyse", file=sys.stderr)
        return 1
    _print_steady_state(analysis.steady_state)
    print(run_dir / "analysis")
    return 0


def _count_one_part(
    events: Path, spec: tuple[str | None, str | None, str | None], part: int, parts: int
) -> PartCounts:
    counter = _counter(*spec)
    assert counter is not None
    return count_part(events, counter, part, parts)


def _count_in_processes(
    events: Path, spec: tuple[str | None, str | None, str | None], parts: int
) -> Precounted:
    """Every part in a process of its own, merged (harness/metrics/ranges.py)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(parts, mp_context=context) as pool:
        futures = [pool.submit(_count_one_part, events, spec, k, parts) for k in range(parts)]
        return Precounted([f.result() for f in futures])


def cmd_count_part(args: argparse.Namespace) -> int:
    folder = _counted_folder(args)
    if folder is None:
        return 2
    if folder.counter is None:
        print("error: no tokenizer for this run: pass --tokenizer", file=sys.stderr)
        return 2
    try:
        counted = count_part(folder.run_dir / "events.jsonl", folder.counter, args.part, args.parts)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counted.save(Path(args.output))
    print(f"{args.output}: part {args.part} of {args.parts}, {len(counted.n_out):,} responses")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.analysis.report import PlotlyMissing, plotly_js, write_report

    inputs = _analysis_inputs(args)
    if inputs is None:
        return 2
    run_dir, counter, options, method = inputs
    try:
        script = plotly_js(Path(args.plotly_js) if args.plotly_js else None)
    except (PlotlyMissing, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    analysis = write_report(run_dir, counter, options, script, method)
    series = analysis.timeseries
    if series is None:
        print("error: no tracked request in events.jsonl: nothing to draw", file=sys.stderr)
        return 1
    _print_steady_state(analysis.steady_state)
    print(
        f"{run_dir / 'analysis' / 'report.html'} ({len(series['t_s'])} bins of {series['bin_s']} s)"
    )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from harness.curves.sweep import SweepSpec, run_sweep

    try:
        samples: list[Any] = (
            load_agentic(Path(args.dataset))
            if args.agentic
            else load_dataset(Path(args.dataset), args.prompt_column)
        )
        counter = _counter(args.tokenizer, args.chat_template, args.tokenizer_registry)
        spec = SweepSpec.load(Path(args.submission), args.max_concurrency)
    except (DatasetError, TokenizerNotFound, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = RunConfig(
        endpoint=args.endpoint,
        model=args.model,
        api=args.api,
        max_tokens=args.max_tokens,
        warmup_requests=args.warmup,
        api_key=args.api_key,
        drain_timeout_s=args.drain_timeout,
    )
    seconds = args.duration_per_point
    result = run_sweep(
        base=base,
        spec=spec,
        samples=samples,
        counter=counter,
        c_max=args.max_concurrency,
        output=Path(args.output),
        offline=args.offline,
        duration_s=(lambda _point: seconds) if seconds else None,
        trajectories=args.trajectories,
    )
    sla = _sla(args)
    if sla is not None:
        for planned, run in result.runs:
            misses = sla.summary_misses(run.summary.result)
            print(
                f"c={planned.concurrency:<6} {planned.role:<16} "
                + ("within the SLA" if not misses else "misses: " + "; ".join(misses))
            )
    for line in result.errors:
        print(f"ERROR   {line}")
    for line in result.warnings:
        print(f"WARNING {line}")
    print(f"bundle: {result.archive}")
    return 0 if not result.errors else 1


def _sla(args: argparse.Namespace) -> SlaTarget | None:
    if args.ttft_p90_max_ms is None and args.tps_per_user_min is None:
        return None
    return SlaTarget(args.ttft_p90_max_ms, args.tps_per_user_min, args.max_error_rate)


def cmd_search(args: argparse.Namespace) -> int:
    try:
        sla = _sla(args)
        if sla is None:
            raise ValueError("give --ttft-p90-max-ms, --tps-per-user-min or both")
        samples: list[Any] = list(load_dataset(Path(args.dataset), args.prompt_column))
        counter = _counter(args.tokenizer, args.chat_template, args.tokenizer_registry)
    except (DatasetError, TokenizerNotFound, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    poisson = args.load_pattern == "poisson"
    base = RunConfig(
        endpoint=args.endpoint,
        model=args.model,
        load_pattern=args.load_pattern,
        target_qps=1.0 if poisson else None,
        streaming=not args.no_streaming,
        api=args.api,
        max_tokens=args.max_tokens,
        seed=args.seed,
        warmup_requests=args.warmup,
        drain_timeout_s=args.drain_timeout,
        api_key=args.api_key,
    )
    print(probe_table(args.load_pattern, []))
    try:
        result = search(
            base,
            samples,
            counter,
            sla,
            Path(args.output),
            start=args.start,
            max_level=args.max_level if args.max_level else (10_000 if poisson else 4096),
            step=args.step,
            probe_s=args.probe_duration,
            final_s=args.duration,
            max_probes=args.max_probes,
            on_probe=lambda p: print(probe_table(args.load_pattern, [p]).splitlines()[1]),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    unit = "QPS" if poisson else "concurrency"
    print(f"search: {result.stopped}")
    if result.final is None:
        print(f"no {unit} meets the SLA; no final run")
        return 1
    verdict = sla.summary_misses(result.final.summary.result)
    print(
        f"highest {unit} within the SLA: {result.level:g}; final run "
        f"({args.duration:g} s) {'meets it' if not verdict else 'misses: ' + '; '.join(verdict)}"
        f"; run folder {args.output}"
    )
    return 0 if not verdict else 1


def cmd_serve_sim(args: argparse.Namespace) -> int:
    config = (
        SimConfig.instant(args.chunks)
        if args.instant
        else SimConfig(
            ttft_ms=args.ttft_ms,
            tpot_ms=args.tpot_ms,
            max_batch=args.max_batch,
            batch_slowdown=args.batch_slowdown,
            output_tokens=args.output_tokens,
            error_rate=args.error_rate,
            drop_rate=args.drop_rate,
            whitespace_first_rate=args.whitespace_first_rate,
            tpot_drift_per_1k=args.tpot_drift_per_1k,
            shift_after=args.shift_after,
            shift_factor=args.shift_factor,
            error_burst_start=args.error_burst_start,
            error_burst_count=args.error_burst_count,
            seed=args.seed,
        )
    )
    try:
        run_server(config, args.host, args.port, args.processes)
    except KeyboardInterrupt:
        pass
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="endpoints-harness",
        description="Measure an OpenAI-compatible endpoint as the official client does",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="measure one point into a run folder")
    run.add_argument("--endpoint", required=True, help="base URL, e.g. http://127.0.0.1:8001")
    run.add_argument("--model", required=True)
    run.add_argument("--dataset", required=True, help="JSONL, CSV or Parquet")
    run.add_argument("--prompt-column", default=None)
    run.add_argument("--tokenizer", default=None, help="registry model name, tokenizer dir or file")
    run.add_argument(
        "--chat-template", default=None, help="template file (overrides the tokenizer's)"
    )
    run.add_argument("--tokenizer-registry", default=None, help="JSON registry file")
    run.add_argument("--load-pattern", choices=LOAD_PATTERNS, default="concurrency")
    run.add_argument("--concurrency", type=int, default=1)
    run.add_argument("--target-qps", type=float, default=None)
    run.add_argument("--duration", type=float, default=None, help="seconds to issue for")
    run.add_argument("--n-samples", type=int, default=None)
    run.add_argument("--warmup", type=int, default=0, help="warmup requests before tracking")
    run.add_argument("--no-streaming", action="store_true")
    run.add_argument("--api", choices=("chat", "completions"), default="chat")
    run.add_argument("--max-tokens", type=int, default=1024)
    run.add_argument("--seed", type=int, default=42)
    run.add_argument("--drain-timeout", type=float, default=240.0)
    run.add_argument("--api-key", default=None)
    run.add_argument(
        "--trajectories",
        type=int,
        default=None,
        help="agentic: conversations to run (default: one pass)",
    )
    run.add_argument("--no-salt", action="store_true", help="agentic: no cache salt")
    run.add_argument(
        "--no-tool-delay",
        action="store_true",
        help="agentic: do not wait the recorded tool time between turns",
    )
    run.add_argument(
        "--client",
        choices=("auto", "fast", "httpx"),
        default="auto",
        help="auto: the lean client for http://, httpx for https://",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes sharing the load, each with its own event loop (not agentic)",
    )
    run.add_argument(
        "--request-usage",
        action="store_true",
        help="ask a streaming server for its token count (stream_options.include_usage), "
        "recorded beside the re-count; the official client never asks",
    )
    run.add_argument("--output", required=True, help="run folder to write")
    run.set_defaults(func=cmd_run)

    recompute = sub.add_parser("recompute", help="rebuild a run's summary from events.jsonl")
    recompute.add_argument("run_dir")
    recompute.add_argument("--tokenizer", default=None)
    recompute.add_argument("--chat-template", default=None)
    recompute.add_argument("--tokenizer-registry", default=None)
    recompute.add_argument(
        "--official-failures",
        action="store_true",
        help="count failed requests as completions, as the official client does",
    )
    recompute.add_argument("--output", default=None, help="write into another folder")
    recompute.add_argument(
        "--jobs", type=int, default=1, help="count tokens in this many processes, merged exactly"
    )
    recompute.add_argument(
        "--counts",
        nargs="+",
        default=None,
        help="the parts 'count-part' wrote (every one of them): no tokenizing here",
    )
    recompute.set_defaults(func=cmd_recompute)

    part = sub.add_parser(
        "count-part", help="count one part of a run's tokens, for 'recompute --counts'"
    )
    part.add_argument("run_dir")
    part.add_argument("--part", type=int, required=True, help="which part, from 0")
    part.add_argument("--parts", type=int, required=True, help="how many parts in all")
    part.add_argument("--output", required=True, help="the .npz file to write")
    part.add_argument("--tokenizer", default=None)
    part.add_argument("--chat-template", default=None)
    part.add_argument("--tokenizer-registry", default=None)
    part.set_defaults(func=cmd_count_part)

    analyze = sub.add_parser(
        "analyze", help="a run folder's time series and steady state (analysis/*.json)"
    )
    report = sub.add_parser("report", help="analyze, and draw the run over time (offline HTML)")
    for command in (analyze, report):
        command.add_argument("run_dir")
        command.add_argument("--tokenizer", default=None, help="default: the run's own")
        command.add_argument(
            "--chat-template", default=None, help="default: the run's own, else the tokenizer's"
        )
        command.add_argument("--tokenizer-registry", default=None)
        command.add_argument(
            "--superpass-size",
            type=int,
            default=None,
            help="requests per super-pass (default: the dataset size the run recorded)",
        )
        command.add_argument(
            "--warmup", type=int, default=1, help="leading super-passes dropped (default 1)"
        )
        command.add_argument(
            "--min-duration-s",
            type=float,
            default=None,
            help="the window's minimum issue-time span (default: rules §6.2 for the point)",
        )
        command.add_argument(
            "--region", default=None, help="the point's region, for the §6.2 minimum"
        )
    analyze.set_defaults(func=cmd_analyze)
    report.add_argument("--plotly-js", default=None, help="default: the copy shipped here")
    report.set_defaults(func=cmd_report)

    sweep = sub.add_parser("sweep", help="run a whole curve and assemble a checked bundle")
    sweep.add_argument("--endpoint", required=True)
    sweep.add_argument("--model", required=True, help="model name the endpoint serves")
    sweep.add_argument("--max-concurrency", type=int, required=True, help="C_max (> 32)")
    sweep.add_argument("--dataset", required=True)
    sweep.add_argument("--prompt-column", default=None)
    sweep.add_argument(
        "--submission",
        required=True,
        help="YAML: disclosures, system_desc, system_power, accuracy_results",
    )
    sweep.add_argument("--tokenizer", default=None)
    sweep.add_argument("--chat-template", default=None)
    sweep.add_argument("--tokenizer-registry", default=None)
    sweep.add_argument("--offline", choices=("dedicated", "elected"), default="dedicated")
    sweep.add_argument(
        "--agentic",
        action="store_true",
        help="the dataset is multi-turn; points replay conversations, no Offline",
    )
    sweep.add_argument(
        "--trajectories",
        type=int,
        default=None,
        help="agentic: conversations per point (default: one pass)",
    )
    sweep.add_argument(
        "--duration-per-point",
        type=float,
        default=None,
        help="seconds per point (default: the rules' 600 s / 1200 s)",
    )
    sweep.add_argument("--warmup", type=int, default=0)
    sweep.add_argument("--api", choices=("chat", "completions"), default="chat")
    sweep.add_argument("--max-tokens", type=int, default=1024)
    sweep.add_argument("--drain-timeout", type=float, default=240.0)
    sweep.add_argument("--api-key", default=None)
    sweep.add_argument("--output", required=True)
    _sla_arguments(sweep, "mark the points that meet this SLA")
    sweep.set_defaults(func=cmd_sweep)

    find = sub.add_parser(
        "search", help="find the highest concurrency (or QPS) whose point meets an SLA"
    )
    find.add_argument("--endpoint", required=True)
    find.add_argument("--model", required=True)
    find.add_argument("--dataset", required=True)
    find.add_argument("--prompt-column", default=None)
    find.add_argument("--tokenizer", default=None, help="needed for --tps-per-user-min")
    find.add_argument("--chat-template", default=None)
    find.add_argument("--tokenizer-registry", default=None)
    find.add_argument("--load-pattern", choices=("concurrency", "poisson"), default="concurrency")
    find.add_argument("--start", type=float, default=1, help="first level probed (default 1)")
    find.add_argument("--max-level", type=float, default=None, help="highest level probed")
    find.add_argument(
        "--step", type=float, default=None, help="precision: users (1), or share of QPS (0.05)"
    )
    find.add_argument("--probe-duration", type=float, default=10.0, help="seconds per probe")
    find.add_argument("--max-probes", type=int, default=16)
    find.add_argument("--duration", type=float, default=60.0, help="seconds of the final run")
    find.add_argument("--warmup", type=int, default=0)
    find.add_argument("--no-streaming", action="store_true")
    find.add_argument("--api", choices=("chat", "completions"), default="chat")
    find.add_argument("--max-tokens", type=int, default=1024)
    find.add_argument("--seed", type=int, default=42)
    find.add_argument("--drain-timeout", type=float, default=240.0)
    find.add_argument("--api-key", default=None)
    find.add_argument("--output", required=True, help="the final run folder")
    _sla_arguments(find, "the SLA the point must meet")
    find.set_defaults(func=cmd_search)

    sim = sub.add_parser("serve-sim", help="a simulated OpenAI-compatible streaming endpoint")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=8001)
    sim.add_argument("--instant", action="store_true", help="no delays (roofline)")
    sim.add_argument("--chunks", type=int, default=100, help="chunks per response with --instant")
    sim.add_argument("--ttft-ms", type=float, default=30.0)
    sim.add_argument("--tpot-ms", type=float, default=5.0)
    sim.add_argument("--max-batch", type=int, default=64)
    sim.add_argument("--batch-slowdown", type=float, default=0.02)
    sim.add_argument("--output-tokens", type=int, default=128)
    sim.add_argument("--error-rate", type=float, default=0.0)
    sim.add_argument("--drop-rate", type=float, default=0.0)
    sim.add_argument("--whitespace-first-rate", type=float, default=0.0)
    faults = sim.add_argument_group("faults over the run", "by the order requests arrive")
    faults.add_argument(
        "--tpot-drift-per-1k", type=float, default=0.0,
        help="per-token time grows by this fraction per 1,000 requests (never settles)",
    )  # fmt: skip
    faults.add_argument("--shift-after", type=int, default=None, help="a level shift from here")
    faults.add_argument("--shift-factor", type=float, default=1.0, help="per-token time × this")
    faults.add_argument("--error-burst-start", type=int, default=None)
    faults.add_argument("--error-burst-count", type=int, default=0)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument(
        "--processes", type=int, default=1, help="processes sharing the port (SO_REUSEPORT)"
    )
    sim.set_defaults(func=cmd_serve_sim)
    return parser


def _sla_arguments(parser: argparse.ArgumentParser, title: str) -> None:
    group = parser.add_argument_group("SLA", title)
    group.add_argument("--ttft-p90-max-ms", type=float, default=None)
    group.add_argument(
        "--tps-per-user-min",
        type=float,
        default=None,
        help="1000 / TPOT P90 ms (agentic: e2e_avg_interactivity)",
    )
    group.add_argument(
        "--max-error-rate", type=float, default=0.05, help="failed share that misses (0.05)"
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
