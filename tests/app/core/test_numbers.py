"""Whole numbers from text: only ASCII digits that int reads, of a size columns hold."""

from __future__ import annotations

import pytest

from app.core.numbers import whole_number


@pytest.mark.parametrize(
    ("text", "value"), [("0", 0), ("64", 64), ("007", 7), ("9" * 18, 10**18 - 1)]
)
def test_ascii_digits_are_read(text: str, value: int) -> None:
    assert whole_number(text) == value


@pytest.mark.parametrize(
    "text",
    [None, "", " 1", "1 ", "-1", "+1", "1.0", "1e3", "²", "١٢", "9" * 19, "9" * 5000, "0x10"],
)
def test_anything_else_is_not_a_whole_number(text: str | None) -> None:
    # "²".isdigit() is true and int("²") raises; "9" * 5000 is past int's digit limit.
    assert whole_number(text) is None
