"""A buyer's SLA: which operating points meet it, and the best one per system.

A point is admissible when its TTFT P90 is at most the limit, its tokens/s per user (or
e2e interactivity, for agentic benchmarks) at least the minimum, its concurrency at least
the minimum, its region the one asked for, and, when the buyer asks for steady points only,
its numbers come from its steady-state window (rules §2.2). Dedicated Offline runs have no per-user
latency and are never admissible. The best admissible point of a curve is the one with the
highest throughput (``system_tps``, or per kW / per accelerator when normalised, or the
lowest cost at the buyer's price); ties go to the faster per-user point, then the lower
concurrency.

The rules are written once, over columns (:class:`PointTable`): a results view holds
thousands of curves, and a question over all their points is a few array operations.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from app.core.per_user import per_user
from app.core.regions import Offline
from app.publishing.domain.point_table import (
    BASIS_NONE,
    BASIS_STEADY,
    OFFLINE,
    PackedCurve,
    basis_code,
    regions_of,
)
from app.results.domain.presets import PricePreset

NORMALISATIONS = ("system", "kw", "accelerator", "usd_per_mtok")
# Normalisations the rules do not define: the page and the exports label them so.
DERIVED = frozenset({"kw", "accelerator", "usd_per_mtok"})
NOT_AN_MLPERF_FIGURE = "derived, not an MLPerf figure"

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Sla:
    ttft_p90_max_ms: float | None = None
    tps_per_user_min: float | None = None
    concurrency_min: int | None = None
    regions: tuple[str, ...] = ()  # any region when empty
    steady_only: bool = False  # only points whose steady-state window is the basis

    @property
    def is_empty(self) -> bool:
        return (
            self.ttft_p90_max_ms is None
            and self.tps_per_user_min is None
            and self.concurrency_min is None
            and not self.regions
            and not self.steady_only
        )


@dataclass(frozen=True)
class Price:
    """What the buyer pays for the system (their own quote: MLPerf results carry no
    price), per accelerator-hour or per system-hour, or a preset's price list (per
    accelerator-hour of each accelerator model it prices)."""

    per_accelerator_hour: float | None = None
    per_system_hour: float | None = None
    preset: PricePreset | None = None

    def per_accelerator(self, model: str | None) -> float | None:
        """USD per accelerator-hour of *model*: the buyer's one figure, or the preset's."""
        if self.preset is not None:
            return self.preset.price_of(model)
        return self.per_accelerator_hour

    def hourly(
        self, accelerators: int | None, share: float = 1.0, model: str | None = None
    ) -> float | None:
        """The hour of what a point ran on: its *accelerators* (of *model*), or the
        *share* of the system's nodes it engaged at the system's price (§4.5.3, as its
        power is)."""
        if self.per_system_hour is not None:
            return self.per_system_hour * share
        rate = self.per_accelerator(model)
        if rate is not None and accelerators:
            return rate * accelerators
        return None


class Engagement(Protocol):
    """The part of the system a point ran on, where it engaged fewer nodes (§4.5.3)."""

    @property
    def share(self) -> float: ...
    @property
    def accelerators(self) -> int | None: ...


class Basis(Protocol):
    """What a point's numbers rest on (rules §2.3–2.4)."""

    @property
    def steady(self) -> bool: ...


class OperatingPoint(Protocol):
    """What the SLA reads of a point (a published point is one)."""

    @property
    def reporting_basis(self) -> Basis | None: ...

    @property
    def engaged(self) -> Engagement | None: ...
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


def _floats(values: Sequence[float | None]) -> Floats:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _steady(declared: npt.NDArray[np.uint8], agentic: Bools) -> Bools:
    """The point's steady-state window is its basis; an agentic point has none by the
    rules (§2.4) and counts as steady, a point that declares nothing does not."""
    return np.where(declared == BASIS_NONE, agentic, declared == BASIS_STEADY)


def _accelerators(engaged: Floats, system: Floats) -> Floats:
    """What a point ran on: its engaged accelerators where it engaged fewer nodes, else
    the system's; none where neither is known (or either is zero)."""
    system = np.where(system > 0, system, np.nan)
    return np.where(engaged > 0, engaged, system)


