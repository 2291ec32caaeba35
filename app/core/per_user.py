"""The per-user figure a curve is drawn and filtered on (architecture §8): tokens/s per
user, or, for an agentic curve, the end-to-end normalised interactivity."""

from __future__ import annotations

from typing import Protocol


class PerUserFigures(Protocol):
    @property
    def tps_per_user(self) -> float | None: ...

    @property
    def e2e_avg_interactivity(self) -> float | None: ...


def per_user_metric(agentic: bool) -> str:
    """The name of the figure, as the API and the snapshots carry it."""
    return "e2e_avg_interactivity" if agentic else "tps_per_user"


def per_user_title(agentic: bool) -> str:
    """The figure's name on a chart's axis."""
    return "e2e avg interactivity (tok/s)" if agentic else "tokens/s per user (1000 / TPOT P90)"


def per_user(point: PerUserFigures, agentic: bool) -> float | None:
    return point.e2e_avg_interactivity if agentic else point.tps_per_user
