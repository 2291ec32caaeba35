"""How repeatable a published point is: its submitted run and the portal's reproductions
of it (further runs of the same point) as one sample.

The spread is the sample's minimum and maximum; with three runs or more, a 95 %
confidence interval of the mean (Student's t, n − 1 degrees of freedom) and the
coefficient of variation (sample standard deviation / mean). Derived, not an MLPerf
figure: the rules publish one run per point.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

# Two-sided 95 % critical values of Student's t by degrees of freedom (1–30); past 30
# the normal's 1.96 is within 2 % of t's.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
FEWEST_FOR_AN_INTERVAL = 3


def t95(degrees_of_freedom: int) -> float:
    if degrees_of_freedom < 1:
        raise ValueError("a t interval needs at least one degree of freedom")
    return _T95[degrees_of_freedom - 1] if degrees_of_freedom <= len(_T95) else 1.96


class Spread(BaseModel):
    """One metric over the runs."""

    model_config = ConfigDict(frozen=True)

    min: float
    max: float
    mean: float
    ci95: list[float] | None = Field(
        description="[low, high] of the mean (Student's t), with three runs or more"
    )
    cv: float | None = Field(description="sample standard deviation / mean, with 3+ runs")

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        mean = statistics.fmean(values)
        ci95 = cv = None
        if len(values) >= FEWEST_FOR_AN_INTERVAL:
            sd = statistics.stdev(values)
            half = t95(len(values) - 1) * sd / math.sqrt(len(values))
            ci95 = [round(mean - half, 3), round(mean + half, 3)]
            cv = round(sd / mean, 6) if mean > 0 else None
        return cls(min=min(values), max=max(values), mean=round(mean, 3), ci95=ci95, cv=cv)


class Repeatability(BaseModel):
    """The point's runs: the submitted one first, then each reproduction that finished."""

    model_config = ConfigDict(frozen=True)

    runs: int = Field(description="the submitted run and its reproductions")
    reproductions: list[str] = Field(description="the reproductions' ids, oldest first")
    system_tps: Spread
    per_user: Spread | None = Field(description="tokens/s per user (or interactivity)")


def repeatability(
    submitted: tuple[float, float | None],
    reproduced: Sequence[tuple[str, float, float | None]],
) -> Repeatability | None:
    """The spread of *submitted* (system tok/s, per-user rate) and each reproduction's
    (id, system tok/s, per-user rate); None for a point never reproduced."""
    if not reproduced:
        return None
    tps = [submitted[0], *(r[1] for r in reproduced)]
    per_user = [submitted[1], *(r[2] for r in reproduced)]
    rates = [v for v in per_user if v is not None]
    return Repeatability(
        runs=len(tps),
        reproductions=[r[0] for r in reproduced],
        system_tps=Spread.of(tps),
        per_user=Spread.of(rates) if len(rates) == len(per_user) else None,
    )