@dataclass(frozen=True)
class PointTable:
    """Operating points as columns, one row a point; a missing value is NaN.

    ``curve`` numbers the curve a row belongs to (rows of one curve are adjacent);
    ``per_user`` is tokens/s per user, or e2e interactivity on an agentic curve.
    """

    curve: Ints
    concurrency: Ints
    dedicated: Bools
    steady: Bools  # see _steady
    region: npt.NDArray[np.object_]
    system_tps: Floats
    system_tps_per_kw: Floats
    per_user: Floats
    ttft_p90_ms: Floats
    # What the point ran on: the engaged accelerators and share of the system's nodes,
    # and the accelerators' model (what a preset prices).
    accelerators: Floats
    share: Floats
    accelerator_model: npt.NDArray[np.object_]

    @classmethod
    def of(
        cls,
        curves: Sequence[Sequence[OperatingPoint]],
        agentic: Sequence[bool],
        accelerators: Sequence[int | None],
        models: Sequence[str | None] | None = None,
    ) -> PointTable:
        rows = [(n, p) for n, points in enumerate(curves) for p in points]
        curve = np.array([n for n, _p in rows], dtype=np.int64)
        return cls(
            curve=curve,
            concurrency=np.array([p.concurrency for _n, p in rows], dtype=np.int64),
            dedicated=np.array([p.offline == "dedicated" for _n, p in rows], dtype=np.bool_),
            steady=_steady(
                np.array([basis_code(p.reporting_basis) for _n, p in rows], dtype=np.uint8),
                np.asarray(agentic, dtype=np.bool_)[curve],
            ),
            region=np.array([p.region for _n, p in rows], dtype=np.object_),
            system_tps=_floats([p.system_tps for _n, p in rows]),
            system_tps_per_kw=_floats([p.system_tps_per_kw for _n, p in rows]),
            per_user=_floats([per_user(p, agentic[n]) for n, p in rows]),
            ttft_p90_ms=_floats([p.ttft_p90_ms for _n, p in rows]),
            accelerators=_accelerators(
                _floats([p.engaged.accelerators if p.engaged else None for _n, p in rows]),
                _floats(accelerators)[curve],
            ),
            share=_floats([p.engaged.share if p.engaged else 1.0 for _n, p in rows]),
            accelerator_model=np.array(
                [models[n] if models else None for n, _p in rows], dtype=np.object_
            ),
        )

    @classmethod
    def of_packed(
        cls,
        curves: Sequence[PackedCurve],
        rows: npt.NDArray[np.void],
        agentic: Sequence[bool],
        accelerators: Sequence[int | None],
        models: Sequence[str | None],
    ) -> PointTable:
        """The table of curves packed when they were published (a large record's);
        *rows*: their rows joined (``point_table.joined_rows``)."""
        sizes = [len(c) for c in curves]
        curve = np.repeat(np.arange(len(curves), dtype=np.int64), sizes)
        return cls(
            curve=curve,
            concurrency=rows["concurrency"].astype(np.int64),
            dedicated=rows["offline"] == OFFLINE.index(Offline.DEDICATED),
            steady=_steady(rows["basis"], np.asarray(agentic, dtype=np.bool_)[curve]),
            region=regions_of(curves, rows),
            system_tps=rows["system_tps"].astype(np.float64),
            system_tps_per_kw=rows["system_tps_per_kw"].astype(np.float64),
            per_user=rows["per_user"].astype(np.float64),
            ttft_p90_ms=rows["ttft_p90_ms"].astype(np.float64),
            accelerators=_accelerators(
                rows["engaged_accelerators"].astype(np.float64), _floats(accelerators)[curve]
            ),
            share=rows["share"].astype(np.float64),
            accelerator_model=np.array(models, dtype=np.object_)[curve],
        )

    def __len__(self) -> int:
        return len(self.curve)

    @functools.cached_property
    def curve_starts(self) -> Ints:
        """The first row of each curve (a curve's rows are adjacent)."""
        return np.flatnonzero(np.append(True, self.curve[1:] != self.curve[:-1]))


