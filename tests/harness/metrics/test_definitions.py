"""The official metric definitions: percentiles, stat blocks, histograms."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics.definitions import (
    PERCENTILES,
    log_histogram,
    percentile_key,
    percentile_lower,
    stat_block,
)


def test_lower_percentile_never_interpolates() -> None:
    values = [10, 20, 30, 40]
    assert percentile_lower(values, 50) == 20  # floor(0.5 * 3) = 1
    assert percentile_lower(values, 90) == 30  # floor(0.9 * 3) = 2
    assert percentile_lower(values, 99.9) == 30
    assert percentile_lower(values, 100) == 40
    assert percentile_lower([7], 90) == 7
    with pytest.raises(ValueError):
        percentile_lower([], 50)


def test_keys_are_decimal_strings() -> None:
    assert [percentile_key(p) for p in (90, 99.9, 50.0)] == ["90.0", "99.9", "50.0"]
    block = stat_block([1.0, 2.0, 3.0])
    assert list(block["percentiles"]) == [percentile_key(p) for p in PERCENTILES]


def test_stat_block_values() -> None:
    values = [5, 1, 4, 2, 3]
    block = stat_block(values, integer=True)
    assert (block["total"], block["min"], block["max"], block["avg"]) == (15, 1, 5, 3)
    assert block["median"] == block["percentiles"]["50.0"] == 3
    assert block["std_dev"] == pytest.approx(math.sqrt(2.5))  # sample std (n−1)
    assert list(block) == [
        "total",
        "min",
        "max",
        "median",
        "avg",
        "std_dev",
        "percentiles",
        "histogram",
    ]
    assert stat_block([]) == {}


def test_histogram_is_log_spaced_over_at_least_a_decade() -> None:
    rng = random.Random(1)
    values = sorted(rng.uniform(100, 150) for _ in range(500)) + [-5.0]
    values.sort()
    hist = log_histogram(values)
    assert len(hist["buckets"]) == len(hist["counts"]) == 30
    lo, hi = hist["buckets"][0][0], hist["buckets"][-1][1]
    assert lo == 1.0 and hi >= 10 * lo  # min clipped to 1; span ≥ one decade
    assert sum(hist["counts"]) == len(values)
    assert hist["counts"][0] >= 1  # the negative value lands in the first bucket
    ratios = {round(b[1] / b[0], 9) for b in hist["buckets"]}
    assert len(ratios) == 1  # equal ratios: log spacing


def test_histogram_distance_is_zero_for_one_shape_and_grows_apart() -> None:
    from harness.metrics.definitions import histogram_distance, log_histogram

    values = sorted(float(v) for v in range(10, 1000))
    same = log_histogram(values)
    assert histogram_distance(same, same) == 0.0
    # Buckets of their own (another span), the same values: still near 0.
    wider = log_histogram(sorted(values + [5000.0]))
    near = histogram_distance(same, wider)
    assert near is not None and near < 0.05  # the spread within buckets is assumed
    # Every value ten times larger: nearly all of one lies below all of the other.
    apart = log_histogram([v * 10 for v in values])
    far = histogram_distance(same, apart)
    assert far is not None and far > 0.6
    assert histogram_distance(same, {"buckets": [], "counts": []}) is None


@given(
    st.lists(
        st.one_of(st.integers(0, 10**12), st.floats(0, 1e12, allow_nan=False)),
        min_size=1,
        max_size=300,
    )
)
@settings(max_examples=200, derandomize=True, database=None)
def test_each_value_is_counted_in_the_bucket_whose_edges_hold_it(values: list[float]) -> None:
    """The histogram counts by bisecting the sorted values; each value, clipped into the
    span, belongs where a scan of the edges puts it (the last bucket closed)."""
    ordered = sorted(values)
    hist = log_histogram(ordered)
    edges = [lo for lo, _ in hist["buckets"]] + [hist["buckets"][-1][1]]
    expected = [0] * len(hist["counts"])
    for value in ordered:
        clipped = min(max(value, edges[0]), edges[-1])
        inner = [i for i in range(1, len(edges) - 1) if clipped >= edges[i]]
        expected[inner[-1] if inner else 0] += 1
    assert hist["counts"] == expected
