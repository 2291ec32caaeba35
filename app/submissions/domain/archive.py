"""Safe extraction of uploaded ``.tar.gz``/``.tgz``/``.zip`` bundles.

Nothing in an archive is trusted (architecture, decision 5). Every member is inspected in
a first pass that writes nothing: names, types, counts, declared and actual sizes, and
the compression ratio. Only an archive that passes is extracted, in a second pass, into
a fresh directory that is renamed into place when complete; a failure leaves nothing
behind. Only regular files and directories are ever created; links, devices and FIFOs
are refused, never followed.

The standard library's readers see only what the portal's own bounded readers passed:
tar headers through :mod:`app.submissions.domain.tar_guard`, zip directories through
:mod:`app.submissions.domain.zip_directory` (Python 3.11.7 has a flaw in each). This
module runs in a child process under a CPU and memory budget
(``app.submissions.services.reading``), never in the web process.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import struct
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from app.core.refusals import Kind, Refused
from app.submissions.domain.tar_guard import TarHeaderGuard
from app.submissions.domain.zip_directory import ZipEntry, read_entries

_CHUNK = 1024 * 1024
_MAX_NAME_LENGTH = 1024
# What a file system takes as one name, in bytes.
_MAX_COMPONENT_BYTES = 255
_MAX_DEPTH = 32
# Tar headers and padding add to the decompressed stream beyond the members' contents.
_TAR_OVERHEAD_PER_MEMBER = 3 * 512
# OS metadata that archivers add and that carries no submission content.
_IGNORED_TOP_LEVEL = frozenset({"__MACOSX"})
_IGNORED_NAMES = frozenset({".DS_Store"})


# Refusals that are about size, and the one about the kind of file; the rest are about
# what the archive holds.
_TOO_LARGE = frozenset({"too-large", "member-too-large", "too-many-members", "compression-ratio"})


class ArchiveRejected(Refused):
    """The archive is refused. ``code`` is stable (a rule of the catalogue); ``message``
    says what and where; ``member`` names the archive member."""

    def __init__(self, code: str, message: str, member: str | None = None) -> None:
        kind = (
            Kind.UNSUPPORTED
            if code == "unsupported-format"
            else Kind.TOO_LARGE
            if code in _TOO_LARGE
            else Kind.INVALID
        )
        super().__init__(code, message, kind, member=member)
        self.member = member


@dataclass(frozen=True)
class ArchiveLimits:
    max_members: int = 20_000
    max_total_bytes: int = 4 * 1024**3
    max_member_bytes: int = 2 * 1024**3
    max_compression_ratio: float = 200.0
    # Below this many extracted bytes the ratio is not judged: small text compresses well.
    ratio_floor_bytes: int = 64 * 1024**2


@dataclass(frozen=True)
class Member:
    name: str  # normalised relative POSIX path
    is_dir: bool
    size: int


@dataclass(frozen=True)
class ExtractedArchive:
    root: Path
    format: str
    members: int
    total_bytes: int


def detect_format(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(4)
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head == b"PK\x03\x04" or head == b"PK\x05\x06":
        return "zip"
    raise ArchiveRejected(
        "unsupported-format",
        "the upload is not a gzip-compressed tar (.tar.gz, .tgz) or a zip archive",
    )


def normalise_member_name(raw: str) -> str:
    """Return a safe relative POSIX path for *raw*, or raise naming the problem."""
    if not raw or "\x00" in raw:
        raise ArchiveRejected("bad-name", "a member has an empty name or a NUL byte", raw)
    if any(ord(ch) < 32 for ch in raw):
        raise ArchiveRejected("bad-name", f"member name {raw!r} has control characters", raw)
    if len(raw) > _MAX_NAME_LENGTH:
        raise ArchiveRejected(
            "bad-name", f"member name is longer than {_MAX_NAME_LENGTH} characters", raw[:80]
        )
    if "\\" in raw:
        raise ArchiveRejected(
            "bad-name", f"member {raw!r} uses a backslash; archive paths use '/'", raw
        )
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ArchiveRejected("absolute-path", f"member {raw!r} has an absolute path", raw)
    parts = [p for p in PurePosixPath(raw).parts if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveRejected(
            "path-traversal", f"member {raw!r} climbs out of the archive with '..'", raw
        )
    if not parts:
        raise ArchiveRejected("bad-name", f"member {raw!r} names no file", raw)
    if len(parts) > _MAX_DEPTH:
        raise ArchiveRejected(
            "bad-name", f"member {raw!r} is nested deeper than {_MAX_DEPTH} levels", raw
        )
    if any(len(part.encode("utf-8", "surrogateescape")) > _MAX_COMPONENT_BYTES for part in parts):
        raise ArchiveRejected(
            "bad-name",
            f"member {raw[:80]!r} has a name part longer than {_MAX_COMPONENT_BYTES} bytes",
            raw[:80],
        )
    return "/".join(parts)


def _out_of_memory(exc: BaseException) -> None:
    """zlib reports the memory it could not have as its error -4 (Z_MEM_ERROR), not as a
    MemoryError, and tarfile passes it on as a ReadError("zlib error: Error -4 …"): under
    a reading's memory budget that is the budget, not a bad archive."""
    said = str(exc)
    if isinstance(exc, zlib.error | tarfile.ReadError) and said.removeprefix(
        "zlib error: "
    ).startswith("Error -4 "):
        raise MemoryError(said) from exc


