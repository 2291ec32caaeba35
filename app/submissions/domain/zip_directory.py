"""A zip archive's central directory, read by the portal itself, within limits.

``zipfile`` reads a whole central directory into memory before anyone can count it (a
25 MB zip of 300,001 entries costs it 156 MB), and Python 3.11.7's ``zipfile`` does not
notice entries whose data overlap (the "quoted-overlap" zip bomb, CVE-2024-0450, fixed
only in later 3.11 releases). Here the entry count is refused from the end record, and
again while the directory is read, past the member limit; every entry's local header is
read and an entry whose data runs into the next entry (or into the directory) is
refused. Only an archive that passes is opened with ``zipfile``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

from app.core.refusals import Kind, Refused

_END = b"PK\x05\x06"
_END64 = b"PK\x06\x06"
_END64_LOCATOR = b"PK\x06\x07"
_ENTRY = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_END_SIZE = 22
_END64_LOCATOR_SIZE = 20
_ENTRY_SIZE = 46
_LOCAL_SIZE = 30
_MAX_COMMENT = 0xFFFF
_UTF8_FLAG = 0x800
_ZIP64_EXTRA = 0x0001


class ZipRefused(Refused):
    def __init__(self, code: str, message: str, member: str | None = None) -> None:
        kind = Kind.TOO_LARGE if code == "too-many-members" else Kind.INVALID
        super().__init__(code, message, kind, member=member)


def _corrupt(what: str) -> ZipRefused:
    return ZipRefused("corrupt-archive", f"the zip archive cannot be read: {what}")


@dataclass(frozen=True)
class ZipEntry:
    """One entry of the central directory, as its fields say."""

    name: str
    flags: int
    method: int
    compressed_size: int
    size: int
    header_offset: int
    external_attr: int
    is_dir: bool


@dataclass(frozen=True)
class _Directory:
    offset: int
    size: int
    count: int
    end: int  # where the directory must end: the (zip64) end record


def _read_at(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise _corrupt("it ends early")
    return data


def _directory(fh: BinaryIO, file_size: int) -> _Directory:
    tail_start = max(0, file_size - _END_SIZE - _MAX_COMMENT)
    tail = _read_at(fh, tail_start, file_size - tail_start)
    at = tail.rfind(_END)
    if at < 0 or len(tail) - at < _END_SIZE:
        raise _corrupt("it has no end-of-directory record")
    end_at = tail_start + at
    (_sig, disk, cd_disk, _here, count, size, offset, _comment) = struct.unpack(
        "<4s4H2LH", tail[at : at + _END_SIZE]
    )
    if disk or cd_disk:
        raise _corrupt("it spans several disks")
    locator_at = end_at - _END64_LOCATOR_SIZE
    if locator_at >= 0 and _read_at(fh, locator_at, 4) == _END64_LOCATOR:
        return _directory64(fh, locator_at)
    if 0xFFFFFFFF in (size, offset):
        raise _corrupt("its zip64 locator is missing")
    # Without zip64 records a count of 0xFFFF means "at least that many".
    return _Directory(offset, size, count, end_at)


def _directory64(fh: BinaryIO, locator_at: int) -> _Directory:
    _sig, _disk, record_at, _disks = struct.unpack(
        "<4sLQL", _read_at(fh, locator_at, _END64_LOCATOR_SIZE)
    )
    if record_at + 56 > locator_at:
        raise _corrupt("its zip64 locator is damaged")
    record = _read_at(fh, record_at, 56)
    (sig, _size, _made, _needed, disk, cd_disk, _here, count, size, offset) = struct.unpack(
        "<4sQ2H2L4Q", record
    )
    if sig != _END64 or disk or cd_disk:
        raise _corrupt("its zip64 end record is damaged")
    return _Directory(offset, size, count, record_at)


def _zip64_values(extra: bytes, wanted: list[bool]) -> list[int]:
    """The zip64 extra field's values for the fields that overflowed, in order."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack("<2H", extra[pos : pos + 4])
        body = extra[pos + 4 : pos + 4 + length]
        if tag == _ZIP64_EXTRA:
            needed = sum(wanted)
            if len(body) < 8 * needed:
                raise _corrupt("an entry's zip64 sizes are missing")
            return list(struct.unpack(f"<{needed}Q", body[: 8 * needed]))
        pos += 4 + length
    if any(wanted):
        raise _corrupt("an entry's zip64 sizes are missing")
    return []


