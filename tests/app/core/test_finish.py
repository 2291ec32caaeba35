"""The one rule for a point whose responses were cut short at the length limit."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.finish import FinishReasons, cut_short_note, finish_reason_counts, length_share


@pytest.mark.parametrize(
    ("raw", "counts"),
    [
        ({"stop": 95, "length": 5}, {"stop": 95, "length": 5}),
        ({"stop": 1, "tool_calls": 2, "novel": 3}, {"stop": 1, "tool_calls": 2, "novel": 3}),
        (None, None),  # an older client's summary
        ({}, None),
        ([["stop", 1]], None),
        ({"stop": -1}, None),
        ({"stop": 1.5}, None),
        ({"stop": True}, None),
        ({"stop": "10"}, None),
    ],
)
def test_only_counts_are_read(raw: Any, counts: dict[str, int] | None) -> None:
    assert finish_reason_counts(raw) == counts


def test_more_than_five_percent_on_the_length_limit_carries_the_note() -> None:
    assert length_share({"stop": 0, "length": 0}) is None
    assert cut_short_note({"stop": 95, "length": 5}) is None  # 5 % exactly: no note
    note = cut_short_note({"stop": 1_880, "length": 120})
    assert note is not None and note.startswith("6.0% of responses ended on the output length")
    assert "finish_reason_counts.length = 120 of 2,000" in note
    reasons = FinishReasons.of({"stop": 1_880, "length": 120})
    assert reasons is not None and reasons.length_share == 0.06 and reasons.cut_short == note
    assert FinishReasons.of(None) is None
