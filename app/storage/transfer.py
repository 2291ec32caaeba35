"""Copying a store's objects to another (``endpoints-portal storage migrate``) and
checking that a store answers (``endpoints-portal storage check``).

Every object is checked against its hash as it is read from the source, and read back
from the target once written; an object the target holds already is checked and kept.
A copy stopped half-way is finished by running it again: nothing is half-written at a
key, and nothing in the source is changed.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.storage.base import (
    CHUNK,
    ArtifactStore,
    ObjectCorrupt,
    archive_key,
    check_content,
    verify,
)


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # in the target already, checked
    damaged: list[tuple[str, str]] = field(default_factory=list)  # in the source: key, why

    @property
    def ok(self) -> bool:
        return not self.damaged


def copy_objects(
    source: ArtifactStore,
    target: ArtifactStore,
    scratch: Path,
    on_object: Callable[[str, str], None] | None = None,
) -> CopyReport:
    """Copy every object of *source* that *target* lacks (or holds damaged), through a
    file in *scratch*; *on_object(key, what happened)* reports each one."""
    report = CopyReport()
    scratch.mkdir(parents=True, exist_ok=True)
    for key in source.keys():
        if target.exists(key):
            try:
                verify(target, key)
            except ObjectCorrupt:
                target.delete(key)  # damaged there: copied again below
            else:
                report.present.append(key)
                _tell(on_object, key, "present")
                continue
        with tempfile.NamedTemporaryFile(dir=scratch, prefix="copy-", delete=False) as handle:
            copy = Path(handle.name)
            with source.open(key) as stream:
                while chunk := stream.read(CHUNK):
                    handle.write(chunk)
        try:
            with copy.open("rb") as written:
                check_content(key, written, source.location)
        except ObjectCorrupt as exc:
            copy.unlink(missing_ok=True)
            report.damaged.append((key, str(exc)))
            _tell(on_object, key, "damaged in the source, not copied")
            continue
        target.put_file(key, copy)  # consumes the copy
        verify(target, key)  # read back: what is there is what was sent
        report.copied.append(key)
        _tell(on_object, key, "copied")
    return report


def _tell(on_object: Callable[[str, str], None] | None, key: str, what: str) -> None:
    if on_object is not None:
        on_object(key, what)


PROBE = b"endpoints-portal storage check\n"


def probe(store: ArtifactStore, scratch: Path) -> None:
    """Write, read back (hash-checked) and remove one small object: the store's errors
    are raised when it cannot be reached, written or read."""
    key = archive_key(hashlib.sha256(PROBE).hexdigest())
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=scratch, prefix="probe-", delete=False) as handle:
        handle.write(PROBE)
    store.put_file(key, Path(handle.name))
    verify(store, key)
    store.delete(key)
