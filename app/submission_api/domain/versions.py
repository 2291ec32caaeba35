"""Which CLI the Submission API takes: as the official service, a CLI older than the
required release's major.minor is answered 426, its detail naming the release and the
upgrade command."""

from __future__ import annotations

import re

UPGRADE_COMMAND = "pip install --upgrade endpoints-submission-cli"


def release(version: str) -> tuple[int, ...]:
    """The numeric release of *version* (``1.5.3.0`` → (1, 5, 3, 0)); () when none."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(x) for x in found.group().split(".")) if found else ()


def too_old(cli_version: str | None, minimum: str) -> str | None:
    """The 426 detail when *cli_version* is older than *minimum* (major.minor), else None;
    a client that names no version is not judged (an older API client)."""
    if not cli_version:
        return None
    wanted = release(minimum)[:2]
    if release(cli_version)[:2] >= wanted:
        return None
    needed = ".".join(map(str, wanted))
    return (
        f"endpoints-submission-cli {cli_version} is out of date; this portal requires "
        f"{needed}.x or later. Upgrade with: {UPGRADE_COMMAND}"
    )