def _reason(exc: BaseException) -> str:
    """What went wrong, without the server's paths: an OS error's own words only."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


class _CountingReader:
    """A read-only stream that refuses to yield more than *limit* bytes."""

    def __init__(self, raw: BinaryIO, limit: int, on_exceed: ArchiveRejected) -> None:
        self._raw = raw
        self._limit = limit
        self._on_exceed = on_exceed
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        if self.count > self._limit:
            raise self._on_exceed
        return data


class _Inventory:
    """Accumulates members in pass 1 and enforces every limit as it goes."""

    def __init__(self, limits: ArchiveLimits, compressed_size: int) -> None:
        self.limits = limits
        self.compressed_size = max(compressed_size, 1)
        self.members: list[Member] = []
        self.files: set[str] = set()
        self.dirs: set[str] = set()
        self.total = 0

    def add(self, raw_name: str, is_dir: bool, size: int) -> None:
        name = normalise_member_name(raw_name)
        top = name.split("/", 1)[0]
        if top in _IGNORED_TOP_LEVEL or name.rsplit("/", 1)[-1] in _IGNORED_NAMES:
            return
        if len(self.members) >= self.limits.max_members:
            raise ArchiveRejected(
                "too-many-members",
                f"the archive has more than {self.limits.max_members} members",
            )
        if size > self.limits.max_member_bytes:
            raise ArchiveRejected(
                "member-too-large",
                f"member {name!r} is {size} bytes; the limit is "
                f"{self.limits.max_member_bytes} bytes per file",
                name,
            )
        self.total += size
        if self.total > self.limits.max_total_bytes:
            raise ArchiveRejected(
                "too-large",
                f"the archive expands to more than {self.limits.max_total_bytes} bytes",
                name,
            )
        self.check_ratio(self.total)
        if name in self.files or (not is_dir and name in self.dirs):
            raise ArchiveRejected("duplicate-member", f"member {name!r} appears twice", name)
        parents = name.split("/")[:-1]
        for i in range(1, len(parents) + 1):
            parent = "/".join(parents[:i])
            if parent in self.files:
                raise ArchiveRejected(
                    "path-conflict", f"{parent!r} is a file and also a directory", name
                )
        if is_dir:
            self.dirs.add(name)
        else:
            self.files.add(name)
        self.members.append(Member(name=name, is_dir=is_dir, size=size))

    def check_ratio(self, expanded: int) -> None:
        if expanded < self.limits.ratio_floor_bytes:
            return
        ratio = expanded / self.compressed_size
        if ratio > self.limits.max_compression_ratio:
            raise ArchiveRejected(
                "compression-ratio",
                f"the archive expands more than {self.limits.max_compression_ratio:g} times "
                f"its compressed size ({self.compressed_size} bytes); it looks like a "
                "decompression bomb",
            )


# ---------------------------------------------------------------------- tar.gz


@contextmanager
def _tar_stream(
    path: Path, inventory: _Inventory
) -> Iterator[tuple[tarfile.TarFile, _CountingReader]]:
    limits = inventory.limits
    budget = limits.max_total_bytes + _TAR_OVERHEAD_PER_MEMBER * (limits.max_members + 2)
    with path.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        reader = _CountingReader(
            gz,  # type: ignore[arg-type]
            budget,
            ArchiveRejected(
                "too-large", f"the archive expands to more than {limits.max_total_bytes} bytes"
            ),
        )
        guard = TarHeaderGuard(reader, limits.max_member_bytes)  # type: ignore[arg-type]
        try:
            with tarfile.open(fileobj=guard, mode="r|") as tar:  # type: ignore[call-overload]
                yield tar, reader
        except ArchiveRejected:
            raise
        except Refused as exc:  # the header guard's refusal
            raise ArchiveRejected(exc.code, exc.message) from exc
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            _out_of_memory(exc)
            raise ArchiveRejected(
                "corrupt-archive", f"the tar.gz archive cannot be read: {_reason(exc)}"
            ) from exc


def _tar_member_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    name = info.name
    if info.issym():
        raise ArchiveRejected(
            "symlink", f"member {name!r} is a symbolic link to {info.linkname!r}", name
        )
    if info.islnk():
        raise ArchiveRejected("hardlink", f"member {name!r} is a hard link", name)
    if info.ischr() or info.isblk() or info.isfifo():
        raise ArchiveRejected(
            "special-file", f"member {name!r} is a device or FIFO, not a regular file", name
        )
    raise ArchiveRejected(
        "special-file", f"member {name!r} has an unsupported tar type {info.type!r}", name
    )


def _inspect_tar(path: Path, inventory: _Inventory) -> None:
    with _tar_stream(path, inventory) as (tar, reader):
        for info in tar:
            kind = _tar_member_kind(info)
            inventory.add(info.name, kind == "dir", info.size if kind == "file" else 0)
            inventory.check_ratio(reader.count)
        if not inventory.members:
            raise ArchiveRejected("empty-archive", "the archive holds no files")


def _extract_tar(path: Path, dest: Path, inventory: _Inventory) -> None:
    wanted = {m.name for m in inventory.members}
    with _tar_stream(path, inventory) as (tar, _reader):
        for info in tar:
            name = normalise_member_name(info.name)
            if name not in wanted:
                continue
            if info.isdir():
                _make_folder(dest, name)
                continue
            source = tar.extractfile(info)
            if source is None:  # pragma: no cover - pass 1 admitted only regular files
                raise ArchiveRejected("corrupt-archive", f"member {name!r} has no data", name)
            _write_member(dest, name, source, info.size)


# ---------------------------------------------------------------------- zip


def _zip_kind(entry: ZipEntry) -> str:
    mode = entry.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise ArchiveRejected("symlink", f"member {entry.name!r} is a symbolic link", entry.name)
    if mode and stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ArchiveRejected(
            "special-file",
            f"member {entry.name!r} is a device or FIFO, not a regular file",
            entry.name,
        )
    if entry.flags & 0x1:
        raise ArchiveRejected("encrypted-member", f"member {entry.name!r} is encrypted", entry.name)
    return "dir" if entry.is_dir else "file"


def _zip_entries(path: Path, limits: ArchiveLimits) -> list[ZipEntry]:
    """The central directory, read by the portal's own bounded reader."""
    try:
        with path.open("rb") as fh:
            return read_entries(fh, path.stat().st_size, limits.max_members)
    except ArchiveRejected:
        raise
    except Refused as exc:
        raise ArchiveRejected(exc.code, exc.message, exc.detail.get("member")) from exc
    except (OSError, struct.error, ValueError) as exc:
        raise ArchiveRejected(
            "corrupt-archive", f"the zip archive cannot be read: {_reason(exc)}"
        ) from exc


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveRejected(
            "corrupt-archive", f"the zip archive cannot be read: {_reason(exc)}"
        ) from exc


