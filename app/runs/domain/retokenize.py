"""Re-counting a submitted run with the reference tokenizer (rules §1.3, §4.1).

The recount is the harness's own summary (one implementation of every definition), run on
the submitted ``events.jsonl`` with the official client's arithmetic (failed requests
count as completions, as they did when the submitted numbers were made), except where
the rules and the official client part: TPOT P90 is taken over the *valid* samples only
(rules §1.1: positive and finite), the client's own P90 over all of them kept beside it.
Around it, each response is looked at for what the official tooling never checks, as
evidence for a reviewer's judgement (rules §12), never as a verdict: a first chunk with
nothing visible in it (whitespace, zero-width or control characters only), the same text
repeated across content, reasoning and tool calls or padded with long runs of
whitespace, output that is mostly repetition (a model's own loop is real output, but a
reviewer should see it), and truncation.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.runs.domain.goodput import RequestLog, in_window, request_of
from harness.analysis.steady_state import window_issue_span
from harness.analysis.timeseries import run_time_series
from harness.load.dataset import prompt_key
from harness.metrics.definitions import percentile_lower
from harness.metrics.events import Output
from harness.metrics.summary import Completed, Counts, Summary, SummaryOptions, summarize
from harness.metrics.timings import RequestTimings, Timings
from harness.metrics.tokens import TokenCounter

EVIDENCE_SAMPLES = 10
# A long response is padded when runs of at least PADDING_RUN whitespace characters make
# up more than PADDING_SHARE of it (indentation, even deep YAML, is shorter runs); one that
# compresses to less than REPETITION_RATIO of its size is mostly repetition (ordinary text
# compresses to about a third; "na na na …" to a few percent).
PADDING_SHARE = 0.5
PADDING_MIN_CHARS = 200
PADDING_RUN = 32
REPETITION_RATIO = 0.08
_PADDING = re.compile(rf"\s{{{PADDING_RUN},}}")
_LOOKAHEAD = 262  # zlib reaches back its window less this (MIN_LOOKAHEAD)
# What counts whitespace without decoding (``\s`` and ``str.isspace`` agree): the ASCII
# whitespace bytes, and the UTF-8 lead bytes of every other whitespace character.
_ASCII_WHITESPACE = bytes(c for c in range(128) if chr(c).isspace())
# Written out: finding them walks every code point, a tenth of a second of every start of
# every process that imports this (tests/app/runs/domain/test_retokenize.py walks it).
_WIDE_WHITESPACE_LEADS = (b"\xc2", b"\xe1", b"\xe2", b"\xe3")


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
    # The official client's TPOT P90, over every sample (non-positive ones included), and
    # how many samples the rules' P90 (tpot_p90_ms) leaves out.
    tpot_p90_ms_official: float | None = None
    tpot_samples_excluded: int = 0
    # The server's own counts (usage.completion_tokens) where the events carry them, and
    # the re-count of the same responses.
    server_usage_responses: int = 0
    server_output_tokens: int | None = None
    recounted_tokens_with_usage: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Analysis:
    recount: Recount
    findings: list[Finding]
    # Every tracked request's TTFT, rate and tokens, for goodput (None: nothing counted).
    requests: RequestLog | None = None
    # The run over time (harness/analysis/timeseries.py; None: no tracked request).
    timeseries: dict[str, Any] | None = None
    # Every tracked request's timings, for the steady-state analysis (harness/metrics/timings.py).
    timings: Timings | None = None
    # Each request of ``requests``' issue time (ns), to take the official window's ones.
    request_issued: Sequence[int] = ()


class Cancelled(Exception):
    pass


def _finding(
    rule: str, severity: Severity, message: str, point: str, fix: str | None = None
) -> Finding:
    return portal_rule(rule).finding(severity, message, point=point, fix=fix)


def is_fake_first_chunk(text: str) -> bool:
    """Non-empty, with nothing visible: whitespace, zero-width and control characters only.
    Punctuation and symbols are ordinary first tokens (``**``, ``{``, a code fence)."""
    return bool(text) and all(
        ch.isspace() or unicodedata.category(ch)[0] in ("Z", "C") for ch in text
    )


def first_chunk(output: Output) -> str | None:
    """The first chunk a streamed response sent: its first reasoning chunk, else its first
    content chunk."""
    if output.reasoning:
        return output.reasoning[0] if isinstance(output.reasoning, list) else output.reasoning
    if isinstance(output.output, list) and output.output:
        return str(output.output[0])
    return None


def duplication(output: Output) -> str | None:
    """How a response repeats itself across fields or is padded out, or None."""
    content = output.content.strip()
    reasoning = output.reasoning_text.strip()
    if len(content) >= 20 and content == reasoning:
        return "the content repeats the reasoning"
    for call in output.tool_calls or []:
        arguments = str((call.get("function") or {}).get("arguments") or "").strip()
        if len(arguments) >= 20 and arguments in (content, reasoning):
            return "tool-call arguments repeat the " + (
                "content" if arguments == content else "reasoning"
            )
    text = output.content + output.reasoning_text  # unstripped: trailing padding counts
    # Runs of whitespace are never more of a text than its whitespace is: ordinary text
    # (a sixth whitespace) is cleared by counting, without the pattern's scan.
    if len(text) >= PADDING_MIN_CHARS and whitespace_at_most(text) > PADDING_SHARE * len(text):
        share = padded_share(text)
        if share > PADDING_SHARE:
            return f"{share:.0%} of its {len(text):,} characters are long runs of whitespace"
    return None


def padded_share(text: str) -> float:
    """The share of *text* in runs of at least PADDING_RUN whitespace characters."""
    return sum(len(run) for run in _PADDING.findall(text)) / len(text) if text else 0.0


def whitespace_at_most(text: str) -> int:
    """At least as many as *text*'s whitespace characters; exactly as many in ASCII."""
    data = text.encode("utf-8", "surrogatepass")
    count = len(data) - len(data.translate(None, _ASCII_WHITESPACE))
    if len(data) != len(text):  # beyond ASCII: each wide space starts with one of these
        count += sum(data.count(lead) for lead in _WIDE_WHITESPACE_LEADS)
    return count


def compressed_share(text: str) -> float:
    """Compressed size over size: about a third for ordinary text, a few percent for a
    loop."""
    data = text.encode("utf-8")
    if not data:
        return 1.0
    # zlib.compress(data, 1) byte for byte, with a window just large enough for the text
    # (every repeat in reach): the default 32 KB window's set-up is most of the work on
    # a response of a few KB.
    window = min(15, max(9, (len(data) + _LOOKAHEAD).bit_length()))
    squeeze = zlib.compressobj(1, zlib.DEFLATED, window)
    return (len(squeeze.compress(data)) + len(squeeze.flush())) / len(data)


def is_duplicated(output: Output) -> bool:
    return duplication(output) is not None


def repetition(output: Output) -> float | None:
    """The compressed share of a long response that is mostly repetition, or None."""
    text = output.content + output.reasoning_text
    if len(text) < PADDING_MIN_CHARS:
        return None
    ratio = compressed_share(text)
    return ratio if ratio < REPETITION_RATIO else None


def valid_tpot_p90_ms(samples: list[float]) -> tuple[float | None, int]:
    """TPOT P90 over the valid samples (rules §1.1: positive and finite), in ms, and how
    many samples were left out."""
    valid = sorted(v for v in samples if v > 0 and math.isfinite(v))
    excluded = len(samples) - len(valid)
    return (percentile_lower(valid, 90.0) / 1e6 if valid else None), excluded


@dataclass(frozen=True)
class DeclaredDataset:
    """The dataset a point declares (point.yaml ``dataset``) and its samples' prompts."""

    name: str
    keys: frozenset[str]


class _Scanner:
    def __init__(self, dataset: DeclaredDataset | None = None) -> None:
        self.dataset = dataset
        self.prompts_checked = 0
        self.prompts_foreign: list[str] = []
        self.fake_first: list[str] = []
        self.fake_examples: list[str] = []
        self.duplicated: list[str] = []
        self.duplicated_why: list[str] = []
        self.repetitive: list[str] = []
        self.truncated: list[str] = []
        self.tpot_ns: list[float] = []
        self.timeline = RequestTimings()
        self.responses = 0
        self.tokens = 0
        self.requests = RequestLog()
        self.request_issued = array("q")  # each logged request's issue time, ns
        self.with_usage = 0
        self.server_tokens = 0
        self.recounted_with_usage = 0

    def __call__(self, completed: Completed) -> None:
        self.tokens += completed.output_tokens
        if self.dataset is not None and completed.prompt is not None:
            key = prompt_key(completed.prompt.text, completed.prompt.messages)
            if key is not None:
                self.prompts_checked += 1
                if key not in self.dataset.keys:
                    self.prompts_foreign.append(completed.sample_uuid)
        self.timeline(completed)
        self.request_issued.append(-1 if completed.issued_ns is None else completed.issued_ns)
        self.requests.add(
            request_of(
                completed.ttft_ns,
                completed.latency_ns,
                completed.output_tokens,
                completed.tokens_after_first,
                completed.failed,
            )
        )
        after = completed.tokens_after_first
        if completed.ttft_ns is not None and completed.latency_ns is not None and after:
            # The summary's own sample: (complete − first chunk) / tokens after it.
            self.tpot_ns.append((completed.latency_ns - completed.ttft_ns) / after)
        if completed.failed:
            return
        self.responses += 1
        if completed.server_tokens is not None:
            self.with_usage += 1
            self.server_tokens += completed.server_tokens
            self.recounted_with_usage += completed.output_tokens
        first = first_chunk(completed.output)
        if first is not None and is_fake_first_chunk(first):
            self.fake_first.append(completed.sample_uuid)
            if len(self.fake_examples) < EVIDENCE_SAMPLES:
                self.fake_examples.append(f"{completed.sample_uuid}: {first!r}")
        why = duplication(completed.output)
        if why is not None:
            self.duplicated.append(completed.sample_uuid)
            if len(self.duplicated_why) < EVIDENCE_SAMPLES:
                self.duplicated_why.append(f"{completed.sample_uuid}: {why}")
        elif repetition(completed.output) is not None:
            self.repetitive.append(completed.sample_uuid)
        if completed.finish_reason == "length":
            self.truncated.append(completed.sample_uuid)


def _dataset_finding(scanner: _Scanner, dataset: DeclaredDataset, point: str) -> Finding:
    foreign, checked = scanner.prompts_foreign, scanner.prompts_checked
    if not checked:
        return _finding(
            "events-dataset",
            Severity.INFO,
            f"No tracked request records its prompt, so the events cannot be tied to "
            f"dataset {dataset.name!r}",
            point,
        )
    if not foreign:
        return _finding(
            "events-dataset",
            Severity.INFO,
            f"All {checked:,} tracked prompts are samples of dataset {dataset.name!r} "
            f"({len(dataset.keys):,} distinct prompts in the portal's copy)",
            point,
        )
    return _finding(
        "events-dataset",
        Severity.ERROR,
        f"{len(foreign):,} of {checked:,} tracked prompts are not samples of dataset "
        f"{dataset.name!r}, which the point declares: {_samples(foreign)}",
        point,
        fix="Run the point on the declared dataset (performance samples only, rules §6), or "
        "declare the dataset it ran on",
    )


def _ms(value: float | None) -> str:
    return "none" if value is None else f"{value:,.3f} ms"


def _more(count: int) -> str:
    return f" (+{count - EVIDENCE_SAMPLES} more)" if count > EVIDENCE_SAMPLES else ""


def _samples(ids: list[str]) -> str:
    return ", ".join(ids[:EVIDENCE_SAMPLES]) + _more(len(ids))


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
    counter: TokenCounter | Counts | None,
    reported: Reported,
    point: str,
    *,
    tolerances: Tolerances = Tolerances(),
    load_pattern: str = "concurrency",
    progress: Callable[[int, int, int], None] | None = None,
    tokenizer_problem: str | None = None,
    dataset: DeclaredDataset | None = None,
) -> Analysis:
    """Re-count one point's events, with a tokenizer or counts its parts made before;
    ``progress(lines, bytes, tokens)`` may raise :class:`Cancelled`. Without either, the
    tokens are not re-counted (a warning says so), and everything that needs no tokenizer
    is still checked: TTFT, the request counts, the tracked window, the prompts and the
    responses' shapes."""
    scanner = _Scanner(dataset)

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
    ttft = (r.get("ttft") or {}).get("percentiles", {}).get("90.0")
    counted = {
        "ttft_p90_ms": ttft / 1e6 if ttft is not None else None,
        "n_samples_issued": r["n_samples_issued"],
        "n_samples_completed": r["n_samples_completed"],
        "n_samples_failed": r["n_samples_failed"],
        "events_duration_ms": (r["duration_ns"] or 0) / 1e6 or None,
    }
    if counter is None:
        recount = Recount(**counted)
        findings = _not_recounted(recount, reported, tolerances, point, tokenizer_problem)
        findings += _request_findings(scanner, summary, reported, recount, dataset, point)
        # No goodput from requests whose tokens were not counted.
        return _analysis(recount, findings, scanner, requests=False)
    recount = _recounted(r, scanner, reported, counted)
    findings = _recount_findings(recount, reported, tolerances, scanner, point)
    findings += _request_findings(scanner, summary, reported, recount, dataset, point)
    return _analysis(recount, findings, scanner)


