"""Re-counting a submitted run with the reference tokenizer (rules §1.3, §4.1).

The recount is the harness's own summary (one implementation of every definition), run on
the submitted ``events.jsonl`` with the official client's arithmetic (failed requests
count as completions, as they did when the submitted numbers were made). Around it, each
response is looked at for what the official tooling never checks: a first chunk that is
only whitespace, punctuation or control characters (a fake first token), the same text
repeated across content, reasoning and tool calls or padded out, and truncation.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.results.domain.goodput import RequestLog, request_of
from harness.events import Output
from harness.summary import Completed, SummaryOptions, summarize
from harness.tokens import TokenCounter

EVIDENCE_SAMPLES = 10
# A long response whose whitespace makes up more than this share is padded, and one that
# compresses to less than this fraction of its size is mostly repetition (ordinary text
# compresses to about a third; "na na na …" to a few percent).
PADDING_SHARE = 0.5
PADDING_MIN_CHARS = 200
REPETITION_RATIO = 0.08
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Tolerances:
    """Relative differences above which re-counted values disagree (configurable)."""

    output_tokens: float = 0.01
    system_tps: float = 0.01
    tpot_p90: float = 0.02
    tps_per_user: float = 0.02
    ttft_p90: float = 0.01


@dataclass(frozen=True)
class Reported:
    """The point's stored values (what the official checker derived from its summary)."""

    total_output_tokens: int | None
    system_tps: float | None
    tpot_p90_ms: float | None
    tps_per_user: float | None
    ttft_p90_ms: float | None
    duration_ms: float | None
    n_samples_completed: int | None
    n_samples_issued: int | None


@dataclass
class Recount:
    total_output_tokens: int | None = None
    system_tps: float | None = None
    tpot_p90_ms: float | None = None
    tps_per_user: float | None = None
    ttft_p90_ms: float | None = None
    n_samples_issued: int = 0
    n_samples_completed: int = 0
    n_samples_failed: int = 0
    osl: dict[str, Any] = field(default_factory=dict)
    events_duration_ms: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Analysis:
    recount: Recount
    findings: list[Finding]
    # Every tracked request's TTFT, rate and tokens, for goodput (None: nothing counted).
    requests: RequestLog | None = None


class Cancelled(Exception):
    pass


def _finding(
    rule: str, severity: Severity, message: str, point: str, fix: str | None = None
) -> Finding:
    return portal_rule(rule).finding(severity, message, point=point, fix=fix)


def is_fake_first_chunk(text: str) -> bool:
    """Non-empty, but only whitespace, punctuation, symbols or control characters."""
    return bool(text) and all(
        ch.isspace() or unicodedata.category(ch)[0] in ("P", "C", "S") for ch in text
    )


def _first_chunk(output: Output) -> str | None:
    if output.reasoning:
        return output.reasoning[0] if isinstance(output.reasoning, list) else output.reasoning
    if isinstance(output.output, list) and output.output:
        return str(output.output[0])
    return None


def is_duplicated(output: Output) -> bool:
    content = output.content.strip()
    reasoning = output.reasoning_text.strip()
    if len(content) >= 20 and content == reasoning:
        return True
    for call in output.tool_calls or []:
        arguments = str((call.get("function") or {}).get("arguments") or "").strip()
        if len(arguments) >= 20 and arguments in (content, reasoning):
            return True
    text = output.content + output.reasoning_text  # unstripped: trailing padding counts
    if len(text) >= PADDING_MIN_CHARS:
        visible = len(_WHITESPACE.sub("", text))
        if (len(text) - visible) / len(text) > PADDING_SHARE:
            return True
        data = text.encode("utf-8")
        if len(zlib.compress(data, 1)) / len(data) < REPETITION_RATIO:
            return True
    return False


class _Scanner:
    def __init__(self) -> None:
        self.fake_first: list[str] = []
        self.duplicated: list[str] = []
        self.truncated: list[str] = []
        self.responses = 0
        self.tokens = 0
        self.requests = RequestLog()

    def __call__(self, completed: Completed) -> None:
        self.tokens += completed.output_tokens
        self.requests.add(
            request_of(
                completed.ttft_ns,
                completed.latency_ns,
                completed.output_tokens,
                completed.tokens_after_first,
                completed.failed,
            )
        )
        if completed.failed:
            return
        self.responses += 1
        first = _first_chunk(completed.output)
        if first is not None and is_fake_first_chunk(first):
            self.fake_first.append(completed.sample_uuid)
        if is_duplicated(completed.output):
            self.duplicated.append(completed.sample_uuid)
        if completed.finish_reason == "length":
            self.truncated.append(completed.sample_uuid)


def _samples(ids: list[str]) -> str:
    shown = ", ".join(ids[:EVIDENCE_SAMPLES])
    more = f" (+{len(ids) - EVIDENCE_SAMPLES} more)" if len(ids) > EVIDENCE_SAMPLES else ""
    return f"{shown}{more}"


def _compare(
    rule: str,
    label: str,
    reported: float | None,
    recounted: float | None,
    tolerance: float,
    point: str,
    unit: str = "",
) -> Finding | None:
    if reported is None or recounted is None:
        return None
    base = abs(reported) if reported else 1e-9
    diff = (recounted - reported) / base
    text = (
        f"{label}: reported {reported:,.3f}{unit}, re-counted {recounted:,.3f}{unit} ({diff:+.2%})"
    )
    if abs(diff) > tolerance:
        return _finding(
            rule,
            Severity.ERROR,
            f"{text}; more than the {tolerance:.0%} tolerance",
            point,
            fix="Explain the difference or resubmit numbers the run's events support",
        )
    return _finding(rule, Severity.INFO, f"{text}; within {tolerance:.0%}", point)


