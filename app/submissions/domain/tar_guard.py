"""A bounded reader of tar headers that stands between the decompressed stream and
``tarfile``, so that no header reaches ``tarfile``'s parsers unless it is one they read
in linear time.

Python 3.11.7's ``tarfile`` searches each PAX extended header with a regular expression
that is quadratic in a run of digits (CVE-2024-6232, fixed only in later 3.11
releases): a 245-byte upload holding a 60,000-digit run costs it 13 s. The guard walks
the tar stream block by block as ``tarfile`` would (a header, then the member's data
rounded up to 512 bytes), reads every PAX (``x``, ``g``) and GNU long-name (``L``,
``K``) payload whole before a byte of it is handed on, and refuses one that is too
large, is not a sequence of well-formed ``"<length> <key>=<value>\\n"`` records, or
holds a run of digits longer than any honest header needs. Sparse members and chains
of extension headers, which ``tarfile`` resolves in ways that move the next header, are
refused outright; no bundle needs them.
"""

from __future__ import annotations

from typing import BinaryIO

from app.core.refusals import Kind, Refused

BLOCK = 512
_CHUNK = 1024 * 1024
# An extended header names one member: a long path, its times, maybe extended
# attributes. Anything larger is not a bundle's.
MAX_PAX_BYTES = 256 * 1024
MAX_LONG_NAME_BYTES = 64 * 1024
# No honest record needs a longer number: lengths, sizes, ids and times fit in 20
# digits, and nothing else in a header is a long run of digits.
MAX_DIGIT_RUN = 64
_MAX_LENGTH_DIGITS = 20
# Keys whose values tarfile turns into numbers.
_NUMERIC_KEYS = frozenset({"size", "uid", "gid", "mtime", "atime", "ctime"})
_NUMERIC_VALUE_CHARS = 32

_PAX_TYPES = frozenset({b"x", b"g", b"X"})  # X: Solaris' extended header
_LONG_NAME_TYPES = frozenset({b"L", b"K"})
# Members followed by data: regular files, and contiguous files (read as regular).
_DATA_TYPES = frozenset({b"0", b"\0", b"7"})
# Members with no data after their header.
_NO_DATA_TYPES = frozenset({b"1", b"2", b"3", b"4", b"5", b"6"})


class TarHeaderRefused(Refused):
    """A tar header the guard will not hand to ``tarfile``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message, Kind.INVALID)


def _number(field: bytes) -> int:
    """A header's numeric field as tarfile reads it: octal text, or base-256 binary."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[:1] == b"\xff" else value
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        raise TarHeaderRefused(
            "corrupt-archive", "the tar.gz archive cannot be read: a header has a bad number"
        ) from None


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _longest_digit_run(data: bytes) -> int:
    longest = run = 0
    for byte in data:
        if 0x30 <= byte <= 0x39:
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    return longest


def pax_records(payload: bytes) -> dict[str, bytes]:
    """The records of a PAX extended header, read strictly and in linear time; refused
    unless the payload (less its zero padding) is a sequence of well-formed records."""
    if _longest_digit_run(payload) > MAX_DIGIT_RUN:
        raise TarHeaderRefused(
            "bad-tar-header",
            f"a PAX extended header holds a run of more than {MAX_DIGIT_RUN} digits "
            "(the pattern of CVE-2024-6232); such an archive is not read",
        )
    records: dict[str, bytes] = {}
    data = payload.rstrip(b"\0")
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + _MAX_LENGTH_DIGITS + 1)
        digits = data[pos:space] if space > pos else b""
        if not digits.isdigit():
            raise TarHeaderRefused(
                "bad-tar-header", "a PAX extended header has a record without its length"
            )
        length = int(digits)
        end = pos + length
        if length <= len(digits) + 1 or end > len(data) or data[end - 1 : end] != b"\n":
            raise TarHeaderRefused(
                "bad-tar-header",
                "a PAX extended header has a record whose length does not match its text",
            )
        key, equals, value = data[space + 1 : end - 1].partition(b"=")
        if not equals or not key or b"\n" in key:
            raise TarHeaderRefused(
                "bad-tar-header", "a PAX extended header has a record without a key"
            )
        name = key.decode("utf-8", "replace")
        if name.startswith("GNU.sparse"):
            raise TarHeaderRefused(
                "special-file", "the archive holds a sparse file; pack regular files only"
            )
        if name in _NUMERIC_KEYS and len(value) > _NUMERIC_VALUE_CHARS:
            raise TarHeaderRefused(
                "bad-tar-header", f"a PAX extended header's {name!r} is not a plausible number"
            )
        records[name] = value
        pos = end
    return records


