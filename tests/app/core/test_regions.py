"""The regions' explanation agrees with the official checker's bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.domain.compliance.official import run_official_checks
from app.core.regions import clause_text, region_basis, region_name
from app.demo.bundles import BundleFactory, CurveSpec


@pytest.mark.parametrize(
    "concurrencies",
    [(1, 16, 64, 128, 256, 512, 1024), (1, 4, 16, 32, 64, 128, 256), (8, 24, 96, 300, 700, 2000)],
)
def test_the_explained_bounds_are_the_checkers(
    tmp_path: Path, concurrencies: tuple[int, ...]
) -> None:
    root = BundleFactory(curves=(CurveSpec(concurrencies=concurrencies),)).build(tmp_path)
    (curve,) = run_official_checks(root).curves
    assert curve.c_min is not None and curve.c_max is not None
    basis = region_basis(curve.c_min, curve.c_max, min(concurrencies))
    assert basis is not None
    assert curve.regions == {
        "low_latency": [1, basis.c_min],
        "low_concurrency": [basis.c_min + 1, basis.low_end],
        "med_concurrency": [basis.low_end + 1, basis.med_end],
        "high_concurrency": [basis.med_end + 1, basis.c_max],
        "margin": [basis.c_max + 1, basis.margin_end],
    }
    text = "\n".join(basis.lines())
    assert f"Low Concurrency: {basis.c_min + 1}–{basis.low_end} (C_min + 2^I" in text


def test_a_lowest_point_above_32_is_said_to_be_clamped() -> None:
    basis = region_basis(32, 4096, 64)
    assert basis is not None and basis.c_min_clamped
    assert "the lowest point is 64, above 32, so C_min is 32" in basis.lines()[1]


def test_one_name_per_region_and_readable_clauses() -> None:
    assert region_name("low_latency") == "Ultra Low Concurrency"
    assert region_name(None) == "—"
    assert clause_text("§§3–6") == "§3 to §6" and clause_text("§5.4") == "§5.4"