def _inspect_zip(path: Path, inventory: _Inventory) -> None:
    for entry in _zip_entries(path, inventory.limits):
        kind = _zip_kind(entry)
        inventory.add(entry.name, kind == "dir", entry.size if kind == "file" else 0)
    if not inventory.members:
        raise ArchiveRejected("empty-archive", "the archive holds no files")


def _extract_zip(path: Path, dest: Path, inventory: _Inventory) -> None:
    wanted = {m.name: m for m in inventory.members}
    entries = _zip_entries(path, inventory.limits)
    # zipfile opens only a directory the portal's reader passed: no more members than
    # the limit, none overlapping; it reads the same entries in the same order.
    with _open_zip(path) as zf:
        infos = zf.infolist()
        if [i.header_offset for i in infos] != [e.header_offset for e in entries]:
            raise ArchiveRejected("corrupt-archive", "the zip archive's directory is ambiguous")
        for entry, info in zip(entries, infos, strict=True):
            name = normalise_member_name(entry.name)
            member = wanted.get(name)
            if member is None:
                continue
            if member.is_dir:
                _make_folder(dest, name)
                continue
            try:
                with zf.open(info) as source:
                    _write_member(dest, name, source, member.size)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                _out_of_memory(exc)
                raise ArchiveRejected(
                    "corrupt-archive", f"member {name!r} cannot be decompressed: {exc}", name
                ) from exc


