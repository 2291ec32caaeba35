"""An operator's configuration file (price presets, the review policy): read once, and
again only once it has changed, so an edit needs no restart; a file that cannot be read
is refused in the caller's own error, naming it."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")
Reader = Callable[[str, str], T]  # (text, where) → values


def read_config(path: Path, read: Reader[T], invalid: type[ValueError]) -> T:
    """*path*'s values as *read* makes them from its text."""
    try:
        stat = path.stat()
        return cast(T, _read(read, str(path), stat.st_mtime_ns, stat.st_size))
    except OSError as exc:
        raise invalid(f"{path}: cannot be read: {exc.strerror}") from exc


@lru_cache(maxsize=16)
def _read(read: Reader[Any], path: str, _mtime_ns: int, _size: int) -> Any:
    """The values of *path* as it was at that modification time and size."""
    return read(Path(path).read_text(encoding="utf-8"), path)
