"""Precision of the re-count's output scans on real model outputs (issue 15 item 5).

The re-count looks at every response for a first chunk with nothing visible in it
(``fake-first-token``), text repeated across fields or padded with whitespace
(``duplicated-output``) and output that is mostly repetition (``repetitive-output``).
They are evidence for a reviewer, so on honest output none of them may fire.

Input: a JSONL file of real outputs in the official client's reference format, one object
a line with ``ref_output`` (the model's whole output: its reasoning, ``</think>``, then its
answer) and optionally ``dataset`` and ``tok_ref_output_len`` (the model's own token
count). The DeepSeek-R1 reference outputs of mlcommons/endpoints
(``tests/datasets/ds_samples.jsonl``) are such a file; it is not copied into this
repository, so give its path.

Each output is streamed as a server with a reasoning parser sends it: the text before
``</think>`` as reasoning, the rest as content, one reference token a chunk. The events a
client records for that stream go through the portal's whole re-count
(``app.runs.domain.retokenize.analyse``), and the script prints, for each output, what
each scan looked at and how far it is from its threshold, then every finding the re-count
made. It exits 1 when any scan flagged an output.

    .venv/bin/python bench/scan_precision.py ds_samples.jsonl [--tokenizer deepseek-r1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokenizers import Tokenizer  # noqa: E402

from app.runs.domain.retokenize import (  # noqa: E402
    PADDING_SHARE,
    REPETITION_RATIO,
    Reported,
    analyse,
    compressed_share,
    duplication,
    first_chunk,
    is_fake_first_chunk,
    padded_share,
)
from harness.metrics import events as ev  # noqa: E402
from harness.metrics.events import EventWriter, Output  # noqa: E402
from harness.metrics.tokens import load_counter  # noqa: E402

SCANS = ("fake-first-token", "duplicated-output", "repetitive-output")
END_OF_REASONING = "</think>"
TTFT_NS = 200_000_000
TPOT_NS = 20_000_000


def stream_chunks(tokenizer: Tokenizer, text: str) -> list[str]:
    """*text* as a server streams it: one token a chunk, each chunk the text that token
    adds once decoded (a token ending inside a UTF-8 character waits for the next)."""
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    chunks: list[str] = []
    sent = ""
    for end in range(1, len(ids) + 1):
        decoded = tokenizer.decode(ids[:end])
        if decoded.endswith("\ufffd") and end < len(ids):
            continue
        chunks.append(decoded[len(sent) :])
        sent = decoded
    assert sent == text, "the chunks do not give the text back"
    return chunks


def streamed_output(tokenizer: Tokenizer, ref_output: str) -> tuple[Output, int]:
    """The response as the client records it ([first chunk, rest]) and its chunk count."""
    reasoning, found, content = ref_output.partition(END_OF_REASONING)
    if not found:  # no reasoning: the whole output is content
        reasoning, content = "", ref_output
    thinking = stream_chunks(tokenizer, reasoning)
    answer = stream_chunks(tokenizer, content)
    if thinking:  # the first chunk is the first reasoning chunk; all content comes after
        output = Output(output=content, reasoning=[thinking[0], "".join(thinking[1:])])
    else:
        output = Output(output=["".join(answer[:1]), "".join(answer[1:])])
    return output, len(thinking) + len(answer)


def write_events(path: Path, outputs: list[tuple[Output, int]]) -> float:
    """One request after the other, as a client records them; the run's duration in ms."""
    writer = EventWriter(path)
    ts = 1_000_000_000
    writer.write(ev.SESSION_STARTED, ts)
    writer.write(ev.START_TRACKING, ts)
    start = ts
    for i, (output, chunks) in enumerate(outputs):
        uuid = f"{i:032x}"
        ts += 1
        writer.write(ev.ISSUED, ts, uuid)
        ts += TTFT_NS
        writer.write(ev.RECV_FIRST, ts, uuid)
        ts += TPOT_NS * max(chunks - 1, 1)
        writer.write(ev.COMPLETE, ts, uuid, output.to_data(), finish_reason="stop")
    writer.write(ev.STOP_TRACKING, ts + 1)
    writer.write(ev.SESSION_ENDED, ts + 2)
    writer.close()
    return (ts - start) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path, help="JSONL of real outputs (ref_output)")
    parser.add_argument("--tokenizer", default="deepseek-r1", help="registry name or path")
    args = parser.parse_args()

    counter = load_counter(args.tokenizer)
    rows = [json.loads(line) for line in args.samples.read_text("utf-8").splitlines() if line]
    rows = [row for row in rows if isinstance(row.get("ref_output"), str) and row["ref_output"]]
    if not rows:
        print(f"{args.samples}: no line has a ref_output", file=sys.stderr)
        return 2
    outputs = [streamed_output(counter.tokenizer, row["ref_output"]) for row in rows]

    print(f"{len(rows)} outputs from {args.samples}, tokenizer {args.tokenizer}")
    print(
        f"{'#':>2} {'dataset':<14} {'chars':>7} {'tokens':>7} {'first chunk':<14} "
        f"{'padded':>7} {'compressed':>10} duplication"
    )
    for i, (row, (output, chunks)) in enumerate(zip(rows, outputs, strict=True)):
        text = output.content + output.reasoning_text
        first = first_chunk(output) or ""
        mark = " (nothing visible)" if is_fake_first_chunk(first) else ""
        print(
            f"{i:>2} {str(row.get('dataset', '')):<14} {len(text):>7,} "
            f"{row.get('tok_ref_output_len', chunks):>7,} {first!r:<14} "
            f"{padded_share(text):>7.1%} {compressed_share(text):>10.1%} "
            f"{duplication(output) or 'none'}{mark}"
        )
    print(
        f"thresholds: padded over {PADDING_SHARE:.0%} of a response, compressed under "
        f"{REPETITION_RATIO:.0%} of its size"
    )

    reference_tokens = [row.get("tok_ref_output_len") for row in rows]
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        duration_ms = write_events(events, outputs)
        reported = Reported(
            total_output_tokens=(sum(reference_tokens) if all(reference_tokens) else None),
            system_tps=None,
            tpot_p90_ms=None,
            tps_per_user=None,
            ttft_p90_ms=None,
            duration_ms=duration_ms,
            n_samples_completed=len(rows),
            n_samples_issued=len(rows),
        )
        analysis = analyse(events, counter, reported, "reference outputs")

    print("\nthe re-count's findings:")
    for finding in analysis.findings:
        print(f"  {finding.severity.value:<8} {finding.rule:<22} {finding.message[:150]}")
    flagged = dict.fromkeys(SCANS, 0)
    for finding in analysis.findings:
        if finding.rule in flagged:
            flagged[finding.rule] += 1
    total = sum(flagged.values())
    counts = ", ".join(f"{rule} {n}" for rule, n in flagged.items())
    print(f"\nflagged by the scans: {total} finding(s) on {len(rows)} outputs ({counts})")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
