"""The interface every store implements, its keys and its errors."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK = 1024 * 1024

# Keys are made here from a sha256 and nothing else; a store refuses any other key, so
# nothing from a request or a bundle ever becomes a path or an object name.
_KEY = re.compile(r"[0-9a-f]{2}/([0-9a-f]{64})(\.jsonl\.gz|\.npz)?")


class StorageError(Exception):
    """Something went wrong with a stored object; the message says which and why."""


class StoreUnavailable(StorageError):
    """The store cannot be reached now (a refusal to retry later, never a lost object)."""


class ObjectMissing(StorageError):
    """The object is not in the store: deleted, or never written."""


class ObjectRefused(StorageError):
    """A stored object that was read and is refused by the portal's own rules (an archive
    past the limits now in force); its message names no store or path."""


class ObjectCorrupt(StorageError):
    """The object's bytes are not the content its key names."""


def archive_key(sha256: str) -> str:
    return checked_key(f"{sha256[:2]}/{sha256}")


def events_key(sha256: str) -> str:
    """An event log, stored gzip-compressed: *sha256* is the uncompressed content's."""
    return checked_key(f"{sha256[:2]}/{sha256}.jsonl.gz")


def counts_key(sha256: str) -> str:
    """The token counts of a part of a split re-count, kept until their merge."""
    return checked_key(f"{sha256[:2]}/{sha256}.npz")


def checked_key(key: str) -> str:
    if not _KEY.fullmatch(key) or key[:2] != key[3:5]:
        raise ValueError(f"{key!r} is not a content address")
    return key


def is_compressed(key: str) -> bool:
    """Event logs are kept compressed; their key's hash is the uncompressed content's."""
    return key.endswith(".jsonl.gz")


class ArtifactStore(Protocol):
    """Content-addressed objects. Every method raises ``StoreUnavailable`` when the store
    cannot be reached, and the reads ``ObjectMissing`` for an object that is not there."""

    @property
    def location(self) -> str:
        """Where the objects are, for messages and logs (no credentials)."""
        ...

    def put_file(self, key: str, path: Path) -> None:
        """Store the finished local file *path* at *key* (the file is consumed: moved or
        removed). Storing a key that exists already keeps the stored object."""
        ...

    def open(self, key: str) -> BinaryIO:
        """A stream of the object's bytes (the caller closes it)."""
        ...

    def exists(self, key: str) -> bool: ...

    def size(self, key: str) -> int: ...

    def delete(self, key: str) -> None:
        """Remove the object; removing one that is not there is not an error."""
        ...

    def keys(self) -> Iterator[str]:
        """Every content address in the store (other objects beside them are left out)."""
        ...

    def local_path(self, key: str) -> Path:
        """A local file with the object's bytes, to read (never to change or remove): the
        store's own file, or a cached copy checked against its hash."""
        ...


class StagingStore(ArtifactStore, Protocol):
    """A store clients write to directly, through presigned URLs (S3): an object is staged
    under a token, and the portal reads it before it takes it to a content address."""

    def presigned_upload(self, token: str, expires_s: int) -> str: ...

    def presigned_download(self, key: str, expires_s: int, filename: str) -> str: ...

    def staged_size(self, token: str) -> int | None: ...

    def fetch_staged(self, token: str, target: Path, limit: int) -> None: ...

    def delete_staged(self, token: str) -> None: ...


def staging(store: ArtifactStore) -> StagingStore | None:
    """*store* as one clients write to directly, or None (the local store: the portal's
    own signed URLs carry the bytes)."""
    return store if hasattr(store, "presigned_upload") else None  # type: ignore[return-value]


def check_content(key: str, raw: BinaryIO, where: str) -> None:
    """Raise ``ObjectCorrupt`` unless *raw* (the object *key* read from *where*) holds the
    content its key names: the sha256 of the bytes, or of an event log's decompressed
    bytes."""
    import gzip
    import zlib

    wanted = key.split("/", 1)[1][:64]
    digest = hashlib.sha256()
    stream = gzip.GzipFile(fileobj=raw) if is_compressed(key) else raw
    try:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    except (EOFError, OSError, zlib.error) as exc:  # a cut or damaged compressed log
        raise ObjectCorrupt(f"the stored object {key} in {where} is corrupt: {exc}") from exc
    found = digest.hexdigest()
    if found != wanted:
        raise ObjectCorrupt(
            f"the stored object {key} in {where} is corrupt: its content hashes to "
            f"{found[:16]}…, not {wanted[:16]}…"
        )


def verify(store: ArtifactStore, key: str) -> None:
    """Raise ``ObjectCorrupt`` unless the stored object holds the content its key names."""
    with store.open(key) as raw:
        check_content(key, raw, store.location)


def verified_stream(store: ArtifactStore, key: str) -> Iterator[bytes]:
    """The object's bytes, in chunks, once its hash has been checked: a deleted or
    corrupted object raises here, before the first byte is sent, and is never served."""
    verify(store, key)

    def chunks() -> Iterator[bytes]:
        with store.open(key) as stream:
            while chunk := stream.read(CHUNK):
                yield chunk

    return chunks()
