"""Stored artifacts behind one interface (architecture, decisions 5 and 15).

Archives and event logs are content-addressed objects: their key is made from their
sha256 and nothing else, so the same bytes are stored once and a key names exactly one
content. Two stores implement the interface, chosen by one setting
(``ENDPOINTS_PORTAL_STORAGE_URL``):

- ``file:///path`` (the embedded default: ``<data dir>/blobs``), a local directory;
- ``s3://bucket/prefix``, any S3-compatible store (endpoint and credentials from the
  standard ``AWS_*`` variables), so web and worker processes on separate hosts share
  nothing but the database, the queue and the store.

Workers that need a local file (the checker reads a folder, the re-count seeks in its
events) ask for ``local_path``: the local store's own file, or a copy that the S3 store
keeps in a bounded cache outside the data directory, checked against its hash.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Protocol

from app.storage.base import (
    ArtifactStore,
    ObjectCorrupt,
    ObjectMissing,
    ObjectRefused,
    StagingStore,
    StorageError,
    StoreUnavailable,
    archive_key,
    check_content,
    counts_key,
    events_key,
    staging,
    verified_stream,
    verify,
)
from app.storage.cache import private_folder
from app.storage.factory import open_store, parse_storage_url


class StorageSettings(Protocol):
    """What the store needs of the portal's settings (``app.settings.Settings``)."""

    @property
    def effective_storage_url(self) -> str: ...

    @property
    def cache_dir(self) -> Path: ...

    storage_cache_bytes: int
    storage_attempts: int
    storage_timeout_s: float


def artifact_store(settings: StorageSettings) -> ArtifactStore:
    """The store *settings* name (one per process and configuration: an S3 client keeps
    its connections)."""
    return _store(
        settings.effective_storage_url,
        private_folder(settings.cache_dir),
        settings.storage_cache_bytes,
        settings.storage_attempts,
        settings.storage_timeout_s,
    )


@lru_cache(maxsize=8)
def _store(
    url: str, cache_dir: Path, cache_bytes: int, attempts: int, timeout_s: float
) -> ArtifactStore:
    return open_store(
        url, cache_dir=cache_dir, cache_bytes=cache_bytes, attempts=attempts, timeout_s=timeout_s
    )


__all__ = [
    "ArtifactStore",
    "ObjectCorrupt",
    "ObjectMissing",
    "ObjectRefused",
    "StorageError",
    "StoreUnavailable",
    "archive_key",
    "artifact_store",
    "check_content",
    "counts_key",
    "events_key",
    "open_store",
    "parse_storage_url",
    "private_folder",
    "staging",
    "StagingStore",
    "verified_stream",
    "verify",
]
