"""The buyer's workloads (interactive assistant, high-volume batch, agentic pipeline):
which concurrency regions fit each, and the SLA to start from.

The table is data (``workloads.toml`` beside this module), each workload with the rules
clause for its regions; the SLA values are suggestions, never rules, and the buyer may
change every one of them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from app.core.regions import REGIONS


@dataclass(frozen=True)
class Workload:
    id: str
    title: str
    summary: str
    regions: tuple[str, ...]
    regions_clause: str
    agentic: bool
    ttft_p90_max_ms: float | None = None
    tps_per_user_min: float | None = None


@cache
def workloads() -> dict[str, Workload]:
    """The workloads, in the order the table gives them."""
    table = tomllib.loads(files(__package__).joinpath("workloads.toml").read_text("utf-8"))
    found = {}
    for key, row in table.items():
        regions = tuple(row["regions"])
        unknown = [r for r in regions if r not in REGIONS]
        if unknown:
            raise ValueError(f"workloads.toml [{key}]: unknown region {unknown[0]!r}")
        found[key] = Workload(
            id=key,
            title=row["title"],
            summary=row["summary"],
            regions=regions,
            regions_clause=row["regions_clause"],
            agentic=bool(row["agentic"]),
            ttft_p90_max_ms=row.get("ttft_p90_max_ms"),
            tps_per_user_min=row.get("tps_per_user_min"),
        )
    return found
