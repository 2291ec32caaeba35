"""Goodput's definitions: per-request TTFT and rate, failures, the record's round trip."""

from __future__ import annotations

import math
import struct
import zlib
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.runs.domain.goodput import ROW, GoodputIndex, Request, RequestLog, request_of

MS = 1_000_000  # nanoseconds


def test_a_request_is_judged_by_its_first_chunk_and_its_own_rate() -> None:
    # 100 tokens: the first at 200 ms, the other 99 over the next 990 ms (100 tok/s).
    r = request_of(200 * MS, 1190 * MS, 100, 99, False)
    assert r.ttft_ms == pytest.approx(200) and r.decode_rate == pytest.approx(100)
    assert r.e2e_rate == pytest.approx(100 / 1.19)


def test_edge_cases_single_token_no_chunk_no_output() -> None:
    single = request_of(50 * MS, 50 * MS, 1, 0, False)
    assert single.decode_rate == -math.inf  # nothing streamed after the first chunk: no rate
    unstreamed = request_of(None, 800 * MS, 40, None, False)
    assert unstreamed.ttft_ms == pytest.approx(800)  # the first text came with the end
    assert unstreamed.decode_rate == -math.inf  # one chunk: no per-user rate either
    log = RequestLog([single, unstreamed, request_of(10 * MS, 20 * MS, 0, None, False)])
    result = log.goodput(None, None, 1.0)
    assert result.met == 2  # a request that produced nothing never meets the SLO
    # A one-chunk response misses any minimum rate; only an SLA without one keeps it.
    assert log.goodput(100, 1, 1.0).met == 0
    assert log.goodput(100, None, 1.0).met == 1
    # A request issued and never completed misses every SLO.
    lost = request_of(None, None, 0, None, True)
    assert RequestLog([lost, single]).goodput(None, None, 1.0).slo_attainment == 0.5


def test_failed_requests_miss_the_slo_and_limits_are_inclusive() -> None:
    ok = Request(ttft_ms=300.0, decode_rate=40.0, e2e_rate=30.0, output_tokens=10, failed=False)
    failed = Request(ttft_ms=1.0, decode_rate=1e6, e2e_rate=1e6, output_tokens=10, failed=True)
    result = RequestLog([ok, failed]).goodput(300.0, 40.0, 2.0)
    assert (result.requests, result.met, result.tokens_met) == (2, 1, 10)
    assert result.slo_attainment == 0.5 and result.goodput_tps == 5.0
    # Agentic: the per-turn e2e rate is the one compared.
    assert RequestLog([ok]).goodput(None, 35.0, 1.0, agentic=True).met == 0
    assert RequestLog([]).goodput(1.0, 1.0, 1.0).slo_attainment is None


def f32(value: float) -> float:
    """A value as the record keeps it (32-bit)."""
    return float(array("f", [value])[0])


def meets(r: Request, ttft_max: float | None, rate_min: float | None, agentic: bool) -> bool:
    """The definition, request by request, on the record's values."""
    rate = f32(r.e2e_rate if agentic else r.decode_rate)
    return (
        not r.failed
        and r.output_tokens > 0
        and (ttft_max is None or f32(r.ttft_ms) <= ttft_max)
        and (rate_min is None or rate >= rate_min)
    )


requests = st.builds(
    Request,
    ttft_ms=st.floats(0, 1e5, allow_nan=False),
    decode_rate=st.one_of(st.floats(0, 1e4, allow_nan=False), st.just(math.inf)),
    e2e_rate=st.floats(0, 1e4, allow_nan=False),
    output_tokens=st.integers(0, 10_000),
    failed=st.booleans(),
)
limits = st.one_of(st.none(), st.floats(0, 1e5, allow_nan=False))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(requests, max_size=50), limits, limits, st.booleans())
def test_the_packed_record_answers_exactly_as_the_requests_do(
    items: list[Request], ttft_max: float | None, rate_min: float | None, agentic: bool
) -> None:
    log = RequestLog.from_bytes(RequestLog(items).to_bytes())
    assert len(log) == len(items)
    result = log.goodput(ttft_max, rate_min, 10.0, agentic=agentic)
    met = [r for r in items if meets(r, ttft_max, rate_min, agentic)]
    assert result.met == len(met) and result.tokens_met == sum(r.output_tokens for r in met)
    assert result.requests == len(items)


