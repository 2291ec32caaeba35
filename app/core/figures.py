"""One way to write each kind of figure, on every page and in every script.

The table below is the one home: pages format with the ``figure`` filter, services that
write a figure into text (a disclosure's provisioned power) call ``figure``, and scripts
with ``EndpointsPoints.figure`` (static/points.js), which reads the same table from the
page (``figure_formats_json``). Both round as browsers do.
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypedDict


class Format(TypedDict, total=False):
    decimals: int
    prefix: str
    suffix: str
    # At or above this many (a duration in ms), the figure is written in seconds.
    seconds_from: float


FORMATS: dict[str, Format] = {
    "tps": {"decimals": 1},  # system and goodput tokens/s, tokens/s per kW
    "per_user": {"decimals": 2},  # tokens/s per user, interactivity
    "ms": {"decimals": 1, "seconds_from": 10_000},  # TTFT in a column of ms: 12 s, not 12000.0
    "duration": {"decimals": 1, "suffix": " ms", "seconds_from": 10_000},  # the same, in prose
    "tpot_ms": {"decimals": 2},  # time per output token
    "count": {"decimals": 0},  # requests, tokens, users, systems
    "kw": {"decimals": 1},
    "usd": {"decimals": 2, "prefix": "$"},
    "usd_per_mtok": {"decimals": 3, "prefix": "$"},
    "percent": {"decimals": 1, "suffix": "%"},  # a share given as a fraction (0.5 → 50.0%)
}
MISSING = "—"


def _fixed(value: float, decimals: int) -> str:
    """*value* to *decimals* places, thousands grouped, as browsers format numbers: from
    its shortest decimal form (the one both languages print), a half away from zero."""
    written = Decimal(repr(float(value)))
    step = Decimal(1).scaleb(-decimals)
    return f"{written.quantize(step, rounding=ROUND_HALF_UP):,.{decimals}f}"


def figure(value: float | None, kind: str) -> str:
    """*value* written as figures of its *kind* are; "—" where there is none."""
    form = FORMATS[kind]
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    number = float(value) * (100 if kind == "percent" else 1)
    seconds_from = form.get("seconds_from")
    if seconds_from is not None and abs(number) >= seconds_from:
        return f"{_fixed(number / 1000, 0)} s"
    return f"{form.get('prefix', '')}{_fixed(number, form['decimals'])}{form.get('suffix', '')}"


def figure_formats_json() -> str:
    """The table for the scripts."""
    table: dict[str, Any] = dict(FORMATS)
    return json.dumps(table, separators=(",", ":"))