def _not_recounted(
    recount: Recount,
    reported: Reported,
    tolerances: Tolerances,
    point: str,
    tokenizer_problem: str | None,
) -> list[Finding]:
    """Without a tokenizer: a warning that the tokens were not checked, and the TTFT,
    which needs none."""
    reason = f" ({tokenizer_problem})" if tokenizer_problem else ""
    findings = [
        _finding(
            "tokenizer-missing",
            Severity.WARNING,  # the tokens were not checked: not a pass
            "Not re-counted: no reference tokenizer is configured for this benchmark "
            f"model{reason}, so output tokens, TPOT and the per-user rate could not be "
            "counted; what needs no tokenizer was checked (TTFT, the request counts, the "
            "tracked window, the prompts and the responses)",
            point,
            fix="An operator adds the model to the tokenizer registry "
            "(ENDPOINTS_PORTAL_TOKENIZER_REGISTRY)",
        )
    ]
    compare = _compare(
        "recounted-ttft-p90", "TTFT P90", reported.ttft_p90_ms, recount.ttft_p90_ms,
        tolerances.ttft_p90, point, " ms",
    )  # fmt: skip
    return findings + ([compare] if compare is not None else [])


def _recounted(
    r: dict[str, Any], scanner: _Scanner, reported: Reported, counted: dict[str, Any]
) -> Recount:
    """The point's figures from the re-counted summary *r* and the scanned responses."""
    osl = r.get("output_sequence_lengths") or {}
    official_tpot = (r.get("tpot") or {}).get("percentiles", {}).get("90.0")
    rules_tpot_ms, excluded = valid_tpot_p90_ms(scanner.tpot_ns)
    total = int(osl["total"]) if osl else 0
    return Recount(
        total_output_tokens=total,
        # Over the point's own window, so only the token count can make a difference.
        system_tps=total / (reported.duration_ms / 1000) if reported.duration_ms else r.get("tps"),
        tpot_p90_ms=rules_tpot_ms,
        tps_per_user=1000 / rules_tpot_ms if rules_tpot_ms else None,
        osl={k: osl.get(k) for k in ("min", "max", "median", "avg")} if osl else {},
        tpot_p90_ms_official=official_tpot / 1e6 if official_tpot is not None else None,
        tpot_samples_excluded=excluded,
        server_usage_responses=scanner.with_usage,
        server_output_tokens=scanner.server_tokens if scanner.with_usage else None,
        recounted_tokens_with_usage=scanner.recounted_with_usage if scanner.with_usage else None,
        **counted,
    )


