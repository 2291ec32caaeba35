"""One way to write each kind of figure (app/web/figures.py)."""

from __future__ import annotations

import pytest

from app.core.figures import FORMATS, figure


@pytest.mark.parametrize(
    ("value", "kind", "written"),
    [
        (22136.04, "tps", "22,136.0"),  # grouped, as the plan writes "2,000"
        (1797216, "count", "1,797,216"),  # a count has no decimals
        (458917.7, "ms", "459 s"),  # a long wait in seconds
        (301.55, "ms", "301.6"),
        (458917.7, "duration", "459 s"),
        (35.9, "duration", "35.9 ms"),
        (3.14159, "usd_per_mtok", "$3.142"),
        (1234.5, "usd", "$1,234.50"),
        (0.5, "percent", "50.0%"),
        (2.5, "count", "3"),  # a half rounds away from zero, as browsers round
        (-2.5, "count", "-3"),
        (0.125, "per_user", "0.13"),
        (-4454911.05, "tps", "-4,454,911.1"),  # from its shortest form, not the binary one
        (None, "tps", "—"),
        (float("nan"), "per_user", "—"),
    ],
)
def test_each_kind_is_written_one_way(value: float | None, kind: str, written: str) -> None:
    assert figure(value, kind) == written


def test_every_kind_has_its_decimals() -> None:
    assert all(isinstance(f["decimals"], int) for f in FORMATS.values())
