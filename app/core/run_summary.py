"""The fields newer official clients add to ``result_summary.json``, read where a bundle
has them and absent (None) in older ones: ``input_sequence_lengths``, the
``early_stopping_percentiles`` of the latency blocks, and ``run_config`` (harness-metrics
§4.5, §6.1). Each is shown under the client's own field name.

Everything here comes from a submitted file, so it is read defensively: a block that is
not the shape the client writes is dropped, never half-read; strings and nesting are
bounded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.views import SHOWN_PERCENTILES

# run_config is small in the client (load pattern, warm-up, seeds); a larger one is cut.
MAX_CONFIG_KEYS = 64
MAX_CONFIG_DEPTH = 3
MAX_CONFIG_TEXT = 200


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def canonical_percentile(key: Any) -> str | None:
    """The checker's canonical percentile key ("90.0" → "90", "99.90" → "99.9")."""
    try:
        p = float(key)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(p) or not 0 <= p <= 100:
        return None
    return str(int(p)) if p.is_integer() else str(p)


class SequenceLengths(BaseModel):
    """A sequence-length stat block, in tokens."""

    model_config = ConfigDict(frozen=True)

    avg: float | None = None
    median: float | None = None
    p90: float | None = Field(default=None, description='percentiles["90"]')
    max: float | None = None
    total: float | None = None

    @classmethod
    def of(cls, block: Any) -> SequenceLengths | None:
        if not isinstance(block, Mapping):
            return None
        percentiles = block.get("percentiles")
        p90 = None
        if isinstance(percentiles, Mapping):
            p90 = next(
                (_number(v) for k, v in percentiles.items() if canonical_percentile(k) == "90"),
                None,
            )
        found = cls(
            avg=_number(block.get("avg")),
            median=_number(block.get("median")),
            p90=p90,
            max=_number(block.get("max")),
            total=_number(block.get("total")),
        )
        return found if any(v is not None for v in found.model_dump().values()) else None


def early_stopping_ms(blocks: Mapping[str, Any]) -> dict[str, dict[str, float]] | None:
    """``{"ttft_ms" | "tpot_ms" | "latency_ms": {"90": ms, …}}`` from each block's
    ``early_stopping_percentiles`` (nanoseconds; the client writes null where a run is too
    short for the bound), the shown percentiles only."""
    out: dict[str, dict[str, float]] = {}
    for name, block in blocks.items():
        raw = block.get("early_stopping_percentiles") if isinstance(block, Mapping) else None
        if not isinstance(raw, Mapping):
            continue
        values = {}
        for key, value in raw.items():
            canonical = canonical_percentile(key)
            number = _number(value)
            if canonical in SHOWN_PERCENTILES and number is not None:
                values[canonical] = number / 1e6
        if values:
            out[name] = values
    return out or None


def run_config(raw: Any) -> dict[str, Any] | None:
    """The client's ``run_config`` as JSON scalars and objects, bounded in keys, depth
    and text; None where there is none."""
    budget = [MAX_CONFIG_KEYS]
    dropped = object()  # lists and anything else the client's run_config never holds

    def clean(value: Any, depth: int) -> Any:
        if isinstance(value, Mapping):
            if depth >= MAX_CONFIG_DEPTH:
                return dropped
            kept: dict[str, Any] = {}
            for key, inner in value.items():
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                cleaned = clean(inner, depth + 1)
                if cleaned is not dropped:
                    kept[str(key)[:MAX_CONFIG_TEXT]] = cleaned
            return kept
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            return value if math.isfinite(value) else None
        if isinstance(value, str):
            return value[:MAX_CONFIG_TEXT]
        return dropped

    cleaned = clean(raw, 0) if isinstance(raw, Mapping) else None
    return cleaned if isinstance(cleaned, dict) and cleaned else None


def flat_config(config: Mapping[str, Any] | None, prefix: str = "") -> list[tuple[str, str]]:
    """``run_config`` as dotted names and values written as JSON (``null``, ``true``), for
    a table."""
    rows: list[tuple[str, str]] = []
    for key, value in (config or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows.extend(flat_config(value, f"{name}."))
        else:
            rows.append((name, json.dumps(value)))
    return rows


class NewerSummaryFields(BaseModel):
    """The newer summary fields of one point, under the client's names; a field the
    point's summary lacks is null (older clients write none of them)."""

    model_config = ConfigDict(frozen=True)

    input_sequence_lengths: SequenceLengths | None = Field(
        default=None, description="prompt lengths in tokens (input_sequence_lengths)"
    )
    early_stopping_percentiles: dict[str, dict[str, float]] | None = Field(
        default=None,
        description="the client's conservative early-stopping bounds of ttft/tpot/latency, "
        "in ms by percentile (early_stopping_percentiles)",
    )
    run_config: dict[str, Any] | None = Field(default=None, description="the run's configuration")

    @classmethod
    def of(
        cls,
        input_sequence_lengths: Mapping[str, float] | None,
        early_stopping: dict[str, dict[str, float]] | None,
        config: dict[str, Any] | None,
    ) -> NewerSummaryFields | None:
        """From a point's stored columns; None where it has none of them."""
        if not (input_sequence_lengths or early_stopping or config):
            return None
        return cls(
            input_sequence_lengths=(
                SequenceLengths.model_validate(input_sequence_lengths)
                if input_sequence_lengths
                else None
            ),
            early_stopping_percentiles=early_stopping or None,
            run_config=config or None,
        )
