"""Price presets: the shipped list, the operator's own file refused with where and why,
and a price that comes from a list priced per accelerator model."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from app.results.domain.presets import PresetsInvalid, price_presets, read_presets
from app.results.domain.sla import Price

GOOD = """
[cloud-a]
title = "Cloud A on demand"
source = "cloud-a.example/pricing, list prices"
as_of = 2026-11-15

[cloud-a.usd_per_accelerator_hour]
"NVIDIA H200" = 3.8
"AMD Instinct MI355X" = 4
"""


def test_the_shipped_list_prices_every_demo_accelerator() -> None:
    [demo] = price_presets().values()
    assert demo.id == "demo-list-prices" and "replace them" in demo.source
    assert demo.label == "preset: Demo list prices, as of 2026-11-01"
    for model in ("NVIDIA H200", "NVIDIA B200", "NVIDIA GB200", "AMD Instinct MI355X",
                  "Intel Gaudi 3", "NVIDIA L40S"):  # fmt: skip
        assert (demo.price_of(model) or 0) > 0, model


def test_an_operator_file_replaces_the_shipped_list(tmp_path: Path) -> None:
    path = tmp_path / "presets.toml"
    path.write_text(GOOD)
    [preset] = price_presets(path).values()
    assert preset.as_of == dt.date(2026, 11, 15)
    # Matched as system_desc.json spells the model, whatever the case or spacing.
    assert preset.price_of("nvidia  h200") == 3.8 and preset.price_of("NVIDIA B200") is None
    assert preset.price_of(None) is None


def test_an_edited_file_is_read_again_without_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "presets.toml"
    path.write_text(GOOD)
    assert price_presets(path)["cloud-a"].price_of("NVIDIA H200") == 3.8
    assert price_presets(path) is price_presets(path)  # unchanged: not parsed again
    path.write_text(GOOD.replace("= 3.8", "= 3.95"))
    assert price_presets(path)["cloud-a"].price_of("NVIDIA H200") == 3.95


def test_a_preset_prices_each_model_at_its_own_rate() -> None:
    [preset] = read_presets(GOOD, "test").values()
    price = Price(preset=preset)
    assert price.hourly(8, model="NVIDIA H200") == pytest.approx(30.4)
    assert price.hourly(8, model="AMD Instinct MI355X") == 32
    assert price.hourly(8, model="NVIDIA B200") is None  # not on the list: no cost
    assert Price(per_accelerator_hour=2.5).hourly(8, model="NVIDIA B200") == 20


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[Cloud]\ntitle='x'", "[Cloud]: an id is lower-case letters, digits and hyphens"),
        (GOOD.replace('source = "cloud-a.example/pricing, list prices"', ""),
         "[cloud-a]: source must be a text"),
        (GOOD.replace("as_of = 2026-11-15", 'as_of = "last week"'),
         "[cloud-a]: as_of must be a date (2026-11-01)"),
        (GOOD.replace("= 3.8", "= 0"), "[cloud-a]: 'NVIDIA H200' must cost a number of USD"),
        (GOOD.replace("= 3.8", '= "cheap"'), "'NVIDIA H200' must cost a number of USD"),
        (GOOD.split("[cloud-a.usd")[0], "usd_per_accelerator_hour must price at least one"),
        ("[cloud-a\n", "presets.toml: not TOML"),
    ],
)  # fmt: skip
def test_a_broken_file_is_refused_with_where_and_why(text: str, problem: str) -> None:
    with pytest.raises(PresetsInvalid) as refused:
        read_presets(text, "presets.toml")
    assert problem in str(refused.value)


def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(PresetsInvalid, match="cannot be read"):
        price_presets(tmp_path / "missing.toml")
