"""The explorer's chart axes: which figure each may show, and which way is better.

The choices are the official visualiser's (bundle-format §7.3): x is tokens/s per user,
TTFT P90 or concurrency; y is system throughput (in the query's normalisation), tokens/s
per user, TTFT P90 or concurrency. Throughput and the per-user rate are higher-is-better,
TTFT lower-is-better; concurrency is neither, and its steps are drawn as the official
visualiser draws them, as if more were better.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "none"]


@dataclass(frozen=True)
class Axis:
    id: str
    direction: Direction

    @property
    def steps_higher(self) -> bool:
        """How the step curve compares along this axis (app.core.pareto)."""
        return self.direction != "lower"


AXES = {
    "per_user": Axis("per_user", "higher"),
    "ttft": Axis("ttft", "lower"),
    "concurrency": Axis("concurrency", "none"),
    "throughput": Axis("throughput", "higher"),
}
X_AXES = ("per_user", "ttft", "concurrency")
Y_AXES = ("throughput", "per_user", "ttft", "concurrency")
DEFAULT_X, DEFAULT_Y = "per_user", "throughput"

# Where the better results sit on the chart, when both axes say: (x higher, y higher).
_CORNERS = {
    (True, True): "↗",
    (False, True): "↖",
    (True, False): "↘",
    (False, False): "↙",
}


def better_corner(x: Axis, y: Axis) -> str | None:
    """The arrow towards the chart's better corner ("↗" for the default axes), or None
    when an axis has no better direction."""
    if x.direction == "none" or y.direction == "none":
        return None
    return _CORNERS[(x.direction == "higher", y.direction == "higher")]


def with_direction(title: str, axis: Axis) -> str:
    """An axis title that says which way is better."""
    if axis.direction == "none":
        return title
    return f"{title} · {axis.direction} is better"