# ---------------------------------------------------------------------- writing


def _safe_target(dest: Path, name: str) -> Path:
    target = dest.joinpath(*name.split("/"))
    # Belt and braces: the name was normalised, and no link exists in a fresh tree.
    if not target.resolve().is_relative_to(dest.resolve()):
        raise ArchiveRejected("path-traversal", f"member {name!r} resolves outside", name)
    return target


def _make_folder(dest: Path, name: str) -> None:
    try:
        _safe_target(dest, name).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveRejected(
            "unwritable-member", f"folder {name!r} cannot be made: {_reason(exc)}", name
        ) from exc


def _write_member(dest: Path, name: str, source: IO[bytes], declared: int) -> None:
    try:
        _copy_member(dest, name, source, declared)
    except OSError as exc:  # a name the file system refuses, a disk full: the member's
        raise ArchiveRejected(
            "unwritable-member", f"member {name!r} cannot be written: {_reason(exc)}", name
        ) from exc


def _copy_member(dest: Path, name: str, source: IO[bytes], declared: int) -> None:
    target = _safe_target(dest, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    # "xb": never overwrite, never follow an existing path.
    with target.open("xb") as out:
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            if written > declared:
                raise ArchiveRejected(
                    "size-mismatch",
                    f"member {name!r} holds more data than its declared {declared} bytes",
                    name,
                )
            out.write(chunk)
    if written != declared:
        raise ArchiveRejected(
            "size-mismatch", f"member {name!r} holds {written} bytes, not {declared}", name
        )


def inspect_archive(path: Path, limits: ArchiveLimits) -> list[Member]:
    """Pass 1: validate every member and return the inventory; writes nothing."""
    fmt = detect_format(path)
    inventory = _Inventory(limits, path.stat().st_size)
    (_inspect_tar if fmt == "tar.gz" else _inspect_zip)(path, inventory)
    return inventory.members


def extract_archive(path: Path, dest: Path, limits: ArchiveLimits) -> ExtractedArchive:
    """Validate, then extract *path* into *dest* (which must not exist yet)."""
    if dest.exists():
        raise FileExistsError(dest)
    fmt = detect_format(path)
    inventory = _Inventory(limits, path.stat().st_size)
    (_inspect_tar if fmt == "tar.gz" else _inspect_zip)(path, inventory)
    staging = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.partial")
    staging.mkdir(parents=True)
    try:
        (_extract_tar if fmt == "tar.gz" else _extract_zip)(path, staging, inventory)
        os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExtractedArchive(
        root=dest, format=fmt, members=len(inventory.members), total_bytes=inventory.total
    )