class TarHeaderGuard:
    """A read-only stream over a decompressed tar stream that hands ``tarfile`` only
    bytes the guard has read and judged: whole extension headers, and member data."""

    def __init__(self, raw: BinaryIO, max_member_bytes: int) -> None:
        self._raw = raw
        self._max_member_bytes = max_member_bytes
        self._ready = bytearray()  # judged, not yet handed on
        self._data_left = 0  # member data (with its padding) before the next header
        self._size_override: int | None = None  # a PAX 'size' for the next member
        self._extended = False  # the last header was an extension of the next one
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        while not self._ended and (size < 0 or len(self._ready) < size):
            self._advance()
        if size < 0 or size >= len(self._ready):
            out = bytes(self._ready)
            self._ready.clear()
        else:
            out = bytes(self._ready[:size])
            del self._ready[:size]
        return out

    def _exact(self, size: int) -> bytes:
        parts: list[bytes] = []
        wanted = size
        while wanted:
            chunk = self._raw.read(min(wanted, _CHUNK))
            if not chunk:
                break
            parts.append(chunk)
            wanted -= len(chunk)
        return b"".join(parts)

    def _advance(self) -> None:
        if self._data_left:
            chunk = self._raw.read(min(self._data_left, _CHUNK))
            if not chunk:
                self._ended = True
                return
            self._data_left -= len(chunk)
            self._ready += chunk
            return
        header = self._exact(BLOCK)
        if len(header) < BLOCK or header.count(0) == BLOCK:
            # The end (or a truncated stream, which tarfile reports): nothing to judge.
            self._ready += header
            if len(header) < BLOCK:
                self._ended = True
            return
        self._ready += header
        self._header(header)

    def _header(self, header: bytes) -> None:
        kind = header[156:157]
        size = _number(header[124:136])
        if size < 0:
            raise TarHeaderRefused(
                "corrupt-archive", "the tar.gz archive cannot be read: a header has a negative size"
            )
        if kind in _PAX_TYPES or kind in _LONG_NAME_TYPES:
            self._extension(kind, size)
            return
        self._extended = False
        override, self._size_override = self._size_override, None
        if kind == b"\0" and header[:100].split(b"\0", 1)[0].endswith(b"/"):
            return  # an old-style directory: no data follows
        if kind in _NO_DATA_TYPES:
            return
        if kind == b"S":
            raise TarHeaderRefused(
                "special-file", "the archive holds a sparse file; pack regular files only"
            )
        if kind not in _DATA_TYPES:
            raise TarHeaderRefused(
                "special-file",
                f"the archive has a member of tar type {kind!r}, which is not a file or folder",
            )
        member_size = size if override is None else override
        if member_size > self._max_member_bytes:
            raise TarHeaderRefused(
                "member-too-large",
                f"a member is {member_size} bytes; the limit is {self._max_member_bytes} "
                "bytes per file",
            )
        self._data_left = _padded(member_size)

    def _extension(self, kind: bytes, size: int) -> None:
        if self._extended:
            raise TarHeaderRefused(
                "bad-tar-header",
                "the archive chains two extension headers before one member; pack it with a "
                "standard tar",
            )
        limit = MAX_LONG_NAME_BYTES if kind in _LONG_NAME_TYPES else MAX_PAX_BYTES
        if size > limit:
            raise TarHeaderRefused(
                "bad-tar-header",
                f"an extension header is {size} bytes; the archive's headers are limited to "
                f"{limit} bytes",
            )
        payload = self._exact(_padded(size))
        if kind in _PAX_TYPES and len(payload) == _padded(size):
            records = pax_records(payload[:size])
            if kind == b"g" and "size" in records:
                raise TarHeaderRefused(
                    "bad-tar-header", "a global PAX header sets every member's size"
                )
            if "size" in records:
                self._size_override = _pax_size(records["size"])
        self._ready += payload
        if len(payload) < _padded(size):
            self._ended = True
        # A global header stands alone; the others extend the header that follows.
        self._extended = kind != b"g"


def _pax_size(value: bytes) -> int:
    text = value.strip()
    if not text.isdigit():
        raise TarHeaderRefused("bad-tar-header", "a PAX extended header's 'size' is not a number")
    return int(text)
