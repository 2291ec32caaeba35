"""How a point's responses ended (the official client's ``finish_reason_counts``): a
point where many responses stopped on the output length limit is fast partly because its
answers were cut short, and every surface that shows the point says so.

One rule, used by the checks that store the counts, the published record and every page:
more than ``CUT_SHORT_SHARE`` of the responses ended on the length limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The official client's finish_reason_counts key "length" is the output limit.
CUT_SHORT_SHARE = 0.05


def finish_reason_counts(raw: Any) -> dict[str, int] | None:
    """The counts as a summary stores them, or None where the summary has none (older
    summaries) or they are not counts: a key outside the client's is kept, a value that
    is not a whole number ≥ 0 makes the whole block unusable."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    counts: dict[str, int] = {}
    for reason, count in raw.items():
        if not isinstance(reason, str) or isinstance(count, bool) or not isinstance(count, int):
            return None
        if count < 0:
            return None
        counts[reason] = count
    return counts


def length_share(counts: Mapping[str, int] | None) -> float | None:
    """The share of responses that ended on the output length limit."""
    if not counts:
        return None
    total = sum(counts.values())
    return counts.get("length", 0) / total if total > 0 else None


def cut_short_note(counts: Mapping[str, int] | None) -> str | None:
    """The note a point carries when more than 5 % of its responses were cut short."""
    share = length_share(counts)
    if share is None or share <= CUT_SHORT_SHARE:
        return None
    assert counts is not None
    return (
        f"{share:.1%} of responses ended on the output length limit "
        f"(finish_reason_counts.length = {counts.get('length', 0):,} of "
        f"{sum(counts.values()):,}): its speed partly reflects answers cut short"
    )


class FinishReasons(BaseModel):
    """How the point's responses ended, from its summary's ``finish_reason_counts``."""

    model_config = ConfigDict(frozen=True)

    counts: dict[str, int] = Field(description="finish_reason_counts as the summary has it")
    length_share: float | None = Field(
        description="the share of responses that ended on the output length limit"
    )
    cut_short: str | None = Field(
        description=f"a note when more than {CUT_SHORT_SHARE:.0%} ended on the length limit: "
        "the point is fast partly because answers were cut"
    )

    @classmethod
    def of(cls, counts: dict[str, int] | None) -> FinishReasons | None:
        if not counts:
            return None
        share = length_share(counts)
        return cls(
            counts=counts,
            length_share=round(share, 6) if share is not None else None,
            cut_short=cut_short_note(counts),
        )