def _entry(fh: BinaryIO) -> ZipEntry:
    fixed = fh.read(_ENTRY_SIZE)
    if len(fixed) != _ENTRY_SIZE or fixed[:4] != _ENTRY:
        raise _corrupt("its central directory is damaged")
    fields = struct.unpack("<4s4B4HL2L5H2L", fixed)
    flags, method = fields[5], fields[6]
    compressed, size = fields[10], fields[11]
    name_len, extra_len, comment_len = fields[12], fields[13], fields[14]
    external, offset = fields[17], fields[18]
    raw_name = fh.read(name_len)
    extra = fh.read(extra_len)
    if len(raw_name) != name_len or len(extra) != extra_len:
        raise _corrupt("its central directory is damaged")
    fh.seek(comment_len, 1)
    overflowed = [size == 0xFFFFFFFF, compressed == 0xFFFFFFFF, offset == 0xFFFFFFFF]
    values = iter(_zip64_values(extra, overflowed))
    size = next(values) if overflowed[0] else size
    compressed = next(values) if overflowed[1] else compressed
    offset = next(values) if overflowed[2] else offset
    name = raw_name.decode("utf-8" if flags & _UTF8_FLAG else "cp437", "replace")
    return ZipEntry(name, flags, method, compressed, size, offset, external, name.endswith("/"))


def read_entries(fh: BinaryIO, file_size: int, max_members: int) -> list[ZipEntry]:
    """Every entry of the zip archive in *fh*, in directory order; refused past
    *max_members* (counted in the end record, then again as entries are read), or when
    the directory or any entry's data is out of place or overlaps another's."""
    directory = _directory(fh, file_size)
    too_many = ZipRefused("too-many-members", f"the archive has more than {max_members} members")
    if directory.count > max_members:
        raise too_many
    if directory.offset + directory.size != directory.end:
        raise _corrupt("its central directory is not where its end record says")
    fh.seek(directory.offset)
    entries: list[ZipEntry] = []
    while fh.tell() < directory.end:
        if len(entries) == max_members:  # counted as read: the end record may lie
            raise too_many
        entries.append(_entry(fh))
    if fh.tell() != directory.end or len(entries) != directory.count:
        raise _corrupt("its central directory does not hold the entries its end record counts")
    _refuse_overlaps(fh, entries, directory.offset)
    return entries


def _refuse_overlaps(fh: BinaryIO, entries: list[ZipEntry], directory_at: int) -> None:
    """Each entry's local header and data must end before the next entry begins."""
    ordered = sorted(entries, key=lambda e: e.header_offset)
    for i, entry in enumerate(ordered):
        limit = ordered[i + 1].header_offset if i + 1 < len(ordered) else directory_at
        if entry.header_offset + _LOCAL_SIZE > limit:
            raise _overlap(entry)
        local = _read_at(fh, entry.header_offset, _LOCAL_SIZE)
        if local[:4] != _LOCAL:
            raise _corrupt(f"the entry {entry.name!r} has no local header")
        name_len, extra_len = struct.unpack("<2H", local[26:30])
        data_end = entry.header_offset + _LOCAL_SIZE + name_len + extra_len
        if data_end + entry.compressed_size > limit:
            raise _overlap(entry)


def _overlap(entry: ZipEntry) -> ZipRefused:
    return ZipRefused(
        "overlapping-members",
        f"member {entry.name!r} overlaps the next member's data (an overlapping zip bomb, "
        "CVE-2024-0450); such an archive is not read",
        entry.name,
    )
