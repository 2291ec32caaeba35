"""Capacity planning from a published curve: how many systems hold a buyer's load.

The method (README, "Capacity planning"): of a curve's measured operating points that meet
the buyer's SLA, the one with the highest concurrency holds the most users per system
at that SLA (measured, never interpolated between points). The load of ``users``
concurrent users then needs ``⌈users / concurrency⌉`` systems, and with them their
accelerators, provisioned power and the buyer's hourly price. It assumes that systems
scale linearly (each holds its measured concurrency, nothing is shared between them);
every figure is derived, not an MLPerf figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from app.results.domain.sla import Price

MOST_USERS = 100_000_000


class SizedPoint(Protocol):
    @property
    def concurrency(self) -> int: ...
    @property
    def system_tps(self) -> float: ...
    @property
    def offline(self) -> str: ...
    @property
    def admissible(self) -> bool: ...


@dataclass(frozen=True)
class Sizing:
    systems: int
    accelerators: int | None
    provisioned_kw: float | None
    usd_per_hour: float | None


def holding_point(points: Sequence[SizedPoint]) -> int | None:
    """The index of the point that holds the most users at the SLA: the highest
    concurrency among the admissible ones (ties: the higher throughput); None when no
    point meets the SLA. A dedicated Offline run has no users to hold."""
    best: int | None = None
    for n, p in enumerate(points):
        if not p.admissible or p.offline == "dedicated":
            continue
        if best is None or (p.concurrency, p.system_tps) > (
            points[best].concurrency,
            points[best].system_tps,
        ):
            best = n
    return best


def size(
    users: int,
    concurrency: int,
    accelerators: int | None,
    provisioned_kw: float | None,
    price: Price | None,
) -> Sizing:
    """What *users* concurrent users need of a system that holds *concurrency* each."""
    if users < 1 or concurrency < 1:
        raise ValueError("users and concurrency must be at least 1")
    systems = math.ceil(users / concurrency)
    hourly = price.hourly(accelerators) if price is not None else None
    return Sizing(
        systems=systems,
        accelerators=systems * accelerators if accelerators else None,
        provisioned_kw=round(systems * provisioned_kw, 3) if provisioned_kw else None,
        usd_per_hour=round(systems * hourly, 2) if hourly is not None else None,
    )
