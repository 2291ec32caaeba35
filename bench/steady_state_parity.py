"""The portal's steady state beside the official diagnostics, on the same event logs.

The official client's post-hoc diagnostics (``scripts/steady_state_diagnostics.py`` of
mlcommons/endpoints) decide a point's steady state; ``harness/analysis/steady_state.py`` is our
own implementation of the method. This script runs both on the checked-in parity set
(``tests/harness/data/steady_state``) and on ``--random`` further logs of random shapes
(drifts, level shifts, alternating noise, a failed super-pass, a ramp, lost requests, a
trailing partial super-pass), and prints, for each log, whether they agree on: the
window (super-pass range and sample count), every plateau, the level shift and its
change point, the metrics drifting up, each gated metric's trend over the tail, and the
number of super-passes. It exits 1 on any disagreement.

The official script is not part of this repository: give the path of a checkout's copy.
Its tokenizer is replaced by the simulator's word count, which is what the logs' words
are (one token a word), so it needs no ``transformers``.

    .venv/bin/python bench/steady_state_parity.py --official PATH/steady_state_diagnostics.py \\
        [--random 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.analysis.steady_state import Method, analyse_steady_state  # noqa: E402
from harness.metrics.summary import SummaryOptions, summarize  # noqa: E402
from harness.metrics.timings import RequestTimings  # noqa: E402
from harness.sim import sim_token_counter  # noqa: E402
from tests.support.event_logs import DATA, SUPER_PASS, write_log  # noqa: E402

WARMUP = 1


def load_official(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("official_steady_state", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up here
    spec.loader.exec_module(module)
    return module


def words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def ours(path: Path, size: int) -> dict[str, Any]:
    timings = RequestTimings()
    summarize(
        path, sim_token_counter(), SummaryOptions(load_pattern="concurrency"), observer=timings
    )
    return analyse_steady_state(timings.timings(), Method(super_pass_size=size, warmup=WARMUP))


def theirs(official: ModuleType, path: Path, size: int, scratch: Path) -> dict[str, Any]:
    plain = scratch / "events.jsonl"  # the script reads plain text
    data = path.read_bytes()
    plain.write_bytes(gzip.decompress(data) if path.suffix == ".gz" else data)
    result: dict[str, Any] = official.run(str(plain), superpass_size=size, count_tokens=words,
                                          warmup=WARMUP)  # fmt: skip
    return result


def differences(o: dict[str, Any], t: dict[str, Any]) -> list[str]:
    """What the two say differently, in the portal's numbering (super-passes from 0 over
    the whole run, inclusive end; the script's are after the warm-up, exclusive end)."""
    ss = t["steady_state"]
    out: list[str] = []

    def absolute(lo: int, hi: int) -> list[int]:
        return [lo + WARMUP, hi + WARMUP - 1]

    window = o["window"]
    if ss["found"] != (window is not None):
        out.append(f"found: official {ss['found']}, ours {window is not None}")
    elif window is not None:
        theirs_w = absolute(ss["window"]["sp_lo"], ss["window"]["sp_hi"])
        ours_w = [window["super_pass_start"], window["super_pass_end"]]
        if ours_w != theirs_w:
            out.append(f"window: official {theirs_w}, ours {ours_w}")
        if window["n_samples"] != ss["window"]["n_samples"]:
            out.append(
                f"n_samples: official {ss['window']['n_samples']}, ours {window['n_samples']}"
            )
    plateaus = [absolute(lo, hi) for lo, hi in ss["anomaly"]["plateaus"]]
    if o["plateaus"] != plateaus:
        out.append(f"plateaus: official {plateaus}, ours {o['plateaus']}")
    shift, anomaly = ss["anomaly"], o["anomaly"]
    if shift["detected"] != (anomaly is not None):
        out.append(f"anomaly: official {shift['detected']}, ours {anomaly is not None}")
    elif anomaly is not None and anomaly["change_point_sp"] != shift["change_point_sp"] + WARMUP:
        out.append(f"change point: official {shift['change_point_sp'] + WARMUP}, "
                   f"ours {anomaly['change_point_sp']}")  # fmt: skip
    if sorted(ss["drifting_up"]) != sorted(o["drifting_up"]):
        out.append(f"drifting up: official {ss['drifting_up']}, ours {o['drifting_up']}")
    for metric, trend in ss["global_trend"].items():
        if o["global_trend"].get(metric) != trend:
            out.append(f"{metric} tail: official {trend}, ours {o['global_trend'].get(metric)}")
    if t["n_super_passes"] != o["n_super_passes"]:
        out.append(f"super-passes: official {t['n_super_passes']}, ours {o['n_super_passes']}")
    return out


def random_logs(count: int, seed: int, folder: Path) -> list[tuple[str, Path]]:
    rnd = random.Random(seed)
    return [random_log(rnd, folder / f"random-{k}.jsonl") for k in range(count)]


def random_log(rnd: random.Random, path: Path) -> tuple[str, Path]:
    """One log of a random shape, with a partial super-pass at its end."""
    kind = rnd.choice(["drift", "shift", "noise", "failed super-pass", "ramp"])
    passes = rnd.randint(5, 30)
    slope, at = rnd.uniform(-0.04, 0.04), rnd.randint(2, passes)
    factor, amplitude = rnd.uniform(0.7, 1.6), rnd.uniform(0, 0.08)
    shapes: dict[str, Callable[[int], float]] = {
        "drift": lambda i: 5.0 * (1 + slope * (i // SUPER_PASS)),
        "shift": lambda i: 5.0 if i < at * SUPER_PASS else 5.0 * factor,
        "noise": lambda i: 5.0 * (1 + (amplitude if (i // SUPER_PASS) % 2 else -amplitude)),
        "failed super-pass": lambda i: 5.0,
        "ramp": lambda i: 5.0 * (1 + 5 * abs(slope) * max(0, 6 - i // SUPER_PASS)),
    }
    failed = range(at * SUPER_PASS, (at + 1) * SUPER_PASS) if kind == "failed super-pass" else ()
    lose = rnd.random() < 0.3
    write_log(
        path,
        passes * SUPER_PASS + rnd.randint(0, SUPER_PASS - 1),
        shapes[kind],
        fail=lambda i: i in failed,
        lost=lambda i: lose and i % 53 == 7,
        seed=rnd.randint(0, 10**6),
    )
    return f"{kind} ({passes} super-passes)", path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--official", type=Path, required=True,
                        help="the official steady_state_diagnostics.py")  # fmt: skip
    parser.add_argument("--random", type=int, default=100, help="random logs besides the set")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    official = load_official(args.official)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        logs = [(p.name.removesuffix(".jsonl.gz"), p) for p in sorted(DATA.glob("*.jsonl.gz"))]
        parity = len(logs)
        logs += random_logs(args.random, args.seed, scratch)
        agreed = {"parity set": 0, "random": 0}
        for n, (name, path) in enumerate(logs):
            mine = ours(path, SUPER_PASS)
            diff = differences(mine, theirs(official, path, SUPER_PASS, scratch))
            agreed["parity set" if n < parity else "random"] += not diff
            verdict = f"{mine['status']}, {mine['verdict']}"
            print(f"{'same' if not diff else 'DIFFERENT':9}  {name:38} {verdict}")
            for line in diff:
                print(f"           {line}")
    print(f"\nparity set: {agreed['parity set']}/{parity} agree; "
          f"random logs (seed {args.seed}): {agreed['random']}/{args.random} agree")  # fmt: skip
    return 0 if sum(agreed.values()) == len(logs) else 1


if __name__ == "__main__":
    sys.exit(main())
