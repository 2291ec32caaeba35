"""Uploads as they arrive (architecture, decision 5).

Uploads are written to a temporary file in this host's data directory while they are
hashed and counted; only an upload that finished goes to the artifact store
(``app.storage``) at its content address. A half-written file is never at one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


class UploadTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the upload is larger than the {limit}-byte limit")
        self.limit = limit


@dataclass(frozen=True)
class ReceivedFile:
    path: Path
    sha256: str
    size: int


class UploadSink:
    """Receives an upload chunk by chunk: hashes it, counts it, refuses past *limit*."""

    def __init__(self, tmp_dir: Path, limit: int) -> None:
        tmp_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-", suffix=".partial")
        self._file = os.fdopen(fd, "wb")
        self.path = Path(name)
        self._hash = hashlib.sha256()
        self._limit = limit
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise UploadTooLarge(self._limit)
        self._hash.update(chunk)
        self._file.write(chunk)

    def finish(self) -> ReceivedFile:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        return ReceivedFile(self.path, self._hash.hexdigest(), self.size)

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.path.unlink(missing_ok=True)


def receive_local(source: Path, tmp_dir: Path, limit: int) -> ReceivedFile:
    """A file already on this machine, taken in as an upload is (the demo loader, tests)."""
    sink = UploadSink(tmp_dir, limit)
    try:
        with source.open("rb") as handle:
            while chunk := handle.read(1024 * 1024):
                sink.write(chunk)
    except BaseException:
        sink.discard()
        raise
    return sink.finish()


def sweep_tmp(tmp_dir: Path, older_than_s: float) -> int:
    """Remove temporary upload files older than *older_than_s*: what a process killed in
    the middle of an upload left. They are never blobs: only ``adopt`` makes one."""
    if not tmp_dir.is_dir():
        return 0
    cutoff = time.time() - older_than_s
    removed = 0
    for path in tmp_dir.iterdir():
        try:
            if path.is_file() and path.stat().st_mtime <= cutoff:
                path.unlink()
                removed += 1
        except OSError:
            continue  # another process took or removed it
    return removed
