"""Goodput's definitions: per-request TTFT and rate, failures, the record's round trip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.results.domain.goodput import Request, RequestLog, request_of

MS = 1_000_000  # nanoseconds


def test_a_request_is_judged_by_its_first_chunk_and_its_own_rate() -> None:
    # 100 tokens: the first at 200 ms, the other 99 over the next 990 ms (100 tok/s).
    r = request_of(200 * MS, 1190 * MS, 100, 99, False)
    assert r.ttft_ms == pytest.approx(200) and r.decode_rate == pytest.approx(100)
    assert r.e2e_rate == pytest.approx(100 / 1.19)


def test_edge_cases_single_token_no_chunk_no_output() -> None:
    single = request_of(50 * MS, 50 * MS, 1, 0, False)
    assert single.decode_rate == math.inf  # nothing streamed after the first token
    unstreamed = request_of(None, 800 * MS, 40, None, False)
    assert unstreamed.ttft_ms == pytest.approx(800)  # the first text came with the end
    log = RequestLog([single, unstreamed, request_of(10 * MS, 20 * MS, 0, None, False)])
    result = log.goodput(None, None, 1.0)
    assert result.met == 2  # a request that produced nothing never meets the SLO
    assert log.goodput(100, 1000, 1.0).met == 1  # the single token: only its TTFT judges it


def test_failed_requests_miss_the_slo_and_limits_are_inclusive() -> None:
    ok = Request(ttft_ms=300.0, decode_rate=40.0, e2e_rate=30.0, output_tokens=10, failed=False)
    failed = Request(ttft_ms=1.0, decode_rate=1e6, e2e_rate=1e6, output_tokens=10, failed=True)
    result = RequestLog([ok, failed]).goodput(300.0, 40.0, 2.0)
    assert (result.requests, result.met, result.tokens_met) == (2, 1, 10)
    assert result.slo_attainment == 0.5 and result.goodput_tps == 5.0
    # Agentic: the per-turn e2e rate is the one compared.
    assert RequestLog([ok]).goodput(None, 35.0, 1.0, agentic=True).met == 0
    assert RequestLog([]).goodput(1.0, 1.0, 1.0).slo_attainment is None


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
    met = [
        r
        for r in items
        if not r.failed
        and r.output_tokens > 0
        and (ttft_max is None or r.ttft_ms <= ttft_max)
        and (rate_min is None or (r.e2e_rate if agentic else r.decode_rate) >= rate_min)
    ]
    assert result.met == len(met) and result.tokens_met == sum(r.output_tokens for r in met)
    assert result.requests == len(items)


def test_a_damaged_record_is_refused() -> None:
    data = RequestLog([request_of(1, 2, 3, 2, False)]).to_bytes()
    with pytest.raises(ValueError):
        RequestLog.from_bytes(b"XXXX" + data[4:])
