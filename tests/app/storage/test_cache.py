"""The one eviction rule of the local caches: least recently used first, down to the
bound, never an entry used within the grace period; and the folder they live in."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from app.main import create_app
from app.settings import Settings
from app.storage.cache import (
    GRACE_S,
    CacheEntry,
    CacheFolderRefused,
    evict_least_recent,
    private_folder,
)


def test_the_least_recently_used_go_first_and_a_recent_one_stays() -> None:
    removed: list[str] = []
    now = time.time()

    def entry(name: str, age_s: float, size: int) -> CacheEntry:
        return CacheEntry(now - age_s, size, lambda: removed.append(name))

    entries = [
        entry("middle", GRACE_S * 2, 100),
        entry("oldest", GRACE_S * 3, 100),
        entry("in use", GRACE_S / 2, 100),  # the oldest would not be enough: never this
        entry("newest", GRACE_S + 1, 100),
    ]
    evict_least_recent(entries, kept=100, bound=250)
    assert removed == ["oldest", "middle", "newest"]  # 500 → 200; "in use" stays

    removed.clear()
    evict_least_recent(entries, kept=100, bound=500)
    assert removed == []  # within the bound: nothing goes


def test_the_cache_folder_is_the_portals_alone(tmp_path: Path) -> None:
    """Issue 44: the default cache was a predictable shared folder in /tmp, trusted
    without a look at who made it. Now it is under the data dir by default, made 0700,
    closed to others if it was open, and refused when another user owns it."""
    assert Settings(data_dir=tmp_path / "data").cache_dir == tmp_path / "data" / "cache"
    made = private_folder(tmp_path / "new" / "cache")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    opened = tmp_path / "open"
    opened.mkdir(mode=0o777)
    opened.chmod(0o777)
    private_folder(opened)
    assert stat.S_IMODE(opened.stat().st_mode) == 0o700
    link = tmp_path / "link"
    link.symlink_to(made)
    with pytest.raises(CacheFolderRefused, match="link"):
        private_folder(link)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_a_cache_folder_another_user_owns_stops_the_portal_at_start(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)  # nobody
    with pytest.raises(CacheFolderRefused, match="belongs to another user"):
        create_app(Settings(data_dir=tmp_path / "data", storage_cache_dir=theirs))
