"""Price presets: named price lists (USD per accelerator-hour for each accelerator model)
that a buyer may start from instead of typing their own quote.

They are data (``price_presets.toml`` beside this module, or the operator's own file in
the same format), each with its source and date, and every figure derived from them says
so: a preset is neither an MLPerf figure nor a quote.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any

from app.core.config_files import read_config

_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


@dataclass(frozen=True)
class PricePreset:
    id: str
    title: str
    source: str
    as_of: dt.date
    usd_per_accelerator_hour: Mapping[str, float]  # accelerator model → USD per hour

    def price_of(self, accelerator_model: str | None) -> float | None:
        """The list's hourly price of one *accelerator_model*, matched without regard to
        case or spacing; None where the list does not price it."""
        if not accelerator_model:
            return None
        return self._by_key.get(_key(accelerator_model))

    @cached_property
    def _by_key(self) -> dict[str, float]:
        # Made once per preset: every point of a view asks for its model's price.
        return {_key(name): usd for name, usd in self.usd_per_accelerator_hour.items()}

    @property
    def label(self) -> str:
        return f"preset: {self.title}, as of {self.as_of.isoformat()}"


def _key(model: str) -> str:
    return " ".join(model.lower().split())


class PresetsInvalid(ValueError):
    """The presets file is not usable; the message names the file, the entry and why."""


def read_presets(text: str, where: str) -> dict[str, PricePreset]:
    """The presets of a TOML *text* (read from *where*, for messages), in file order."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PresetsInvalid(f"{where}: not TOML: {exc}") from exc
    return {key: _preset(key, row, where) for key, row in table.items()}


def _preset(key: str, row: Any, where: str) -> PricePreset:
    at = f"{where} [{key}]"
    if not _ID.fullmatch(key):
        raise PresetsInvalid(f"{at}: an id is lower-case letters, digits and hyphens")
    if not isinstance(row, dict):
        raise PresetsInvalid(f"{at}: a preset is a table")
    for field, kind in (("title", str), ("source", str), ("as_of", dt.date)):
        value = row.get(field)
        if not isinstance(value, kind) or isinstance(value, dt.datetime) or value == "":
            wanted = "a date (2026-11-01)" if kind is dt.date else "a text"
            raise PresetsInvalid(f"{at}: {field} must be {wanted}")
    prices = row.get("usd_per_accelerator_hour")
    if not isinstance(prices, dict) or not prices:
        raise PresetsInvalid(f"{at}: usd_per_accelerator_hour must price at least one model")
    for model, usd in prices.items():
        good = isinstance(usd, int | float) and not isinstance(usd, bool)
        if not good or not math.isfinite(usd) or usd <= 0:
            raise PresetsInvalid(f"{at}: {model!r} must cost a number of USD more than 0")
    return PricePreset(
        id=key,
        title=row["title"],
        source=row["source"],
        as_of=row["as_of"],
        usd_per_accelerator_hour=MappingProxyType({m: float(u) for m, u in prices.items()}),
    )


def price_presets(path: Path | None = None) -> dict[str, PricePreset]:
    """The operator's presets (*path*), else the ones the portal ships. Each file is
    read once, and again only once it has changed (an edit needs no restart)."""
    return _shipped() if path is None else read_config(path, read_presets, PresetsInvalid)


@cache
def _shipped() -> dict[str, PricePreset]:
    shipped = files(__package__).joinpath("price_presets.toml").read_text("utf-8")
    return read_presets(shipped, "price_presets.toml")
