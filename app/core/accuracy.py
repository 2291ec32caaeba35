"""A point's accuracy as its bundle reports it: each dataset's scores (the official
client's ``accuracy_results.json``) and what the official gate compares with the model's
thresholds (the sample-weighted mean per metric, bundle-format §2.5 and §6.2).

The checks store this beside the point's gate status; the published record, the pages
and the API read it from here. The gate's decision stays the official checker's
(``accuracy_status``); this is what a buyer reads to see how far above the line a point
is, and whether accuracy holds at speed.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class AccuracyGate(enum.StrEnum):
    """The official gate's word on a point: no accuracy run (none), its thresholded
    metrics met (passed) or not (failed), or an accuracy run with no threshold to meet
    (carried)."""

    NONE = "none"
    PASSED = "passed"
    FAILED = "failed"
    CARRIED = "carried"


# Entry names are free text in a bundle; what is kept of them is bounded.
MAX_DATASETS = 32
MAX_METRICS = 16
MAX_NAME = 80


class DatasetScores(BaseModel):
    """One entry of ``accuracy_scores``, with the client's own field names."""

    model_config = ConfigDict(frozen=True)

    dataset_name: str
    dataset_type: str | None = Field(
        default=None,
        description="accuracy, or performance for the performance run's own inline score",
    )
    num_samples: int | None = Field(default=None, description="unit_samples / num_samples")
    n_repeats: int | None = Field(default=None, description="num_repeats / n_repeats")
    scores: dict[str, float] = Field(description="metric → value, as the entry states it")

    @property
    def inline(self) -> bool:
        return self.dataset_type == "performance"


class GatedMetric(BaseModel):
    """One metric as the official gate compares it: the sample-weighted mean over the
    point's entries, on the threshold's scale, against the model's bounds."""

    model_config = ConfigDict(frozen=True)

    metric: str
    value: float = Field(description="the sample-weighted mean the gate compares")
    lower: float = Field(description="the model's lower bound (§6.2)")
    upper: float | None = Field(default=None, description="the upper bound, where there is one")

    @property
    def meets(self) -> bool:
        return self.value >= self.lower and (self.upper is None or self.value <= self.upper)

    @property
    def margin_pct(self) -> float | None:
        """How far above the lower bound, in percent of it."""
        return (self.value / self.lower - 1) * 100 if self.lower else None


class PointAccuracy(BaseModel):
    """A point's accuracy detail: per dataset, and what the gate compared."""

    model_config = ConfigDict(frozen=True)

    datasets: list[DatasetScores] = Field(description="each entry of accuracy_scores")
    gate: list[GatedMetric] = Field(
        default_factory=list,
        description="each thresholded metric as the gate compared it (empty: the model has "
        "no thresholds, e.g. agentic benchmarks)",
    )

    def gated(self, metric: str) -> GatedMetric | None:
        return next((g for g in self.gate if g.metric == metric), None)

    @classmethod
    def read(cls, stored: Any) -> PointAccuracy | None:
        """The stored detail, or None where the point has none (or it is unreadable:
        older rows never had it)."""
        if not stored:
            return None
        try:
            return cls.model_validate(stored)
        except ValidationError:
            return None


def on_threshold_scale(value: float, lower: float) -> float:
    """The official gate's rescaling: scorers report fractions, targets are on a 0–100
    scale, so a value in [0, 1] against a bound above 1 is read as a percentage."""
    return value * 100.0 if 0.0 <= value <= 1.0 and lower > 1.0 else value


def _whole(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number >= 0 else None


def dataset_scores(
    entries: dict[str, dict[str, Any]], scores: dict[str, dict[str, float]]
) -> list[DatasetScores]:
    """The entries (the checker's reading, name → raw entry) with their metric values
    (the checker's ``metric_scores``), bounded."""
    out = []
    for name, entry in list(entries.items())[:MAX_DATASETS]:
        values = scores.get(name) or {}
        out.append(
            DatasetScores(
                dataset_name=str(name)[:MAX_NAME],
                dataset_type=(
                    str(entry["dataset_type"])[:MAX_NAME]
                    if entry.get("dataset_type") is not None
                    else None
                ),  # fmt: skip
                num_samples=_whole(entry.get("num_samples", entry.get("unit_samples"))),
                n_repeats=_whole(entry.get("n_repeats", entry.get("num_repeats"))),
                scores={str(k)[:MAX_NAME]: v for k, v in list(values.items())[:MAX_METRICS]},
            )
        )
    return out


def score_text(value: float) -> str:
    """An accuracy figure as people read it: counts with separators (gen_len 8,167,644),
    scores to four decimals at most (38.8100 → 38.81)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4f}".rstrip("0").rstrip(".")
