"""The newer summary fields, read from submitted files that may be anything."""

from __future__ import annotations

import math

from app.core.run_summary import (
    MAX_CONFIG_KEYS,
    MAX_CONFIG_TEXT,
    NewerSummaryFields,
    SequenceLengths,
    early_stopping_ms,
    flat_config,
    run_config,
)


def test_a_stat_block_is_read_by_the_clients_names_and_anything_else_is_none() -> None:
    block = {"total": 7800.0, "avg": 780.0, "median": 770, "max": 1014,
             "percentiles": {"90.0": 901.0, "50.0": 770.0}}  # fmt: skip
    assert SequenceLengths.of(block) == SequenceLengths(
        avg=780.0, median=770.0, p90=901.0, max=1014.0, total=7800.0
    )
    hostile: object
    for hostile in (None, [], "780", {"avg": "780", "max": math.nan}, {"avg": True}):
        assert SequenceLengths.of(hostile) is None


def test_early_stopping_bounds_keep_the_shown_percentiles_in_ms() -> None:
    blocks = {
        "ttft_ms": {"early_stopping_percentiles": {"90.0": 2.5e8, "99.0": None, "99.9": 9e8,
                                                   "p90": 1.0, "50": 1e8}},
        "tpot_ms": {"percentiles": {"90": 1.0}},  # an older block: no bounds
        "latency_ms": "not a block",
    }  # fmt: skip
    assert early_stopping_ms(blocks) == {"ttft_ms": {"90": 250.0, "50": 100.0}}
    assert early_stopping_ms({"tpot_ms": {"early_stopping_percentiles": {"90": None}}}) is None


def test_run_config_keeps_json_scalars_and_objects_bounded() -> None:
    raw = {
        "load_pattern": {"type": "concurrency", "target_qps": None, "target_concurrency": 64},
        "warmup": {"enabled": True, "salt": "x" * 5000},
        "scheduler_random_seed": 10487924139932647040,
        "a list": [1, 2],
        "deep": {"deeper": {"deepest": {"gone": 1}}},
        "nan": math.nan,
    }
    config = run_config(raw)
    assert config is not None
    assert config["load_pattern"] == raw["load_pattern"]  # null kept: the client wrote it
    assert len(config["warmup"]["salt"]) == MAX_CONFIG_TEXT
    assert "a list" not in config and config["nan"] is None
    assert config["deep"] == {"deeper": {}}
    flat = flat_config(config)
    assert ("load_pattern.target_concurrency", "64") in flat
    assert ("load_pattern.target_qps", "null") in flat and ("warmup.enabled", "true") in flat
    wide = run_config({f"k{i}": i for i in range(1000)})
    assert wide is not None and len(wide) == MAX_CONFIG_KEYS
    nothing: object
    for nothing in (None, [], "run", {}):
        assert run_config(nothing) is None


def test_a_point_with_none_of_the_fields_has_no_block() -> None:
    assert NewerSummaryFields.of(None, None, None) is None
    fields = NewerSummaryFields.of({"avg": 780.0}, None, {"scheduler_random_seed": 1})
    assert fields is not None and fields.input_sequence_lengths == SequenceLengths(avg=780.0)
