"""A buyer's SLA: which operating points meet it, and the best one per system.

A point is admissible when its TTFT P90 is at most the limit, its tokens/s per user (or
e2e interactivity, for agentic benchmarks) at least the minimum, its concurrency at least
the minimum, and its region the one asked for. Dedicated Offline runs have no per-user
latency and are never admissible. The best admissible point of a curve is the one with the
highest throughput (``system_tps``, or per kW / per accelerator when normalised); ties go to
the faster per-user point, then the lower concurrency.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

NORMALISATIONS = ("system", "kw", "accelerator")


@dataclass(frozen=True)
class Sla:
    ttft_p90_max_ms: float | None = None
    tps_per_user_min: float | None = None
    concurrency_min: int | None = None
    region: str | None = None

    @property
    def is_empty(self) -> bool:
        return (
            self.ttft_p90_max_ms is None
            and self.tps_per_user_min is None
            and self.concurrency_min is None
            and self.region is None
        )


def per_user(point: dict[str, Any], agentic: bool) -> float | None:
    value = point.get("e2e_avg_interactivity" if agentic else "tps_per_user")
    return float(value) if value is not None else None


def admissible(point: dict[str, Any], sla: Sla, agentic: bool = False) -> bool:
    if point.get("offline") == "dedicated":
        return False
    if sla.ttft_p90_max_ms is not None:
        ttft = point.get("ttft_p90_ms")
        if ttft is None or ttft > sla.ttft_p90_max_ms:
            return False
    if sla.tps_per_user_min is not None:
        speed = per_user(point, agentic)
        if speed is None or speed < sla.tps_per_user_min:
            return False
    if sla.concurrency_min is not None and point["concurrency"] < sla.concurrency_min:
        return False
    return sla.region is None or point.get("region") == sla.region


def throughput(point: dict[str, Any], normalize: str, accelerators: int | None) -> float | None:
    """``system_tps``, per kW (the point's power denominator) or per accelerator."""
    if normalize == "kw":
        value = point.get("system_tps_per_kw")
        return float(value) if value is not None else None
    if normalize == "accelerator":
        if not accelerators:
            return None
        return float(point["system_tps"]) / accelerators
    return float(point["system_tps"])


def best_point(
    points: Sequence[dict[str, Any]],
    sla: Sla,
    *,
    agentic: bool = False,
    normalize: str = "system",
    accelerators: int | None = None,
) -> dict[str, Any] | None:
    """The admissible point with the highest throughput, or None."""
    key: Callable[[dict[str, Any]], tuple[float, float, int]] = lambda p: (  # noqa: E731
        throughput(p, normalize, accelerators) or 0.0,
        per_user(p, agentic) or 0.0,
        -int(p["concurrency"]),
    )
    candidates = [
        p
        for p in points
        if admissible(p, sla, agentic) and throughput(p, normalize, accelerators) is not None
    ]
    return max(candidates, key=key) if candidates else None
