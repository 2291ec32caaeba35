"""The bundle files' reader, with hypothesis: plain data always reads back as itself, and
any bytes at all end in a value or an ``Unreadable`` with a reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.bundle_files import Unreadable, read_data, read_mapping

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**128) + 1, max_value=2**128 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@SETTINGS
@given(value=plain)
def test_plain_json_reads_back_as_itself(tmp_path: Path, value: object) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(value))
    assert read_data(path) == value


@SETTINGS
@given(value=plain)
def test_plain_yaml_reads_back_as_itself(tmp_path: Path, value: object) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(value))
    assert read_data(path) == value


@SETTINGS
@given(raw=st.binary(max_size=400), suffix=st.sampled_from([".json", ".yaml"]))
def test_any_bytes_read_or_are_refused_with_a_reason(
    tmp_path: Path, raw: bytes, suffix: str
) -> None:
    path = tmp_path / f"x{suffix}"
    path.write_bytes(raw)
    try:
        read_data(path)
    except Unreadable as problem:
        assert str(problem)


@SETTINGS
@given(text=st.text(alphabet="{}[]:,\"'&*!- \n0123456789abn.", max_size=300))
def test_structured_noise_reads_or_is_refused(tmp_path: Path, text: str) -> None:
    for suffix in (".json", ".yaml"):
        path = tmp_path / f"x{suffix}"
        path.write_text(text)
        try:
            read_data(path)
        except Unreadable as problem:
            assert str(problem)


def test_a_repeated_yaml_key_and_an_alias_bomb_are_named(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("model_name: a\nmodel_name: b\n")
    try:
        read_data(path)
    except Unreadable as problem:
        assert "'model_name' appears twice" in str(problem)
    else:
        raise AssertionError("a repeated key was read")
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text("scheduler_rng_seed: 10487924139932647040\n")  # > 2^63, a real seed
    assert read_data(seeds) == {"scheduler_rng_seed": 10487924139932647040}


@pytest.mark.parametrize("depth", [66, 5_000, 200_000])
@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "[" * n + "]" * n,
        lambda n: "{a: " * n + "1" + "}" * n,
        lambda n: "- " * n + "x\n",  # block sequences in the compact form: [[[x]]]
    ],
    ids=["flow-list", "flow-mapping", "block-list"],
)
def test_deep_yaml_is_refused_as_nested_too_deep(
    tmp_path: Path, shape: Callable[[int], str], depth: int
) -> None:
    """Past the limit of 64 levels, or past what the parser itself can follow: refused
    with a reason either way, never a crash of the reading process."""
    path = tmp_path / "deep.yaml"
    path.write_text(shape(depth))
    with pytest.raises(Unreadable, match="nested deeper"):
        read_data(path)
    path.write_text(shape(32))
    assert read_data(path) is not None


def test_more_aliases_than_the_limit_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    many = ", ".join(["*a"] * 1_001)
    path.write_text(f"x: &a 1\ny: [{many}]\n")
    with pytest.raises(Unreadable, match="more than 1000 YAML aliases"):
        read_data(path)
    path.write_text(f"x: &a 1\ny: [{', '.join(['*a'] * 1_000)}]\n")
    assert read_data(path)["y"] == [1] * 1_000


def test_a_mapping_is_read_or_is_none(tmp_path: Path) -> None:
    good, listed, broken = tmp_path / "a.yaml", tmp_path / "b.json", tmp_path / "c.yaml"
    good.write_text("steady_state: {start_s: 1}\n")
    listed.write_text("[1]")
    broken.write_text("a: 1\na: 2\n")
    assert read_mapping(good) == {"steady_state": {"start_s": 1}}
    assert read_mapping(listed) is None
    assert read_mapping(broken) is None
    assert read_mapping(tmp_path / "missing.json") is None


def test_the_clients_sum_of_squares_of_a_long_run_reads(tmp_path: Path) -> None:
    """final_snapshot.json keeps each series' sum of squares in nanoseconds squared: a
    run of 20,000 requests of 30 s each is past 2^64 and is honest data."""
    sum_sq = 20_000 * (30 * 10**9) ** 2
    assert sum_sq > 2**64
    path = tmp_path / "final_snapshot.json"
    series = {"type": "series", "name": "sample_latency_ns", "count": 20_000, "sum_sq": sum_sq}
    path.write_text(json.dumps({"state": "complete", "metrics": [series]}))
    assert read_data(path) == {"state": "complete", "metrics": [series]}
    path.write_text(json.dumps({"sum_sq": 2**128}))
    with pytest.raises(Unreadable, match="beyond ±2\\^128"):
        read_data(path)
