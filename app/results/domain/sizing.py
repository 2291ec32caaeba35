"""Capacity planning from a published curve: how many systems hold a buyer's load.

The method (README, "How many systems for your load"), on a curve's measured operating
points that meet the buyer's SLA (measured, never interpolated between points):

- a load of ``users`` concurrent users: the point with the highest concurrency holds the
  most users per system, so ``⌈users / concurrency⌉`` systems;
- a load of ``R`` requests/s of ``L`` output tokens each: the point with the highest
  throughput serves the most requests per system, ``system_tps / L`` of them, so
  ``⌈R × L / system_tps⌉`` systems;

and with them their accelerators, provisioned power and the buyer's hourly price. It
assumes that systems scale linearly (each holds what its point measured, nothing is shared
between them); every figure is derived, not an MLPerf figure.
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


def holding_point(points: Sequence[SizedPoint], by_rate: bool = False) -> int | None:
    """The index of the admissible point that holds the most load: the highest
    concurrency (ties: the higher throughput), or *by_rate* the highest throughput (ties:
    the higher concurrency); None when no point meets the SLA. A dedicated Offline run
    holds no users and answers no one in time."""
    best: int | None = None

    def key(p: SizedPoint) -> tuple[float, float]:
        return (p.system_tps, p.concurrency) if by_rate else (p.concurrency, p.system_tps)

    for n, p in enumerate(points):
        if not p.admissible or p.offline == "dedicated":
            continue
        if best is None or key(p) > key(points[best]):
            best = n
    return best


def requests_per_s(system_tps: float, output_tokens_per_request: float) -> float:
    """The requests one system answers each second at a point: its output tokens/s over
    the tokens each request gets."""
    return system_tps / output_tokens_per_request


def size(
    load: float,
    per_system: float,
    accelerators: int | None,
    provisioned_kw: float | None,
    price: Price | None,
    share: float = 1.0,
    model: str | None = None,
) -> Sizing:
    """What a *load* (users, or requests/s) needs of systems that hold *per_system* each;
    a "system" is what the point ran on: its *accelerators*, *provisioned_kw* and *share*
    of the whole system's nodes (less than one where nodes_used engaged fewer, §4.5.3),
    with accelerators of *model* (what a preset prices)."""
    if load <= 0 or per_system <= 0:
        raise ValueError("the load and what a system holds must be more than 0")
    # A hair of float noise must not buy a whole system (1000 / 62.5 is 16, not 17).
    systems = math.ceil(round(load / per_system, 9))
    hourly = price.hourly(accelerators, share, model) if price is not None else None
    return Sizing(
        systems=systems,
        accelerators=systems * accelerators if accelerators else None,
        provisioned_kw=round(systems * provisioned_kw, 3) if provisioned_kw else None,
        usd_per_hour=round(systems * hourly, 2) if hourly is not None else None,
    )
