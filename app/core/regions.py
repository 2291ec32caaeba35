"""The concurrency regions as people read them: one name per region, and where each
bound comes from (rules §5.4). The bounds themselves are the official checker's; this
module only explains them, and a test holds the explanation to the checker's numbers."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

# The four regions every curve covers with its active points (rules §5.2), and the 10%
# margin above C_max that a point may fall in without covering any of them.
REQUIRED_REGIONS = ("low_latency", "low_concurrency", "med_concurrency", "high_concurrency")
REGIONS = (*REQUIRED_REGIONS, "margin")
REGION_NAMES = {
    "low_latency": "Ultra Low Concurrency",
    "low_concurrency": "Low Concurrency",
    "med_concurrency": "Medium Concurrency",
    "high_concurrency": "High Concurrency",
    "margin": "10% margin above C_max",
    "submitters_choice": "submitter's choice",
}


class Offline(enum.StrEnum):
    """Whether a point is an Offline run (rules §1.4): elected from the curve, or a
    dedicated run without per-user latency (a ceiling, never a point of the line)."""

    NONE = "none"
    ELECTED = "elected"
    DEDICATED = "dedicated"


ULTRA_LOW_MAX = 32  # C_min is at most 32 (rules §5.4)


def region_name(key: str | None) -> str:
    if not key:
        return "—"
    return REGION_NAMES.get(key, key.replace("_", " "))


@dataclass(frozen=True)
class RegionBasis:
    c_min: int
    c_max: int
    lowest_point: int | None
    interval: float  # I = log2(C_max - C_min) / 3
    low_end: int
    med_end: int
    margin_end: int

    @property
    def c_min_clamped(self) -> bool:
        return self.lowest_point is not None and self.lowest_point > self.c_min

    def lines(self) -> list[str]:
        """Each bound with the arithmetic behind it."""
        why_min = (
            f"the lowest point is {self.lowest_point}, above {ULTRA_LOW_MAX}, so C_min is "
            f"{self.c_min}"
            if self.c_min_clamped
            else "the lowest fixed-concurrency point"
        )
        return [
            f"C_max = {self.c_max}: the declared maximum supported concurrency.",
            f"C_min = {self.c_min}: {why_min} (1 ≤ C_min ≤ {ULTRA_LOW_MAX}).",
            f"I = log2(C_max − C_min) / 3 = log2({self.c_max - self.c_min}) / 3 "
            f"= {self.interval:.3f}.",
            f"{REGION_NAMES['low_latency']}: 1–{self.c_min} (up to C_min).",
            f"{REGION_NAMES['low_concurrency']}: {self.c_min + 1}–{self.low_end} "
            f"(C_min + 2^I = {self.c_min + 2**self.interval:.2f}, rounded).",
            f"{REGION_NAMES['med_concurrency']}: {self.low_end + 1}–{self.med_end} "
            f"(C_min + 2^(2I) = {self.c_min + 2 ** (2 * self.interval):.2f}, rounded).",
            f"{REGION_NAMES['high_concurrency']}: {self.med_end + 1}–{self.c_max} (up to C_max).",
            f"{REGION_NAMES['margin']}: {self.c_max + 1}–{self.margin_end} "
            "(ceil(1.10 × C_max)); valid, but it covers no required region.",
        ]


def region_basis(c_min: int, c_max: int, lowest_point: int | None) -> RegionBasis | None:
    """The arithmetic of rules §5.4 for these C_min and C_max (None when undefined)."""
    if not 1 <= c_min <= ULTRA_LOW_MAX or c_max <= c_min:
        return None
    interval = math.log2(c_max - c_min) / 3
    return RegionBasis(
        c_min=c_min,
        c_max=c_max,
        lowest_point=lowest_point,
        interval=interval,
        low_end=round(c_min + 2**interval),
        med_end=round(c_min + 2 ** (2 * interval)),
        margin_end=math.ceil(1.10 * c_max),
    )


def clause_text(clause: str | None) -> str:
    """'§§3–6' (the checker's way of writing a span of sections) as '§3 to §6'."""
    if not clause:
        return "—"
    if clause.startswith("§§") and "–" in clause:
        first, _, last = clause[2:].partition("–")
        return f"§{first} to §{last}"
    return clause
