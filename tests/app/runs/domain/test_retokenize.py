"""Re-counting harness-written events: honest runs match, cheats are caught."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.checks.domain.findings import Finding, Severity
from app.runs.domain import retokenize
from app.runs.domain.retokenize import (
    PADDING_MIN_CHARS,
    PADDING_SHARE,
    Analysis,
    DeclaredDataset,
    Reported,
    analyse,
    compressed_share,
    duplication,
    is_duplicated,
    is_fake_first_chunk,
    official_window_requests,
    padded_share,
    repetition,
    whitespace_at_most,
)
from harness.load.dataset import Sample, dataset_keys, prompt_key
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point
from harness.metrics.events import Output
from harness.sim import SimConfig, sim_token_counter
from tests.support.rows import must
from tests.support.sim import RunningSim

POINT = "sys/llama3_1-8b/r4"


@pytest.fixture(scope="module")
def honest_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[type-arg]
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=0.2, output_tokens=40, output_spread=0.3)) as sim:
        out = tmp_path_factory.mktemp("run") / "run"
        samples = [Sample(i, prompt=f"lorem ipsum {i}") for i in range(30)]
        result = run_point(
            RunConfig(endpoint=sim.url, model="sim", concurrency=4, n_samples=60),
            samples,
            out,
            sim_token_counter(),
        )
    return out / "events.jsonl", result.summary.result


def reported_from(summary: dict, **overrides: float) -> Reported:  # type: ignore[type-arg]
    tpot = summary["tpot"]["percentiles"]["90.0"]
    values = {
        "total_output_tokens": int(summary["output_sequence_lengths"]["total"]),
        "system_tps": summary["tps"],
        "tpot_p90_ms": tpot / 1e6,
        "tps_per_user": 1e9 / tpot,
        "ttft_p90_ms": summary["ttft"]["percentiles"]["90.0"] / 1e6,
        "duration_ms": summary["duration_ns"] / 1e6,
        "n_samples_completed": summary["n_samples_completed"],
        "n_samples_issued": summary["n_samples_issued"],
    }
    values.update(overrides)
    return Reported(**values)


def by_rule(analysis: Analysis) -> dict[str, Finding]:
    return {f.rule: f for f in analysis.findings}


def test_an_honest_run_recounts_to_the_harness_numbers(honest_run) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    analysis = analyse(events, sim_token_counter(), reported_from(summary), POINT)
    recount = analysis.recount
    assert recount.total_output_tokens == summary["output_sequence_lengths"]["total"]
    assert recount.system_tps == pytest.approx(summary["tps"], rel=1e-12)
    assert recount.tpot_p90_ms == summary["tpot"]["percentiles"]["90.0"] / 1e6
    assert recount.ttft_p90_ms == summary["ttft"]["percentiles"]["90.0"] / 1e6
    assert all(f.severity == Severity.INFO for f in analysis.findings), [
        f.message for f in analysis.findings if f.severity != Severity.INFO
    ]


def test_inflated_reported_numbers_are_errors_with_both_values(honest_run) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    inflated = reported_from(
        summary,
        total_output_tokens=summary["output_sequence_lengths"]["total"] * 1.3,
        system_tps=summary["tps"] * 1.3,
    )
    findings = by_rule(analyse(events, sim_token_counter(), inflated, POINT))
    tokens = findings["recounted-output-tokens"]
    assert (
        tokens.severity == Severity.ERROR
        and "reported" in tokens.message
        and "-23" in tokens.message
    )
    assert findings["recounted-system-tps"].severity == Severity.ERROR
    assert findings["recounted-tpot-p90"].severity == Severity.INFO


def _rewrite(events: Path, target: Path, change) -> Path:  # type: ignore[no-untyped-def]
    lines = []
    n = 0
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event["event_type"] == "sample.complete" and event["data"] and n < 5:
            change(event)
            n += 1
        lines.append(json.dumps(event))
    target.write_text("\n".join(lines) + "\n")
    return target


def test_fake_first_tokens_and_padding_are_shown_with_their_evidence(honest_run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run

    def fake_first(event: dict) -> None:  # type: ignore[type-arg]
        output = event["data"][1]
        event["data"][1] = [" \n", output[0] + output[1]]

    findings = by_rule(
        analyse(
            _rewrite(events, tmp_path / "a.jsonl", fake_first),
            sim_token_counter(),
            reported_from(summary),
            POINT,
        )
    )
    fake = findings["fake-first-token"]
    # Evidence for a reviewer (§12), not a verdict: the share, and each chunk as sent.
    assert fake.severity == Severity.WARNING and fake.message.startswith("5 of 60 responses (8.3%)")
    assert fake.message.count(": ' \\n'") == 5

    def padded(event: dict) -> None:  # type: ignore[type-arg]
        event["data"][1][1] += " " * 600

    findings = by_rule(
        analyse(
            _rewrite(events, tmp_path / "b.jsonl", padded),
            sim_token_counter(),
            reported_from(summary),
            POINT,
        )
    )
    padding = findings["duplicated-output"]
    assert padding.severity == Severity.WARNING
    assert "characters are long runs of whitespace" in padding.message

    def truncated(event: dict) -> None:  # type: ignore[type-arg]
        event["finish_reason"] = "length"

    findings = by_rule(
        analyse(
            _rewrite(events, tmp_path / "c.jsonl", truncated),
            sim_token_counter(),
            reported_from(summary),
            POINT,
        )
    )
    assert findings["truncated-responses"].severity == Severity.WARNING  # 5 of 60 > 5 %


def test_malformed_lines_are_reported_and_skipped(honest_run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    broken = tmp_path / "broken.jsonl"
    lines = events.read_text().splitlines()
    lines.insert(3, '{"event_type": "sample.complete", "timestamp_ns": ')
    broken.write_text("\n".join(lines) + "\n{truncated")
    analysis = analyse(broken, sim_token_counter(), reported_from(summary), POINT)
    malformed = by_rule(analysis)["events-malformed"]
    assert "line 4" in malformed.message and f"line {len(lines) + 1}" in malformed.message
    assert analysis.recount.total_output_tokens == summary["output_sequence_lengths"]["total"]


def test_without_a_tokenizer_what_needs_none_is_still_checked(honest_run) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    analysis = analyse(events, None, reported_from(summary), POINT)
    rules = by_rule(analysis)
    missing = rules["tokenizer-missing"]
    assert missing.severity == "warning" and missing.message.startswith("Not re-counted")
    # TTFT and the request accounting need no tokenizer: compared, and they agree.
    assert rules["recounted-ttft-p90"].severity == "info"
    assert rules["recounted-sample-accounting"].severity == "info"
    assert "recounted-output-tokens" not in rules and "recounted-tpot-p90" not in rules
    recount = analysis.recount
    assert recount.total_output_tokens is None and recount.tpot_p90_ms is None
    assert recount.n_samples_issued == summary["n_samples_issued"]
    assert recount.events_duration_ms == pytest.approx(summary["duration_ns"] / 1e6)
    assert analysis.requests is None  # no goodput from uncounted tokens
    assert analysis.timings is not None and len(analysis.timings.issued) == 60
    # An inflated TTFT is caught without a tokenizer.
    slow = analyse(
        events,
        None,
        reported_from(summary, ttft_p90_ms=must(reported_from(summary).ttft_p90_ms) * 0.5),
        POINT,
    )
    assert by_rule(slow)["recounted-ttft-p90"].severity == "error"


@pytest.mark.parametrize(
    ("text", "fake"),
    [
        (" ", True),
        ("\n\t", True),
        ("\u200b", True),
        ("\u200b\r", True),
        # Ordinary first tokens of real answers: markdown, JSON, code, lists, ellipses.
        ("...", False),
        ("**", False),
        ("{", False),
        ("```", False),
        ("-", False),
        ("1.", False),
        ("Hi", False),
        (" a", False),
        ("", False),
    ],
)
def test_fake_first_chunks(text: str, fake: bool) -> None:
    assert is_fake_first_chunk(text) is fake


def test_duplication_and_padding_shapes() -> None:
    text = "The answer is forty-two, as computed."
    assert is_duplicated(Output(text, [text[:5], text[5:]]))
    call = [{"function": {"name": "f", "arguments": text}}]
    assert is_duplicated(Output(text, None, call))
    assert is_duplicated(Output(["ok", " " + " " * 400]))
    assert not is_duplicated(Output(["A genuine", " answer of ordinary length and shape."]))
    # A model's own loop is output, not padding: listed as repetitive, not duplicated.
    loop = Output(["ok", " " + "na" * 200])
    assert not is_duplicated(loop) and repetition(loop) is not None


# Text with every kind of whitespace, wide ones included, and what it sits between.
_SPACES = st.sampled_from([" ", "\t", "\n", "\x1c", "\u00a0", "\u2003", "\u3000", "\u0085"])
_TEXT = st.lists(
    st.one_of(_SPACES.map(lambda s: s * 40), _SPACES, st.text(max_size=8)), max_size=60
).map("".join)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_TEXT)
def test_counting_whitespace_bounds_the_padding_and_never_changes_the_verdict(text: str) -> None:
    exact = sum(ch.isspace() for ch in text)
    bound = whitespace_at_most(text)
    assert bound >= exact and (bound == exact or not text.isascii())
    # The count only spares the pattern's scan: the verdict is the pattern's own.
    scanned = len(text) >= PADDING_MIN_CHARS and padded_share(text) > PADDING_SHARE
    assert (duplication(Output(text)) is not None) == scanned


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=40).map(lambda parts: "".join(parts) * 3))
def test_the_compressed_share_is_zlibs_own(text: str) -> None:
    data = text.encode("utf-8")
    assert compressed_share(text) == (len(zlib.compress(data, 1)) / len(data) if data else 1.0)


ORDINARY_ANSWERS = [
    # Markdown that opens with bold, a JSON answer, a fenced code block, deep YAML.
    ["**", "Answer:** the capital of France is Paris, which has been the seat of " * 3],
    ["{", '"name": "lookup", "arguments": {"city": "Paris", "units": "metric"}, "ok": true}'],
    ["```", "python\ndef add(a, b):\n    return a + b\n\nprint(add(2, 3))\n```\n" * 3],
    ["server", ":\n  http:\n    routes:\n      - path: /v1\n        handlers:\n"
     "          - name: chat\n            timeout: 30\n            retries: 2\n" * 4],
    ["1", ". Preheat the oven.\n2. Mix the flour and the butter.\n3. Bake for 20 minutes.\n"],
]  # fmt: skip


@pytest.mark.parametrize("chunks", ORDINARY_ANSWERS, ids=["bold", "json", "fence", "yaml", "list"])
def test_ordinary_answers_are_not_flagged(chunks: list[str]) -> None:
    output = Output(chunks)
    assert not is_fake_first_chunk(chunks[0])
    assert duplication(output) is None and repetition(output) is None


def test_tpot_p90_is_over_the_valid_samples_and_the_official_one_is_kept(  # type: ignore[no-untyped-def]
    honest_run, tmp_path
) -> None:
    events, summary = honest_run
    firsts: dict[str, int] = {}
    out = []
    completes = 0
    for line in events.read_text().splitlines():
        event = json.loads(line)
        uuid = event["sample_uuid"]
        if event["event_type"] == "sample.recv_first":
            firsts[uuid] = event["timestamp_ns"]
        elif event["event_type"] == "sample.complete" and uuid in firsts:
            completes += 1
            if completes % 4 == 0:
                # Every fourth response ends the instant its first chunk came: a TPOT of 0.
                event["timestamp_ns"] = firsts[uuid]
        out.append(json.dumps(event))
    doctored = tmp_path / "zero.jsonl"
    doctored.write_text("\n".join(out) + "\n")
    analysis = analyse(doctored, sim_token_counter(), reported_from(summary), POINT)
    r = analysis.recount
    assert r.tpot_samples_excluded > 0
    assert r.tpot_p90_ms_official is not None and r.tpot_p90_ms is not None
    assert r.tpot_p90_ms_official <= r.tpot_p90_ms  # zeros pull the client's P90 down
    assert r.tps_per_user == pytest.approx(1000 / r.tpot_p90_ms)
    note = by_rule(analysis)["tpot-valid-samples"]
    assert note.severity == Severity.INFO and "the official client keeps them" in note.message
    honest = analyse(events, sim_token_counter(), reported_from(summary), POINT).recount
    assert honest.tpot_samples_excluded == 0 and honest.tpot_p90_ms == honest.tpot_p90_ms_official


def test_progress_is_reported_and_can_cancel_midway(honest_run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.runs.domain.retokenize import Cancelled

    events, summary = honest_run
    big = tmp_path / "big.jsonl"
    body = events.read_text()
    big.write_text(body * (20_000 // body.count("\n") + 1))  # > 20,000 lines
    seen: list[tuple[int, int, int]] = []

    def progress(lines: int, read: int, tokens: int) -> None:
        seen.append((lines, read, tokens))
        raise Cancelled

    with pytest.raises(Cancelled):
        analyse(big, sim_token_counter(), reported_from(summary), POINT, progress=progress)
    assert seen and seen[0][0] == 10_000 and seen[0][1] > 0


def test_the_recount_keeps_every_request_for_goodput(honest_run) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    analysis = analyse(events, sim_token_counter(), reported_from(summary), POINT)
    log = analysis.requests
    assert log is not None and len(log) == summary["n_samples_completed"]
    everything = log.goodput(None, None, summary["duration_ns"] / 1e9)
    assert everything.tokens_met == analysis.recount.total_output_tokens
    assert everything.goodput_tps == pytest.approx(summary["tps"], rel=1e-6)
    # Each request's own TTFT: P90 of them is the summary's TTFT P90 (as nearest ranks go).
    ttfts = sorted(log.ttft_ms)
    p90 = summary["ttft"]["percentiles"]["90.0"] / 1e6
    assert ttfts[0] <= p90 <= ttfts[-1]
    assert sum(t <= p90 for t in ttfts) / len(ttfts) >= 0.85


def test_the_server_s_own_count_is_set_beside_the_re_count(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with RunningSim(SimConfig(ttft_ms=1, tpot_ms=0.1, output_tokens=30, output_spread=0.3)) as sim:
        samples = [Sample(i, prompt=f"lorem ipsum {i}") for i in range(10)]
        config = RunConfig(
            endpoint=sim.url, model="sim", concurrency=2, n_samples=10, request_usage=True
        )
        run = run_point(config, samples, tmp_path / "run", sim_token_counter())
    events = tmp_path / "run" / "events.jsonl"
    # One response's count doctored: the server says more than the text holds.
    lines = events.read_text().splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["event_type"] == "sample.complete":
            event["usage"]["completion_tokens"] += 100
            lines[i] = json.dumps(event)
            break
    events.write_text("\n".join(lines) + "\n")
    analysis = analyse(events, sim_token_counter(), reported_from(run.summary.result), POINT)
    r = analysis.recount
    assert r.server_usage_responses == 10
    assert r.recounted_tokens_with_usage == r.total_output_tokens
    assert r.server_output_tokens == must(r.total_output_tokens) + 100
    note = by_rule(analysis)["server-usage"]
    assert note.severity == Severity.INFO
    assert f"reported {r.server_output_tokens:,} output tokens" in note.message
    assert "for 10 of 10 responses" in note.message


def test_the_prompts_are_tied_to_the_declared_dataset(honest_run) -> None:  # type: ignore[no-untyped-def]
    events, summary = honest_run
    samples = [Sample(i, prompt=f"lorem ipsum {i}") for i in range(30)]
    declared = DeclaredDataset("sim_prompts", dataset_keys(samples))
    analysis = analyse(events, sim_token_counter(), reported_from(summary), POINT, dataset=declared)
    note = by_rule(analysis)["events-dataset"]
    assert note.severity == Severity.INFO
    assert note.message.startswith("All 60 tracked prompts are samples of dataset 'sim_prompts'")
    # A copy without some of the prompts the run sent: those requests name themselves.
    partial = DeclaredDataset("sim_prompts", dataset_keys(samples[:20]))
    analysis = analyse(events, sim_token_counter(), reported_from(summary), POINT, dataset=partial)
    error = by_rule(analysis)["events-dataset"]
    assert error.severity == Severity.ERROR and error.fix
    assert error.message.startswith("20 of 60 tracked prompts are not samples of dataset")
    # Messages count as the same prompt whatever their key order.
    chat = [Sample(0, messages=[{"role": "user", "content": "hi"}])]
    assert prompt_key(None, [{"content": "hi", "role": "user"}]) in dataset_keys(chat)


def test_goodput_covers_the_official_window_and_counts_the_lost_as_misses(  # type: ignore[no-untyped-def]
    honest_run, tmp_path
) -> None:
    events, summary = honest_run
    # Five requests lose their completion: issued, never completed.
    lines = events.read_text().splitlines(keepends=True)
    lost = {
        json.loads(line)["sample_uuid"]
        for line in lines
        if json.loads(line)["event_type"] == "sample.complete"
    }
    lost = set(sorted(lost)[:5])
    cut = tmp_path / "events.jsonl"
    cut.write_text(
        "".join(
            line
            for line in lines
            if not (
                json.loads(line)["event_type"] == "sample.complete"
                and json.loads(line).get("sample_uuid") in lost
            )
        )
    )
    analysis = analyse(cut, sim_token_counter(), reported_from(summary), POINT)
    assert analysis.requests is not None and analysis.timings is not None
    assert len(analysis.requests) == summary["n_samples_issued"]  # the lost ones included
    assert len(analysis.timings.unfinished) == 5
    whole = analysis.requests.goodput(None, None, 1.0)
    assert whole.met == whole.requests - 5  # every lost request missed
    # Not windowable: every tracked request, over the reported duration.
    log, window, duration = official_window_requests(analysis, None, 1234.0)
    assert (window, duration, len(log)) == ("total", 1234.0, len(analysis.requests))
    # Windowable: the window's requests only, over their issue-time span.
    doc = {
        "status": "windowable",
        "window": {"super_pass_start": 2, "super_pass_end": 5, "super_pass_size": 6},
    }
    log, window, duration = official_window_requests(analysis, doc, 1234.0)
    t = analysis.timings
    issued = sorted([*t.issued.tolist(), *t.unfinished.tolist()])[12:36]
    assert window == "steady_state" and len(log) == 24
    assert duration == pytest.approx((issued[-1] - issued[0]) / 1e6)


def test_the_wide_whitespace_leads_are_those_of_every_wide_whitespace_character() -> None:
    found = {chr(c).encode()[:1] for c in range(128, 0x110000) if chr(c).isspace()}
    assert set(retokenize._WIDE_WHITESPACE_LEADS) == found
