"""A point's accuracy detail: what is kept of an accuracy file, and how it reads."""

from __future__ import annotations

from app.core.accuracy import (
    MAX_DATASETS,
    MAX_NAME,
    GatedMetric,
    PointAccuracy,
    dataset_scores,
    on_threshold_scale,
    score_text,
)


def test_the_gates_rescaling_reads_a_fraction_as_a_percentage_only_against_a_percentage() -> None:
    assert on_threshold_scale(0.84, 82.3) == 84.0
    assert on_threshold_scale(0.84, 0.5) == 0.84  # a bound on the fraction's own scale
    assert on_threshold_scale(84.0, 82.3) == 84.0


def test_a_metric_meets_its_bounds_and_says_by_how_much() -> None:
    above = GatedMetric(metric="exact_match", value=83.83, lower=82.2987)
    assert above.meets and round(above.margin_pct or 0, 2) == 1.86
    ranged = GatedMetric(metric="gen_len", value=9.1e6, lower=7.35e6, upper=8.98e6)
    assert not ranged.meets


def test_entries_are_kept_bounded_with_the_clients_aliases() -> None:
    entries = {f"set-{i}" * 50: {"unit_samples": "30", "num_repeats": 8} for i in range(40)}
    scores = {name: {"exact_match": 84.0} for name in entries}
    kept = dataset_scores(entries, scores)
    assert len(kept) == MAX_DATASETS and all(len(d.dataset_name) == MAX_NAME for d in kept)
    assert (kept[0].num_samples, kept[0].n_repeats, kept[0].inline) == (30, 8, False)
    odd = dataset_scores({"x": {"num_samples": -4, "n_repeats": "many"}}, {})
    assert (odd[0].num_samples, odd[0].n_repeats, odd[0].scores) == (None, None, {})


def test_a_stored_detail_that_cannot_be_read_is_none() -> None:
    assert PointAccuracy.read(None) is None
    assert PointAccuracy.read({"datasets": "not a list"}) is None
    stored = {"datasets": [{"dataset_name": "gpqa", "scores": {"exact_match": 83.5}}]}
    read = PointAccuracy.read(stored)
    assert read is not None and read.gated("exact_match") is None


def test_accuracy_figures_read_as_people_write_them() -> None:
    assert [score_text(v) for v in (38.81, 38.391408, 8167644.0, 0.7, 84.0)] == [
        "38.81", "38.3914", "8,167,644", "0.7", "84",
    ]  # fmt: skip