# What a re-count compares with the point's reported figures: rule, name, field, unit.
COMPARED = (
    ("recounted-output-tokens", "output tokens", "total_output_tokens", "output_tokens", ""),
    ("recounted-system-tps", "system tokens/s", "system_tps", "system_tps", ""),
    ("recounted-tpot-p90", "TPOT P90", "tpot_p90_ms", "tpot_p90", " ms"),
    ("recounted-tps-per-user", "tokens/s per user", "tps_per_user", "tps_per_user", ""),
    ("recounted-ttft-p90", "TTFT P90", "ttft_p90_ms", "ttft_p90", " ms"),
)


def _recount_findings(
    recount: Recount, reported: Reported, tolerances: Tolerances, scanner: _Scanner, point: str
) -> list[Finding]:
    """Each re-counted figure against the reported one, the TPOT samples the rules leave
    out, and the server's own token count beside the reference tokenizer's."""
    findings = [
        f
        for rule, name, figure, tolerance, unit in COMPARED
        if (
            f := _compare(
                rule, name, getattr(reported, figure), getattr(recount, figure),
                getattr(tolerances, tolerance), point, unit,
            )
        ) is not None
    ]  # fmt: skip
    excluded = recount.tpot_samples_excluded
    if excluded:
        official = recount.tpot_p90_ms_official
        findings.append(
            _finding(
                "tpot-valid-samples",
                Severity.INFO,
                f"{excluded} of {len(scanner.tpot_ns)} TPOT samples are not positive and finite "
                f"and are left out of TPOT P90 (rules §1.1): {_ms(recount.tpot_p90_ms)} over "
                f"the valid ones; the official client keeps them: {_ms(official)}",
                point,
            )
        )
    if scanner.with_usage:
        server, ours = scanner.server_tokens, scanner.recounted_with_usage
        diff = (ours - server) / server if server else 0.0
        findings.append(
            _finding(
                "server-usage",
                Severity.INFO,
                f"The server reported {server:,} output tokens (usage.completion_tokens) for "
                f"{scanner.with_usage:,} of {scanner.responses:,} responses; the reference "
                f"tokenizer counts {ours:,} for the same responses ({diff:+.2%}). The rules "
                "count with the reference tokenizer (§1.3); the server's count is evidence",
                point,
            )
        )
    return findings


