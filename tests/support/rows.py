"""Reading back what a test just wrote."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def must(value: T | None) -> T:
    """*value*, which the test expects to be there (a row fetched, a relation set): a
    None fails the test here, where it shows, rather than as an attribute error later."""
    assert value is not None, "expected a value, found None"
    return value