def analyse(
    events: Path,
    counter: TokenCounter | None,
    reported: Reported,
    point: str,
    *,
    tolerances: Tolerances = Tolerances(),
    load_pattern: str = "concurrency",
    progress: Callable[[int, int, int], None] | None = None,
    tokenizer_problem: str | None = None,
) -> Analysis:
    """Re-count one point's events; ``progress(lines, bytes, tokens)`` may raise
    :class:`Cancelled`."""
    if counter is None:
        reason = f" ({tokenizer_problem})" if tokenizer_problem else ""
        return Analysis(
            Recount(),
            [
                _finding(
                    "tokenizer-missing",
                    Severity.WARNING,  # nothing was checked: not a pass
                    "No reference tokenizer is configured for this benchmark model, so output "
                    f"tokens could not be re-counted{reason}",
                    point,
                    fix="An operator adds the model to the tokenizer registry "
                    "(ENDPOINTS_PORTAL_TOKENIZER_REGISTRY)",
                )
            ],
        )
    scanner = _Scanner()

    def report(lines: int, read: int) -> None:
        if progress is not None:
            progress(lines, read, scanner.tokens)

    summary = summarize(
        events,
        counter,
        # Input lengths are not compared, so their tokenization is skipped.
        SummaryOptions(
            load_pattern=load_pattern, failures_as_completions=True, count_input_tokens=False
        ),
        observer=scanner,
        progress=report,
    )
    r = summary.result
    osl = r.get("output_sequence_lengths") or {}
    tpot = (r.get("tpot") or {}).get("percentiles", {}).get("90.0")
    ttft = (r.get("ttft") or {}).get("percentiles", {}).get("90.0")
    total = int(osl["total"]) if osl else 0
    recount = Recount(
        total_output_tokens=total,
        # Over the point's own window, so only the token count can make a difference.
        system_tps=total / (reported.duration_ms / 1000) if reported.duration_ms else r.get("tps"),
        tpot_p90_ms=tpot / 1e6 if tpot is not None else None,
        tps_per_user=1e9 / tpot if tpot else None,
        ttft_p90_ms=ttft / 1e6 if ttft is not None else None,
        n_samples_issued=r["n_samples_issued"],
        n_samples_completed=r["n_samples_completed"],
        n_samples_failed=r["n_samples_failed"],
        osl={k: osl.get(k) for k in ("min", "max", "median", "avg")} if osl else {},
        events_duration_ms=(r["duration_ns"] or 0) / 1e6 or None,
    )
    findings = [
        f
        for f in (
            _compare(
                "recounted-output-tokens",
                "output tokens",
                reported.total_output_tokens,
                recount.total_output_tokens,
                tolerances.output_tokens,
                point,
            ),
            _compare(
                "recounted-system-tps",
                "system tokens/s",
                reported.system_tps,
                recount.system_tps,
                tolerances.system_tps,
                point,
            ),
            _compare(
                "recounted-tpot-p90",
                "TPOT P90",
                reported.tpot_p90_ms,
                recount.tpot_p90_ms,
                tolerances.tpot_p90,
                point,
                " ms",
            ),
            _compare(
                "recounted-tps-per-user",
                "tokens/s per user",
                reported.tps_per_user,
                recount.tps_per_user,
                tolerances.tps_per_user,
                point,
            ),
            _compare(
                "recounted-ttft-p90",
                "TTFT P90",
                reported.ttft_p90_ms,
                recount.ttft_p90_ms,
                tolerances.ttft_p90,
                point,
                " ms",
            ),
        )
        if f is not None
    ]
    if reported.n_samples_completed is not None:
        same = reported.n_samples_completed == recount.n_samples_completed
        findings.append(
            _finding(
                "recounted-sample-accounting",
                Severity.INFO if same else Severity.ERROR,
                f"completed samples: reported {reported.n_samples_completed}, in the events "
                f"{recount.n_samples_completed} (issued {recount.n_samples_issued}, failed "
                f"{recount.n_samples_failed})",
                point,
            )
        )
    if scanner.fake_first:
        findings.append(
            _finding(
                "fake-first-token",
                Severity.ERROR,
                f"{len(scanner.fake_first)} of {scanner.responses} responses start with a chunk of "
                f"only whitespace, punctuation or control characters, which makes TTFT look "
                f"shorter; samples: {_samples(scanner.fake_first)}",
                point,
                fix="TTFT must be measured to the first genuine token",
            )
        )
    if scanner.duplicated:
        findings.append(
            _finding(
                "duplicated-output",
                Severity.ERROR,
                f"{len(scanner.duplicated)} responses repeat the same text across content, "
                f"reasoning or tool calls, or are padded with whitespace or repetition; samples: "
                f"{_samples(scanner.duplicated)}",
                point,
                fix="Only the output the model produced counts; padding invalidates the point",
            )
        )
    if scanner.truncated:
        share = len(scanner.truncated) / max(scanner.responses, 1)
        findings.append(
            _finding(
                "truncated-responses",
                Severity.WARNING if share > 0.05 else Severity.INFO,
                f"{len(scanner.truncated)} of {scanner.responses} responses ({share:.1%}) ended at "
                f"the length limit; samples: {_samples(scanner.truncated)}",
                point,
            )
        )
    if summary.problems:
        findings.append(
            _finding(
                "events-malformed",
                Severity.WARNING,
                f"{len(summary.problems)} line(s) of events.jsonl could not be read and were "
                f"skipped: {'; '.join(summary.problems[:EVIDENCE_SAMPLES])}",
                point,
            )
        )
    return Analysis(recount, findings, scanner.requests)