def _analysis(
    recount: Recount, findings: list[Finding], scanner: _Scanner, *, requests: bool = True
) -> Analysis:
    timings = scanner.timeline.timings()
    return Analysis(
        recount,
        findings,
        scanner.requests if requests else None,
        run_time_series(timings),
        timings,
        scanner.request_issued,
    )


def _response_findings(scanner: _Scanner, point: str) -> list[Finding]:
    """What the responses' shapes show: a fake first chunk, duplicated or padded text,
    repetition, answers cut at the length limit."""
    findings: list[Finding] = []
    if scanner.fake_first:
        findings.append(
            _finding(
                "fake-first-token",
                Severity.WARNING,
                f"{len(scanner.fake_first)} of {scanner.responses} responses "
                f"({len(scanner.fake_first) / max(scanner.responses, 1):.1%}) start with a "
                f"chunk with nothing visible in it, which starts the TTFT clock before the first "
                f"real token; a reviewer judges whether the endpoint sent it on purpose (§12). "
                f"First chunks: {'; '.join(scanner.fake_examples)}"
                + _more(len(scanner.fake_first)),
                point,
                fix="TTFT must be measured to the first genuine token",
            )
        )
    if scanner.duplicated:
        findings.append(
            _finding(
                "duplicated-output",
                Severity.WARNING,
                f"{len(scanner.duplicated)} of {scanner.responses} responses repeat the same "
                f"text across content, reasoning or tool calls, or are padded with whitespace; "
                f"a reviewer judges whether they inflate the count (§1.3, §12). "
                f"{'; '.join(scanner.duplicated_why)}" + _more(len(scanner.duplicated)),
                point,
                fix="Only the output the model produced counts; padding invalidates the point",
            )
        )
    if scanner.repetitive:
        findings.append(
            _finding(
                "repetitive-output",
                Severity.INFO,
                f"{len(scanner.repetitive)} of {scanner.responses} responses are mostly "
                f"repetition (they compress to under {REPETITION_RATIO:.0%} of their size): a "
                f"model's own loop counts as output, padding would not; samples: "
                f"{_samples(scanner.repetitive)}",
                point,
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
    return findings


def _request_findings(
    scanner: _Scanner,
    summary: Summary,
    reported: Reported,
    recount: Recount,
    dataset: DeclaredDataset | None,
    point: str,
) -> list[Finding]:
    """What the events show with or without a tokenizer: the sample accounting, the
    prompts against the declared dataset, and the responses' shapes."""
    findings: list[Finding] = []
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
    if dataset is not None:
        findings.append(_dataset_finding(scanner, dataset, point))
    findings += _response_findings(scanner, point)
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
    return findings


def official_window_requests(
    analysis: Analysis, steady_state: dict[str, Any] | None, reported_duration_ms: float | None
) -> tuple[RequestLog, str, float | None]:
    """The requests goodput is counted over, which window that is, and its duration in ms:
    the steady-state window's requests over its issue-time span when the point is
    windowable (rules §2.3: its official numbers are the window's), else every tracked
    request over the point's reported duration (``total``)."""
    assert analysis.requests is not None
    window = (steady_state or {}).get("window")
    windowable = (steady_state or {}).get("status") == "windowable"
    if windowable and window and analysis.timings is not None:
        first, last = window_issue_span(analysis.timings, window)
        kept = in_window(analysis.requests, analysis.request_issued, first, last)
        return kept, "steady_state", (last - first) / 1e6
    return analysis.requests, "total", reported_duration_ms
