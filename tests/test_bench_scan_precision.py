"""bench/scan_precision.py, the measurement of the output scans on real model outputs: it
streams reference outputs as a server would, passes them through the whole re-count, and
fails when a scan flags one (here on outputs shaped like the official R1 reference file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "bench" / "scan_precision.py"

REASONING = (
    "Okay, the user wants the total of 3 crates of 12 bottles, minus the 5 that broke.\n\n"
    "First, 3 * 12 = 36. Then 36 - 5 = 31. Let me check: 12 + 12 + 12 is 36, yes, and "
    "taking 5 away leaves 31. The café counts in €, but that changes nothing 🙂. "
    "So the answer is 31.\n"
)
ANSWER = (
    "\n\n**Total**: 31 bottles.\n\n```python\ndef bottles(crates: int) -> int:\n"
    "    total = crates * 12\n    return total - 5\n```\n\n- crates: 3\n- broken: 5\n"
)


def _run(tmp_path: Path, rows: list[dict[str, str]]) -> subprocess.CompletedProcess[str]:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(samples)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_ordinary_reasoning_outputs_are_not_flagged(tmp_path: Path) -> None:
    rows = [
        {"dataset": "math", "ref_output": REASONING + "</think>" + ANSWER},
        {"dataset": "plain", "ref_output": ANSWER.strip() + " Nothing else to add."},
    ]
    done = _run(tmp_path, rows)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "'Okay'" in done.stdout  # the first streamed chunk of the reasoning
    assert "flagged by the scans: 0 finding(s) on 2 outputs" in done.stdout


def test_a_padded_output_and_a_blank_first_chunk_are_flagged(tmp_path: Path) -> None:
    padded = REASONING + "</think>" + ANSWER + " " * 2000
    blank_first = "\n" + REASONING + "</think>" + ANSWER
    done = _run(
        tmp_path,
        [{"ref_output": padded}, {"ref_output": blank_first}, {"ref_output": REASONING}],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fake-first-token 1, duplicated-output 1, repetitive-output 0" in done.stdout
    assert "(nothing visible)" in done.stdout


def test_a_file_without_reference_outputs_is_refused(tmp_path: Path) -> None:
    done = _run(tmp_path, [{"dataset": "x", "text_input": "a prompt"}])
    assert done.returncode == 2
    assert "no line has a ref_output" in done.stderr
