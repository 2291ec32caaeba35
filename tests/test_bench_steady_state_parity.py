"""bench/steady_state_parity.py, which sets the portal's steady state beside the official
diagnostics: it reports agreement and exits 0, and names every difference and exits 1.

The official script is not in this repository, so stand-ins take its place here: one
that answers in its shape what our analysis finds (every log agrees), and one that
reports each window one super-pass longer (every log with a window differs, by name).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import PROJECT_ROOT

STAND_IN = """
from pathlib import Path
from harness.sim import sim_token_counter
from harness.analysis.steady_state import Method, analyse_steady_state
from harness.metrics.summary import SummaryOptions, summarize
from harness.metrics.timings import RequestTimings

STRETCH = {stretch}

def run(events_path, superpass_size, count_tokens, warmup=1):
    timings = RequestTimings()
    summarize(Path(events_path), sim_token_counter(), SummaryOptions(load_pattern="concurrency"),
              observer=timings)
    doc = analyse_steady_state(timings.timings(), Method(super_pass_size=superpass_size))
    w = doc["window"]
    plateaus = [[lo - warmup, hi - warmup + 1] for lo, hi in doc["plateaus"]]
    anomaly = doc["anomaly"]
    return {{
        "n_super_passes": doc["n_super_passes"],
        "steady_state": {{
            "found": w is not None,
            "window": None if w is None else {{
                "sp_lo": w["super_pass_start"] - warmup,
                "sp_hi": w["super_pass_end"] - warmup + 1 + STRETCH,
                "n_samples": w["n_samples"],
            }},
            "anomaly": {{
                "detected": anomaly is not None,
                "change_point_sp": None if anomaly is None else anomaly["change_point_sp"] - warmup,
                "plateaus": plateaus,
            }},
            "global_trend": {{k: v for k, v in doc["global_trend"].items()}},
            "drifting_up": list(doc["drifting_up"]),
        }},
    }}
"""


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "steady_state_parity", PROJECT_ROOT / "bench" / "steady_state_parity.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stand_in(tmp_path: Path, stretch: int) -> Path:
    path = tmp_path / f"official_{stretch}.py"
    path.write_text(STAND_IN.format(stretch=stretch))
    return path


def test_agreement_is_counted_and_exits_zero(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    official = _stand_in(tmp_path, 0)
    assert bench.main(["--official", str(official), "--random", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "parity set: 7/7 agree; random logs (seed 1): 3/3 agree" in out
    assert "DIFFERENT" not in out


def test_each_difference_is_named_and_exits_one(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    official = _stand_in(tmp_path, 1)
    assert bench.main(["--official", str(official), "--random", "0"]) == 1
    out = capsys.readouterr().out
    # Six of the seven logs have a window; the one too short for any does not differ.
    assert "parity set: 1/7 agree" in out
    assert out.count("DIFFERENT") == 6
    assert "window: official [1, 24], ours [1, 23]" in out  # the constant log
    assert "n_samples" not in out  # only what differs is named