def test_a_damaged_record_is_refused() -> None:
    data = RequestLog([request_of(1, 2, 3, 2, False)]).to_bytes()
    with pytest.raises(ValueError):
        RequestLog.from_bytes(b"XXXX" + data[4:])


# Values from a small set, so that ties and limits equal to a request's own value are
# common; logs long enough to fill several index rows.
coarse = st.sampled_from([0.0, 0.5, 1.0, 40.0, 99.9, 100.0, 250.0, 300.0, 1e4, math.inf])
coarse_requests = st.builds(
    Request,
    ttft_ms=st.sampled_from([0.0, 1.0, 50.0, 99.9, 100.0, 300.0, 300.0001, 5000.0]),
    decode_rate=coarse,
    e2e_rate=coarse,
    output_tokens=st.integers(0, 3),
    failed=st.booleans(),
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.lists(coarse_requests, max_size=2 * ROW + 7), st.booleans()), max_size=5),
    st.one_of(st.none(), st.sampled_from([0.0, 50.0, 99.9, 100.0, 300.0, 1e9])),
    st.one_of(st.none(), st.sampled_from([0.0, 0.5, 40.0, 100.0, 1e4, math.inf])),
)
def test_the_index_answers_every_point_as_the_definition_does(
    points: list[tuple[list[Request], bool]], ttft_max: float | None, rate_min: float | None
) -> None:
    index = GoodputIndex([RequestLog(items) for items, _a in points], [a for _i, a in points])
    met, tokens = index.met(ttft_max, rate_min)
    for n, (items, agentic) in enumerate(points):
        good = [r for r in items if meets(r, ttft_max, rate_min, agentic)]
        assert met[n] == len(good) and tokens[n] == sum(r.output_tokens for r in good)
    assert list(index.requests) == [len(items) for items, _a in points]


def test_a_limit_between_two_float32_values_is_not_rounded_onto_one() -> None:
    # 40.0 is a float32; a minimum a hair above it must not round down to it.
    log = RequestLog([Request(100.0, 40.0, 40.0, 5, False)])
    assert log.goodput(None, 40.0, 1.0).met == 1
    assert log.goodput(None, 40.000000001, 1.0).met == 0
    assert log.goodput(99.99999999, None, 1.0).met == 0


def test_a_first_version_record_with_doubles_is_read() -> None:
    items = [Request(123.456789, 41.5, 30.25, 7, False), Request(5.0, 1.0, 1.0, 2, True)]
    columns = (
        array("d", [r.ttft_ms for r in items]),
        array("d", [r.decode_rate for r in items]),
        array("d", [r.e2e_rate for r in items]),
        array("I", [r.output_tokens for r in items]),
        array("B", [int(r.failed) for r in items]),
    )
    body = b"".join(c.tobytes() for c in columns)
    log = RequestLog.from_bytes(struct.pack("<4sI", b"RQL1", 2) + zlib.compress(body))
    assert list(log.output_tokens) == [7, 2] and log.ttft_ms[0] == f32(123.456789)
    assert log.goodput(200, 40, 1.0).met == 1


def test_every_position_in_a_full_row_is_found() -> None:
    # Distinct rates over several full rows: the binary search must land on each floor.
    n = 3 * ROW + 11
    log = RequestLog([Request(1.0, float(k), float(k), 1, False) for k in range(n)])
    index = GoodputIndex([log], [False])
    for floor in range(n + 1):
        assert index.met(10.0, floor)[0][0] == n - floor
