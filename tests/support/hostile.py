"""The hostile archive corpus (issue 44): each archive a penetration test used against
the intake, built here so that the tests and ``bench/intake.py`` replay the same bytes.

Tar archives are made block by block where ``tarfile`` would refuse to write them; zip
archives' central directories are written as bytes, so that a directory of 300,001
entries costs milliseconds to make.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

from tests.support.services import once_per_run, shared_run_dir

BLOCK = 512


def _header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    return info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape")


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % BLOCK)


def _member(name: str, data: bytes, kind: bytes = tarfile.REGTYPE) -> bytes:
    return _header(name, kind, len(data)) + _padded(data)


def _tar_gz(*blocks: bytes) -> bytes:
    return gzip.compress(b"".join(blocks) + b"\0" * (2 * BLOCK), mtime=0)


def pax_digit_run(digits: int = 60_000) -> bytes:
    """CVE-2024-6232: a PAX header of one long run of digits (about 245 bytes once
    compressed); Python 3.11.7's tarfile spends 13 s on 60,000 of them."""
    payload = b"1" * digits
    return _tar_gz(_member("././@PaxHeader", payload, tarfile.XHDTYPE), _member("a.txt", b"a"))


def pax_record(key: bytes, value: bytes) -> bytes:
    """One well-formed PAX record: its length counts itself."""
    body = b" " + key + b"=" + value + b"\n"
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length = len(str(length)) + len(body)
    return str(length).encode() + body


def pax_digits_in_a_value(digits: int = 60_000) -> bytes:
    """The same flaw reached through a well-formed record whose value is digits."""
    payload = pax_record(b"comment", b"7" * digits)
    return _tar_gz(_member("././@PaxHeader", payload, tarfile.XHDTYPE), _member("a.txt", b"a"))


def pax_size(name: str, data: bytes, declared: int) -> bytes:
    """A member whose size a PAX header gives (as for files over 8 GiB)."""
    payload = pax_record(b"size", str(declared).encode())
    header = _header(name, tarfile.REGTYPE, 0)
    return _tar_gz(_member("././@PaxHeader", payload, tarfile.XHDTYPE), header + _padded(data))


def chained_extensions() -> bytes:
    """Two extended headers before one member: tarfile moves the next header by them."""
    first = _member("././@PaxHeader", pax_record(b"path", b"x.txt"), tarfile.XHDTYPE)
    second = _member("././@PaxHeader", pax_record(b"path", b"y.txt"), tarfile.XHDTYPE)
    return _tar_gz(first, second, _member("a.txt", b"a"))


def gnu_sparse() -> bytes:
    return _tar_gz(_member("sparse.bin", b"s", tarfile.GNUTYPE_SPARSE))


def gnu_long_name(length: int = 300 * 1024) -> bytes:
    """A GNU long-name header far larger than any path."""
    return _tar_gz(_member("././@LongLink", b"n" * length, tarfile.GNUTYPE_LONGNAME))


def large_block(expanded: int, folder: str = "Acme_Corp/sub-large", chunk: int = 2**20) -> bytes:
    """A legal archive that expands about a hundred times: one member of *expanded* bytes
    that compresses as a log does (repeated words, a random id on each line), in the
    submission *folder*."""
    words = b"the same words again and again, as a log would say them " * 8
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz:
        gz.write(_header(f"{folder}/results/big.txt", tarfile.REGTYPE, expanded))
        left = expanded
        while left:
            ids = os.urandom(chunk // 64).hex().encode()
            lines = [words + ids[i : i + 3] + b"\n" for i in range(0, len(ids), 3)]
            block = b"".join(lines)[: min(left, chunk)]
            gz.write(block)
            left -= len(block)
        gz.write(b"\0" * (-expanded % BLOCK) + b"\0" * (2 * BLOCK))
    return buffer.getvalue()


# A legal archive that takes seconds of any core's time to read: 600 MiB expanded, a
# hundred times its size. Making it (compressing 600 MiB) takes five seconds of CPU, so a
# test run makes it once.
LARGE_EXPANDED = 600 * 1024**2


def large_archive() -> Path:
    """``large_block(LARGE_EXPANDED)`` as a file in the test run's shared folder, made by
    the first test process to ask while the others wait for it."""

    def make() -> str:
        archive = shared_run_dir() / f"large-{LARGE_EXPANDED}.tar.gz"
        archive.write_bytes(large_block(LARGE_EXPANDED))
        return str(archive)

    return Path(once_per_run("large-archive", make))


# ---------------------------------------------------------------------- zip

_CD = struct.Struct("<4s4B4HL2L5H2L")
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_END = struct.Struct("<4s4H2LH")


def _local(name: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(data)
    return _LOCAL.pack(b"PK\x03\x04", 20, 0, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0)


def _central(name: bytes, data: bytes, offset: int) -> bytes:
    crc = zlib.crc32(data)
    return _CD.pack(
        b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0, 0, 0,
        0, 0o100644 << 16, offset,
    )  # fmt: skip


def _end(count: int, size: int, offset: int) -> bytes:
    """The end records: a zip64 record and its locator first when the count needs it."""
    end = _END.pack(b"PK\x05\x06", 0, 0, min(count, 0xFFFF), min(count, 0xFFFF), size, offset, 0)
    if count < 0xFFFF:
        return end
    at = offset + size
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at, 1)
    return record + locator + end


def zip_of_many(count: int = 300_001, declared: int | None = None) -> bytes:
    """*count* empty entries that share one local header: a 25 MB zip of 300,001 members
    that zipfile parses whole (+156 MB) before anyone can count them. *declared*: what the
    end record says (a lie when it differs)."""
    name = b"results/entry-of-a-directory-bomb.txt"
    local = _local(name, b"") + name
    entry = _central(name, b"", 0) + name
    directory = entry * count
    return local + directory + _end(declared or count, len(directory), len(local))


def zip_overlap(copies: int = 3) -> bytes:
    """The quoted-overlap zip bomb's shape (CVE-2024-0450): entries whose data overlap,
    here several central entries naming one local entry."""
    data = b"A" * 1000
    local = _local(b"a.txt", data) + b"a.txt" + data
    directory = b"".join(_central(f"{i}.txt".encode(), data, 0) + f"{i}.txt".encode()
                         for i in range(copies))  # fmt: skip
    return local + directory + _end(copies, len(directory), len(local))


def zip_long_component() -> bytes:
    """A member with a 300-byte name part: more than a file system takes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("org/" + "n" * 300 + "/a.txt", b"a")
    return buffer.getvalue()
