"""The publication snapshot: a schema of its own, versioned, that reads old records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.regions import Offline
from app.publishing.domain.snapshot import SNAPSHOT_VERSION, read_snapshot, read_stored_snapshot

# A curve as publications stored it before the schema was written down (version 1).
STORED_BEFORE: dict[str, Any] = {
    "system": "Acme H200 x8",
    "system_dir": "acme-h200",
    "benchmark_model": "llama3_1-8b",
    "dataset": "cnn_dailymail",
    "is_agentic": False,
    "x_metric": "tps_per_user",
    "c_max": 512,
    "c_min": 1,
    "regions": {"low_latency": [1, 2]},
    "points": [
        {"dir": "r1", "concurrency": 1, "region": "low_latency", "offline": "none",
         "system_tps": 180.123, "tps_per_user": 190.0, "ttft_p90_ms": 40.0},
        {"dir": "r9000", "concurrency": 9000, "offline": "dedicated", "system_tps": 17000.0},
    ],
    "step_line": [[190.0, 180.123]],
    "frontier": [[190.0, 180.123]],
    "offline_ceiling": {"system_tps": 17000.0, "concurrency": 9000},
    "elected_offline": None,
    "invalidated_points": [{"dir": "r2", "concurrency": 2, "reason": "wrong counts"}],
}  # fmt: skip


def test_a_record_stored_before_the_schema_reads_and_writes_back_unchanged() -> None:
    snapshot = read_snapshot(1, STORED_BEFORE)
    assert snapshot.points[1].offline == Offline.DEDICATED
    assert snapshot.points[1].tps_per_user is None
    assert snapshot.invalidated_points[0].reason == "wrong counts"
    # What the bundle did not measure is left out, not written as null.
    assert snapshot.stored() == STORED_BEFORE


def test_metrics_keep_three_decimals() -> None:
    first = STORED_BEFORE["points"][0]
    data = {**STORED_BEFORE, "points": [{**first, "system_tps": 1.23456}]}
    assert read_snapshot(1, data).points[0].system_tps == 1.235


def test_an_unknown_version_is_refused_not_misread() -> None:
    with pytest.raises(ValueError, match=f"version {SNAPSHOT_VERSION + 1}"):
        read_snapshot(SNAPSHOT_VERSION + 1, STORED_BEFORE)


def test_every_point_read_carries_the_per_user_figure_its_curve_is_drawn_on() -> None:
    plain = read_snapshot(1, STORED_BEFORE)
    assert [p.per_user for p in plain.points] == [190.0, None]
    first = {**STORED_BEFORE["points"][0], "e2e_avg_interactivity": 12.5}
    agentic = read_snapshot(1, {**STORED_BEFORE, "is_agentic": True, "points": [first]})
    assert agentic.points[0].per_user == 12.5
    # Derived from the curve's kind, so the record keeps only what was measured.
    assert "per_user" not in agentic.stored()["points"][0]


def test_a_record_read_back_from_its_stored_text_is_the_record_read_from_its_values() -> None:
    """The public read path reads each stored curve's JSON text straight into the model,
    without rounding again what was rounded when it was written."""
    text = json.dumps(STORED_BEFORE)
    assert read_stored_snapshot(1, text) == read_snapshot(1, STORED_BEFORE)
    first = {**STORED_BEFORE["points"][0], "e2e_avg_interactivity": 12.5}
    agentic = {**STORED_BEFORE, "is_agentic": True, "points": [first]}
    assert read_stored_snapshot(1, json.dumps(agentic)).points[0].per_user == 12.5
    with pytest.raises(ValueError, match=f"version {SNAPSHOT_VERSION + 1}"):
        read_stored_snapshot(SNAPSHOT_VERSION + 1, text)
    # Values a bundle gave are rounded once, when the record is made.
    unrounded = {**STORED_BEFORE, "points": [{**STORED_BEFORE["points"][0], "system_tps": 1.23456}]}
    assert read_snapshot(1, unrounded).points[0].system_tps == 1.235
