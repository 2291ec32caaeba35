"""The extracted bundle: each host's own cache of an archive's files.

The archive in the artifact store is the record. The checker reads a folder and reviewers
read single files, so each host (web or worker) extracts the archive once, into
``<storage cache>/bundles/<archive sha256>``, and keeps it as a cache: it is safe to
delete at any time, as the next reader extracts it again from the store, with the
hardened reader and the portal's limits, in a child process under the archive budget
(``app.submissions.services.reading``), once the archive's hash is checked. Hosts share
nothing but the store: a worker on another machine extracts its own copy.
"""

from __future__ import annotations

import os
import shutil
import time
from functools import partial
from pathlib import Path

from app.core.paths import OutsideFolder, inside
from app.db.models import Submission
from app.settings import Settings
from app.storage import (
    ObjectRefused,
    StorageError,
    archive_key,
    artifact_store,
    check_content,
)
from app.storage.cache import CacheEntry, evict_least_recent
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.services.reading import read_archive

# A staging folder this old was left by a process that died while extracting.
_ABANDONED_S = 6 * 3600


def keep_extraction(settings: Settings, staged: Path, sha256: str) -> None:
    """Keep an accepted upload's extraction (*staged*) as the cached copy of archive
    *sha256*; a copy another process cached meanwhile is as good, and ours goes."""
    target = _cached(settings, sha256)
    try:
        os.replace(staged, target)
    except OSError:  # already there (same bytes, same files): keep the one in place
        shutil.rmtree(staged, ignore_errors=True)


def bundle_folder(settings: Settings, submission: Submission) -> Path:
    """The submission's bundle folder on this host, extracted from the store first if
    this host has no copy. Raises the store's errors: ``StoreUnavailable`` (try again
    later), or another ``StorageError`` (the archive is gone, damaged, or refused by the
    limits now in force: no later attempt reads it)."""
    return archive_folder(settings, submission.archive.sha256, submission.bundle_root)


def archive_folder(settings: Settings, sha256: str, bundle_root: str | None) -> Path:
    """:func:`bundle_folder` for the archive *sha256*, whose bundle is at *bundle_root*."""
    cached = _cached(settings, sha256)
    if not cached.is_dir():
        _extract_from_store(settings, sha256, cached)
    os.utime(cached)  # recently used: evicted last
    try:
        return inside(cached, *_parts(bundle_root))
    except OutsideFolder as exc:  # a stored name that leads out: never followed
        raise StorageError(f"the stored bundle folder is refused: {exc}") from exc


def _parts(bundle_root: str | None) -> list[str]:
    return [part for part in (bundle_root or "").split("/") if part]


def _cached(settings: Settings, sha256: str) -> Path:
    key = archive_key(sha256)  # refuses anything but a sha256: never a path from outside
    return settings.bundles_dir / key.split("/", 1)[1]


def _extract_from_store(settings: Settings, sha256: str, target: Path) -> None:
    store = artifact_store(settings)
    key = archive_key(sha256)
    archive = store.local_path(key)
    # The local copy is checked, not the store's object read again: a damaged archive is
    # reported, never extracted.
    with archive.open("rb") as raw:
        check_content(key, raw, store.location)
    try:
        reading = read_archive(settings, archive, keep_events=False)
    except ArchiveRejected as exc:  # the portal's limits were lowered since it was taken
        raise ObjectRefused(f"the stored archive is refused now: {exc.message}") from exc
    keep_extraction(settings, reading.tree, sha256)
    reading.discard()
    _evict(settings, keep=target)


def _tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _evict(settings: Settings, keep: Path) -> None:
    """Least recently used bundles go until the cache fits its bound again, and so do
    the half-made folders of processes killed while extracting."""
    now = time.time()
    folders = [f for f in settings.bundles_dir.iterdir() if f.is_dir() and f != keep]
    for folder in folders:
        if folder.name.startswith(".") and now - folder.stat().st_mtime > _ABANDONED_S:
            shutil.rmtree(folder, ignore_errors=True)
    try:
        entries = [
            CacheEntry(f.stat().st_mtime, _tree_size(f), partial(shutil.rmtree, f, True))
            for f in folders
            if len(f.name) == 64
        ]
        kept = _tree_size(keep)
    except FileNotFoundError:  # another process evicted at the same time: next time
        return
    evict_least_recent(entries, kept, settings.storage_cache_bytes)
