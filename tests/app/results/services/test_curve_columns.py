"""The explorer's filters over every curve at once keep exactly the curves each filter,
read one curve at a time, would keep."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.results.services.public import QueryProblem, VisibleCurve
from app.results.services.query import ResultsQuery
from app.results.services.results import CurveColumns

words = st.sampled_from


def curve(n: int, **facts: object) -> VisibleCurve:
    return VisibleCurve(
        id=n, submission=f"s{n}", result_id=None, is_agentic=False,
        system_name=f"S{n}", provisioned_power_kw=None, system_dir=f"S{n}", stored=b"{}",
        **facts,  # type: ignore[arg-type]
    )  # fmt: skip


curves = st.builds(
    curve,
    st.integers(1, 10**6),
    benchmark_model=words(["m1", "m2"]),
    dataset=words([None, "d1"]),
    status=words(["verified", "provisional", "unverified", "withdrawn"]),
    availability=words([None, "Available", "Preview", "RDI", "odd"]),
    division=words([None, "Standardized", "serviced", "RDI"]),
    scenario=words([None, "CoP", "con"]),
    power_estimated=st.booleans(),
    superseded_by=words([None, "2026-12-C1"]),
    organization=words(["Acme Corp", "acme labs", "Borealis"]),
    accelerator_model=words([None, "NVIDIA H200", "AMD MI355X"]),
    accelerator_count=words([None, 4, 8]),
    published_in=words(["2026-10-C1", "2026-11-C0", "2026-11-C1"]),
    facts=st.fixed_dictionaries(
        {}, optional={"precision": words(["bf16", "fp8"]), "nodes": words(["1", "2"])}
    ),
)


def blank_mostly(*values: object) -> st.SearchStrategy[object]:
    """A filter left blank three times in four: curves then pass the other filters."""
    return words([None] * 3 * len(values) + list(values))


queries = st.builds(
    ResultsQuery,
    statuses=st.sets(words(["verified", "provisional", "unverified"]), min_size=2).map(tuple),
    availabilities=st.sets(words(["Available", "Preview", "RDI"]), min_size=2).map(tuple),
    division=blank_mostly("standardized", "Serviced", "rdi"),
    scenario=blank_mostly("cop", "CoN"),
    exclude_estimated_power=st.booleans(),
    include_superseded=st.booleans(),
    organization=blank_mostly("ACME", "lab", "zzz"),
    accelerator=blank_mostly("h200", "MI3"),
    accelerator_count=blank_mostly(8),
    facets=st.lists(
        st.tuples(words(["precision"]), words(["bf16", "fp8", "fp4"]))
        | st.tuples(words(["nodes"]), words(["1", "2"])),
        max_size=2,
        unique_by=lambda pair: pair[0],
    ).map(tuple),
    published_from=blank_mostly(dt.date(2026, 11, 4)),
    published_to=blank_mostly(dt.date(2026, 11, 4), dt.date(2026, 10, 1)),
)


def kept_one_by_one(c: VisibleCurve, benchmark: str, dataset: str | None, q: ResultsQuery) -> bool:
    def same(value: str | None, wanted: str | None) -> bool:
        return wanted is None or (value or "").lower() == wanted.lower()

    filed_as = c.availability if c.availability in ("Available", "Preview", "RDI") else "Available"
    return (
        c.benchmark_model == benchmark
        and c.status in q.statuses
        and (c.dataset or None) == dataset
        and filed_as in q.availabilities
        and same(c.division, q.division)
        and same(c.scenario, q.scenario)
        and not (q.exclude_estimated_power and c.power_estimated)
        and (q.include_superseded or c.superseded_by is None)
        and (q.organization is None or q.organization.lower() in c.organization.lower())
        and (q.accelerator is None or q.accelerator.lower() in (c.accelerator_model or "").lower())
        and (q.accelerator_count is None or c.accelerator_count == q.accelerator_count)
        and all(c.facts.get(facet) == value for facet, value in q.facets)
        and (q.published_from is None or DAYS[c.published_in] >= q.published_from)
        and (q.published_to is None or DAYS[c.published_in] <= q.published_to)
    )


DAYS = {  # each cohort's Wednesday
    "2026-10-C1": dt.date(2026, 10, 21),
    "2026-11-C0": dt.date(2026, 11, 4),
    "2026-11-C1": dt.date(2026, 11, 18),
}


@settings(max_examples=300, deadline=None)
@given(st.lists(curves, max_size=30), queries, words(["m1", "m2"]), words([None, "d1"]))
def test_the_columns_keep_what_each_curve_would(
    shown: list[VisibleCurve], q: ResultsQuery, benchmark: str, dataset: str | None
) -> None:
    columns = CurveColumns.of(shown)
    of_it = [c for c in shown if c.benchmark_model == benchmark and (c.dataset or None) == dataset]
    unlisted = [f for f, value in q.facets if value not in {c.facts.get(f) for c in of_it}]
    if unlisted:  # a value no result of the benchmark discloses is refused, by name
        with pytest.raises(QueryProblem) as refused:
            columns.matching(benchmark, dataset, q)
        assert refused.value.field == unlisted[0]
        return
    expected = [n for n, c in enumerate(shown) if kept_one_by_one(c, benchmark, dataset, q)]
    assert columns.matching(benchmark, dataset, q) == expected
