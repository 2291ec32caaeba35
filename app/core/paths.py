"""One way to build a path from data that came from outside (a bundle, a request, a
stored label): resolved, and refused unless it stays inside its folder."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


class OutsideFolder(ValueError):
    pass


def inside(base: Path, *parts: str) -> Path:
    """``base/parts…`` resolved (links followed), if it is *base* or below it."""
    for part in parts:
        pure = PurePosixPath(part)
        if pure.is_absolute() or ".." in pure.parts or "\\" in part or "\x00" in part:
            raise OutsideFolder(f"{part!r} is not a path inside {base.name}/")
    root = base.resolve()
    candidate = root.joinpath(*parts).resolve()
    if not candidate.is_relative_to(root):
        raise OutsideFolder(f"{'/'.join(parts)!r} leads outside {base.name}/")
    return candidate