def admissible_rows(table: PointTable, sla: Sla) -> Bools:
    """Which rows meet *sla* (a missing value meets no limit)."""
    ok = ~table.dedicated
    # NaN compares false, so a point without the value fails the limit on it.
    if sla.ttft_p90_max_ms is not None:
        ok &= table.ttft_p90_ms <= sla.ttft_p90_max_ms
    if sla.tps_per_user_min is not None:
        ok &= table.per_user >= sla.tps_per_user_min
    if sla.concurrency_min is not None:
        ok &= table.concurrency >= sla.concurrency_min
    if sla.regions:
        ok &= np.isin(table.region, list(sla.regions))
    if sla.steady_only:
        ok &= table.steady
    return ok


def usd_per_million_tokens_rows(table: PointTable, price: Price | None) -> Floats:
    """The buyer's hourly price of what the point ran on (its engaged accelerators, or
    its share of the system's nodes) over the output tokens it makes in an hour:
    hourly price / (system_tps × 3600 / 10⁶). Derived, not an MLPerf figure."""
    hourly = np.full(len(table), np.nan)
    if price is None:
        return hourly  # no price, no cost
    if price.per_system_hour is not None:
        hourly = price.per_system_hour * table.share
    else:
        rates = _floats([price.per_accelerator(m) for m in table.accelerator_model])
        hourly = rates * np.where(table.accelerators > 0, table.accelerators, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(table.system_tps > 0, hourly / (table.system_tps * 3600 / 1e6), np.nan)


def throughput_rows(table: PointTable, normalize: str, price: Price | None = None) -> Floats:
    """``system_tps``, per kW (the point's power denominator), per accelerator, or output
    tokens per dollar of the buyer's price (``usd_per_mtok``: higher is cheaper, so the
    step curve and the ranking read the same way as for throughput)."""
    if normalize == "kw":
        return table.system_tps_per_kw
    if normalize == "accelerator":
        with np.errstate(invalid="ignore"):
            return table.system_tps / np.where(table.accelerators > 0, table.accelerators, np.nan)
    if normalize == "usd_per_mtok":
        cost = usd_per_million_tokens_rows(table, price)
        with np.errstate(divide="ignore"):
            return np.where(cost > 0, 1e6 / cost, np.nan)
    return table.system_tps


def best_rows(table: PointTable, ok: Bools, value: Floats, curves: int) -> Ints:
    """Per curve, the row of its highest *value* among the rows *ok* marks (ties: the
    faster per-user point, then the lower concurrency); -1 for a curve with none."""
    best = np.full(curves, -1, dtype=np.int64)
    candidate = ok & np.isfinite(value)
    if not candidate.any():
        return best
    scored = np.where(candidate, value, -np.inf)
    top = np.full(curves, -np.inf)
    # A curve's rows are adjacent: each run of them reduced at once.
    starts = table.curve_starts
    top[table.curve[starts]] = np.maximum.reduceat(scored, starts)
    # Only a curve's rows at its top value compete on the tie-breakers.
    rows = np.flatnonzero(candidate & (scored == top[table.curve]))
    curve_of = table.curve[rows]
    # A curve's rows at its top are adjacent here: where two neighbours share a curve,
    # they tie; every other curve has its one row.
    tied = np.zeros(len(rows), dtype=np.bool_)
    pairs = np.flatnonzero(curve_of[1:] == curve_of[:-1])
    tied[pairs] = tied[pairs + 1] = True
    best[curve_of[~tied]] = rows[~tied]
    if not len(pairs):
        return best
    rows = rows[tied]
    speed = np.nan_to_num(table.per_user[rows], nan=0.0)
    # lexsort's last key is the primary one: by curve, then the tie-breakers ascending,
    # so each curve's last row is its best.
    order = rows[np.lexsort((-table.concurrency[rows], speed, table.curve[rows]))]
    curve = table.curve[order]
    last = np.flatnonzero(np.append(curve[1:] != curve[:-1], True))
    best[curve[last]] = order[last]
    return best
