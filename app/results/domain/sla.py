"""A buyer's SLA: which operating points meet it, and the best one per system.

A point is admissible when its TTFT P90 is at most the limit, its tokens/s per user (or
e2e interactivity, for agentic benchmarks) at least the minimum, its concurrency at least
the minimum, and its region the one asked for. Dedicated Offline runs have no per-user
latency and are never admissible. The best admissible point of a curve is the one with the
highest throughput (``system_tps``, or per kW / per accelerator when normalised, or the
lowest cost at the buyer's price); ties go to the faster per-user point, then the lower
concurrency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

NORMALISATIONS = ("system", "kw", "accelerator", "usd_per_mtok")
# Normalisations the rules do not define: the page and the exports label them so.
DERIVED = frozenset({"kw", "accelerator", "usd_per_mtok"})
NOT_AN_MLPERF_FIGURE = "derived, not an MLPerf figure"


@dataclass(frozen=True)
class Sla:
    ttft_p90_max_ms: float | None = None
    tps_per_user_min: float | None = None
    concurrency_min: int | None = None
    regions: tuple[str, ...] = ()  # any region when empty

    @property
    def is_empty(self) -> bool:
        return (
            self.ttft_p90_max_ms is None
            and self.tps_per_user_min is None
            and self.concurrency_min is None
            and not self.regions
        )


@dataclass(frozen=True)
class Price:
    """What the buyer pays for the system (their own quote: MLPerf results carry no
    price), per accelerator-hour or per system-hour."""

    per_accelerator_hour: float | None = None
    per_system_hour: float | None = None

    def hourly(self, accelerators: int | None) -> float | None:
        if self.per_system_hour is not None:
            return self.per_system_hour
        if self.per_accelerator_hour is not None and accelerators:
            return self.per_accelerator_hour * accelerators
        return None


class OperatingPoint(Protocol):
    """What the SLA reads of a point (a published point is one)."""

    @property
    def concurrency(self) -> int: ...
    @property
    def offline(self) -> str: ...
    @property
    def region(self) -> str | None: ...
    @property
    def system_tps(self) -> float: ...
    @property
    def system_tps_per_kw(self) -> float | None: ...
    @property
    def tps_per_user(self) -> float | None: ...
    @property
    def e2e_avg_interactivity(self) -> float | None: ...
    @property
    def ttft_p90_ms(self) -> float | None: ...


Point = TypeVar("Point", bound=OperatingPoint)


def per_user(point: OperatingPoint, agentic: bool) -> float | None:
    return point.e2e_avg_interactivity if agentic else point.tps_per_user


def admissible(point: OperatingPoint, sla: Sla, agentic: bool = False) -> bool:
    if point.offline == "dedicated":
        return False
    if sla.ttft_p90_max_ms is not None:
        ttft = point.ttft_p90_ms
        if ttft is None or ttft > sla.ttft_p90_max_ms:
            return False
    if sla.tps_per_user_min is not None:
        speed = per_user(point, agentic)
        if speed is None or speed < sla.tps_per_user_min:
            return False
    if sla.concurrency_min is not None and point.concurrency < sla.concurrency_min:
        return False
    return not sla.regions or point.region in sla.regions


def usd_per_million_tokens(
    point: OperatingPoint, price: Price | None, accelerators: int | None
) -> float | None:
    """The buyer's hourly price over the output tokens the point makes in an hour:
    hourly price / (system_tps × 3600 / 10⁶). Derived, not an MLPerf figure."""
    hourly = price.hourly(accelerators) if price is not None else None
    if hourly is None or point.system_tps <= 0:
        return None
    return hourly / (point.system_tps * 3600 / 1e6)


def throughput(
    point: OperatingPoint,
    normalize: str,
    accelerators: int | None,
    price: Price | None = None,
) -> float | None:
    """``system_tps``, per kW (the point's power denominator), per accelerator, or output
    tokens per dollar of the buyer's price (``usd_per_mtok``: higher is cheaper, so the
    step curve and the ranking read the same way as for throughput)."""
    if normalize == "kw":
        return point.system_tps_per_kw
    if normalize == "accelerator":
        if not accelerators:
            return None
        return point.system_tps / accelerators
    if normalize == "usd_per_mtok":
        cost = usd_per_million_tokens(point, price, accelerators)
        return None if not cost else 1e6 / cost
    return point.system_tps


def best_point(
    points: Sequence[Point],
    sla: Sla,
    *,
    agentic: bool = False,
    normalize: str = "system",
    accelerators: int | None = None,
    price: Price | None = None,
) -> Point | None:
    """The admissible point with the highest throughput (or the lowest cost), or None."""

    def key(p: Point) -> tuple[float, float, int]:
        return (
            throughput(p, normalize, accelerators, price) or 0.0,
            per_user(p, agentic) or 0.0,
            -p.concurrency,
        )

    candidates = [
        p
        for p in points
        if admissible(p, sla, agentic) and throughput(p, normalize, accelerators, price) is not None
    ]
    return max(candidates, key=key) if candidates else None
