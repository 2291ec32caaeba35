"""Local caches of stored objects (an S3 store's local copies, each host's extracted
bundles), kept to a bound: the least recently used go first; in a folder that is the
portal's user's alone."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# An entry used this recently is never evicted: another process may be about to open it.
GRACE_S = 600


@dataclass(frozen=True)
class CacheEntry:
    used: float  # when it was last used (its mtime)
    size: int  # bytes
    remove: Callable[[], None]


def evict_least_recent(entries: Sequence[CacheEntry], kept: int, bound: int) -> None:
    """Remove *entries*, least recently used first, until they and the *kept* bytes (the
    entry just used) fit in *bound*; none used within the last ``GRACE_S`` goes."""
    total = kept + sum(entry.size for entry in entries)
    now = time.time()
    for entry in sorted(entries, key=lambda e: e.used):
        if total <= bound:
            break
        if now - entry.used >= GRACE_S:
            entry.remove()
            total -= entry.size


class CacheFolderRefused(PermissionError):
    """A cache folder the portal will not trust."""


def private_folder(path: Path) -> Path:
    """*path*, made if missing, as a folder only this process's user may enter.

    What is cached there is trusted (an "extracted bundle" is read as the bundle), so a
    folder another user owns, or a link, is refused, naming it; one of ours that others
    may enter is closed to them."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise CacheFolderRefused(f"the cache folder {path} is a link or not a folder")
    if info.st_uid != os.geteuid():
        raise CacheFolderRefused(
            f"the cache folder {path} belongs to another user (uid {info.st_uid}); choose "
            "a folder of the portal's own (ENDPOINTS_PORTAL_STORAGE_CACHE_DIR)"
        )
    if info.st_mode & 0o077:
        path.chmod(0o700)
    return path
