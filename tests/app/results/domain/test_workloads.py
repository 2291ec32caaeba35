"""The workload table: every workload names real regions, its clause, and what it suggests."""

from __future__ import annotations

from app.core.regions import REQUIRED_REGIONS
from app.results.domain.workloads import workloads


def test_the_three_workloads_of_the_buyers_guide() -> None:
    table = workloads()
    assert list(table) == ["interactive", "batch", "agentic"]
    for workload in table.values():
        assert workload.regions and set(workload.regions) <= set(REQUIRED_REGIONS)
        assert workload.regions_clause.startswith("R §5.4") and workload.summary
    assert table["agentic"].agentic and not table["interactive"].agentic
    # Interactive use is latency-bound; batch is not.
    assert table["interactive"].ttft_p90_max_ms and table["interactive"].tps_per_user_min
    assert table["batch"].ttft_p90_max_ms is None and table["batch"].tps_per_user_min is None
    assert "low_latency" in table["interactive"].regions
    assert "high_concurrency" in table["batch"].regions
