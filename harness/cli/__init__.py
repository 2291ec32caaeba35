"""``endpoints-harness``: measure a point, a curve or a search, recompute and analyse a run
folder, serve the simulator. One module per command (``harness/cli/<command>.py``); the
group that gathers them is imported only when a command runs."""

from __future__ import annotations

from collections.abc import Sequence

from harness.cli.kit import invoke


def main(argv: Sequence[str] | None = None) -> int:
    from harness.cli.commands import harness

    return invoke(harness, argv, "endpoints-harness")
