"""The store a storage URL names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from app.storage.base import ArtifactStore

# S3's bucket naming rules (3–63 lower-case letters, digits, dots and hyphens).
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX = re.compile(r"[A-Za-z0-9._/-]*")


@dataclass(frozen=True)
class StorageURL:
    scheme: str  # "file" or "s3"
    path: Path | None = None  # file: the directory
    bucket: str = ""  # s3
    prefix: str = ""  # s3: a folder inside the bucket, "" for its top


def parse_storage_url(url: str) -> StorageURL:
    """``file:///absolute/path`` or ``s3://bucket[/prefix]``; anything else is refused
    with what is wrong."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise ValueError(f"{url!r}: a file store is file:///an/absolute/path")
        return StorageURL("file", path=Path(parts.path))
    if parts.scheme == "s3":
        if not _BUCKET.fullmatch(parts.netloc):
            raise ValueError(f"{url!r}: {parts.netloc!r} is not an S3 bucket name")
        prefix = parts.path.strip("/")
        if parts.query or parts.fragment or not _PREFIX.fullmatch(prefix) or ".." in prefix:
            raise ValueError(f"{url!r}: the prefix may hold letters, digits, . _ - and /")
        return StorageURL("s3", bucket=parts.netloc, prefix=prefix)
    raise ValueError(f"{url!r}: the storage URL is file:///path or s3://bucket/prefix")


def open_store(
    url: str, *, cache_dir: Path, cache_bytes: int, attempts: int = 3, timeout_s: float = 5.0
) -> ArtifactStore:
    parsed = parse_storage_url(url)
    if parsed.scheme == "file":
        from app.storage.local import LocalStore

        assert parsed.path is not None
        return LocalStore(parsed.path)
    from app.storage.s3 import S3Store

    return S3Store(parsed.bucket, parsed.prefix, cache_dir, cache_bytes, attempts, timeout_s)
