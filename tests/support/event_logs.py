"""Official-schema event logs of a known shape, for the steady-state parity set.

``python -m tests.support.event_logs`` writes the checked-in set under
``tests/harness/data/steady_state/``: each log is a closed-loop run at concurrency 4 whose
TPOT (a function of the request's index) and failures are chosen, with a little seeded
noise, so that what §2.6's method must find in it is known by construction. The expected
findings are written beside each case in ``tests/harness/analysis/test_steady_state_parity.py``.
"""

from __future__ import annotations

import gzip
import heapq
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.metrics import events as ev
from harness.metrics.events import EventWriter, Output, Prompt
from harness.sim import WORDS

MS = 1_000_000
SUPER_PASS = 20  # the dataset's size: one super-pass
TOKENS = 24  # output tokens a response: one first chunk, then one word a chunk
DATA = Path(__file__).resolve().parents[1] / "harness" / "data" / "steady_state"


def write_log(
    path: Path,
    requests: int,
    tpot_ms: Callable[[int], float],
    *,
    fail: Callable[[int], bool] = lambda i: False,
    lost: Callable[[int], bool] = lambda i: False,
    seed: int = 0,
    concurrency: int = 4,
) -> Path:
    """*requests* requests, *concurrency* at a time, each issued when a slot frees: a
    30 ms first chunk, then ``TOKENS − 1`` words at ``tpot_ms(i)`` each (2 % lognormal
    noise); ``fail(i)``: an error instead of an answer; ``lost(i)``: never completes."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, str, str, object, dict[str, object]]] = []
    order = 0

    def add(ts: int, kind: str, sample: str, data: object = None, **extra: object) -> None:
        nonlocal order
        rows.append((ts, order, kind, sample, data, extra))
        order += 1

    free = [(0, slot) for slot in range(concurrency)]
    add(0, ev.START_TRACKING, "")
    for i in range(requests):
        at, slot = heapq.heappop(free)
        sample = uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | i).hex
        add(at, ev.ISSUED, sample, Prompt(text=f"prompt {i % SUPER_PASS}").to_data())
        first = at + int(30 * MS * rng.lognormal(0, 0.02))
        done = first + int(tpot_ms(i) * MS * rng.lognormal(0, 0.02) * (TOKENS - 1))
        if lost(i):
            heapq.heappush(free, (done, slot))  # the client gave up on it
            continue
        add(first, ev.RECV_FIRST, sample)
        if fail(i):
            add(done, ev.ERROR, sample, ["ErrorData", "HTTPError", "503"])
            add(done, ev.COMPLETE, sample)
        else:
            words = [WORDS[(i + k) % len(WORDS)] for k in range(TOKENS)]
            chunks = [words[0], *(" " + w for w in words[1:])]
            add(done, ev.COMPLETE, sample, Output(chunks).to_data(), finish_reason="stop")
        heapq.heappush(free, (done, slot))
    end = max(ts for ts, *_ in rows)
    add(end, ev.STOP_TRACKING, "")
    plain = path.with_suffix("") if path.suffix == ".gz" else path
    writer = EventWriter(plain)
    for ts, _order, kind, sample, data, extra in sorted(rows, key=lambda r: (r[0], r[1])):
        writer.write(kind, ts, sample, data, **extra)  # type: ignore[arg-type]
    writer.close()
    if plain != path:
        # mtime 0: the same log compresses to the same bytes on every machine.
        with plain.open("rb") as raw, gzip.GzipFile(path, "wb", mtime=0) as packed:
            shutil.copyfileobj(raw, packed)
        plain.unlink()
    return path


# name → (requests, tpot_ms(i), fail(i), lost(i), seed)
Case = tuple[int, Callable[[int], float], Callable[[int], bool], Callable[[int], bool], int]
CASES: dict[str, Case] = {
    "constant": (24 * SUPER_PASS, lambda i: 5.0, lambda i: False, lambda i: False, 5),
    "slow_drift_up": (
        24 * SUPER_PASS, lambda i: 5.0 * (1 + 0.02 * (i // SUPER_PASS)), lambda i: False,
        lambda i: False, 2,
    ),
    "drift_down": (
        24 * SUPER_PASS, lambda i: 5.0 * (1 - 0.015 * (i // SUPER_PASS)), lambda i: False,
        lambda i: False, 3,
    ),
    "level_shift": (
        24 * SUPER_PASS, lambda i: 5.0 if i < 12 * SUPER_PASS else 6.5, lambda i: False,
        lambda i: False, 4,
    ),
    "noisy_plateau": (
        24 * SUPER_PASS, lambda i: 5.0 * (1.04 if (i // SUPER_PASS) % 2 else 0.96),
        lambda i: False, lambda i: False, 5,
    ),
    "too_few_super_passes": (4 * SUPER_PASS, lambda i: 5.0, lambda i: False, lambda i: False, 6),
    "failures_mid_run": (
        24 * SUPER_PASS, lambda i: 5.0, lambda i: 10 * SUPER_PASS <= i < 11 * SUPER_PASS,
        lambda i: i % 97 == 50, 5,
    ),
}  # fmt: skip


def main() -> None:
    for name, (requests, tpot, fail, lost, seed) in CASES.items():
        write_log(DATA / f"{name}.jsonl.gz", requests, tpot, fail=fail, lost=lost, seed=seed)


if __name__ == "__main__":
    main()
