"""A published curve's points packed as numbers: what the explorer's table of every point
of every curve reads, written beside the snapshot when the curve is published.

The snapshot (``app.publishing.domain.snapshot``) is the record; this is a copy derived
from it alone, so it never goes stale (a snapshot never changes). It exists because a
record of tens of thousands of curves read as a model per point took seconds; packed, it
is read in milliseconds. A reader that finds no packing, or one of a format it does not
know, packs the snapshot itself.

Layout: ``PT``, the format byte, the lengths of the system's folder name (2 bytes) and of
a JSON header (4 bytes, little-endian), the name, the header (the curve's distinct
regions and re-count windows, which the rows index, and how many points the chair
invalidated), then one fixed-size row per point, in the snapshot's order.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from app.core.regions import Offline
from app.publishing.domain.snapshot import CurveSnapshot, FrozenRecount

FORMAT = 1
_MAGIC = b"PT"
_PREFIX = struct.Struct("<2sBHI")

OFFLINE = tuple(Offline)  # a row's ``offline`` indexes this
# What a point declares of its steady state (a row's ``basis``): the table reads "none"
# as the curve's default (app.results.domain.sla).
BASIS_NONE, BASIS_STEADY, BASIS_NOT_STEADY = 0, 1, 2
NO_REQUEST_LOG = -1

ROW = np.dtype(
    [
        ("concurrency", "<i8"),
        ("offline", "u1"),
        ("basis", "u1"),
        ("region", "u1"),  # into the header's regions
        ("window", "u1"),  # into the header's windows; read only with a request log
        ("system_tps", "<f8"),
        ("system_tps_per_kw", "<f8"),  # NaN: not measured
        ("per_user", "<f8"),
        ("ttft_p90_ms", "<f8"),
        ("engaged_accelerators", "<f8"),  # NaN: the point ran on the whole system
        ("share", "<f8"),
        ("request_log", "<i8"),  # NO_REQUEST_LOG: no re-count published with the point
        ("duration_ms", "<f8"),
        ("output_tokens", "<i8"),  # -1: not counted
    ]
)


class PackedCurve:
    """One curve's packed points (``unpack``); read-only by convention (a record of tens
    of thousands is read on a cold start, and a frozen dataclass is slower to build)."""

    __slots__ = ("row_bytes", "system_dir", "regions", "windows", "invalidated")

    def __init__(
        self,
        row_bytes: bytes,  # the rows as stored: a table of many curves joins these
        system_dir: str,
        regions: tuple[str | None, ...],
        windows: tuple[str, ...],
        invalidated: int,  # points the chair invalidated, kept in the archive
    ) -> None:
        self.row_bytes = row_bytes
        self.system_dir = system_dir
        self.regions = regions
        self.windows = windows
        self.invalidated = invalidated

    def __len__(self) -> int:
        return len(self.row_bytes) // ROW.itemsize

    def recount(self, row: int) -> FrozenRecount | None:
        """The re-count published with the point of *row* (of this curve)."""
        r = np.frombuffer(self.row_bytes, dtype=ROW, count=1, offset=row * ROW.itemsize)[0]
        if int(r["request_log"]) == NO_REQUEST_LOG:
            return None
        tokens = int(r["output_tokens"])
        return FrozenRecount(
            request_log=int(r["request_log"]),
            window=self.windows[int(r["window"])],
            duration_ms=_or_none(float(r["duration_ms"])),
            output_tokens=tokens if tokens >= 0 else None,
        )


def _or_none(value: float) -> float | None:
    return None if value != value else value  # NaN is not equal to itself


def _number(value: float | None) -> float:
    return np.nan if value is None else value


class DeclaredBasis(Protocol):
    @property
    def steady(self) -> bool: ...


def basis_code(basis: DeclaredBasis | None) -> int:
    """A row's ``basis``: what a point declares of its steady state."""
    if basis is None:
        return BASIS_NONE
    return BASIS_STEADY if basis.steady else BASIS_NOT_STEADY


def pack(snapshot: CurveSnapshot) -> bytes:
    regions: dict[str | None, int] = {}
    windows: dict[str, int] = {}
    rows = np.zeros(len(snapshot.points), dtype=ROW)
    for n, p in enumerate(snapshot.points):
        recount = p.recount
        rows[n] = (
            p.concurrency,
            OFFLINE.index(p.offline),
            basis_code(p.reporting_basis),
            regions.setdefault(p.region, len(regions)),
            windows.setdefault(recount.window, len(windows)) if recount else 0,
            p.system_tps,
            _number(p.system_tps_per_kw),
            _number(p.per_user),
            _number(p.ttft_p90_ms),
            _number(p.engaged.accelerators if p.engaged else None),
            p.engaged.share if p.engaged else 1.0,
            recount.request_log if recount else NO_REQUEST_LOG,
            _number(recount.duration_ms if recount else None),
            recount.output_tokens if recount and recount.output_tokens is not None else -1,
        )
    header = json.dumps(
        {
            "regions": list(regions),
            "windows": list(windows),
            "invalidated": len(snapshot.invalidated_points),
        },
        separators=(",", ":"),
    ).encode()
    name = snapshot.system_dir.encode()
    return _PREFIX.pack(_MAGIC, FORMAT, len(name), len(header)) + name + header + rows.tobytes()


def unpack(packed: bytes | None) -> PackedCurve | None:
    """The packed points, or None where there is no packing this reader knows."""
    if packed is None or len(packed) < _PREFIX.size:
        return None
    magic, version, name_length, header_length = _PREFIX.unpack_from(packed)
    if magic != _MAGIC or version != FORMAT:
        return None
    start = _PREFIX.size + name_length
    rows_at = start + header_length
    return PackedCurve(
        packed[rows_at:],
        packed[_PREFIX.size : start].decode(),
        *_header(packed[start:rows_at]),
    )


# Headers repeat from curve to curve (the same regions, the same windows): each is read once.
_HEADERS: dict[bytes, tuple[tuple[str | None, ...], tuple[str, ...], int]] = {}


def _header(text: bytes) -> tuple[tuple[str | None, ...], tuple[str, ...], int]:
    found = _HEADERS.get(text)
    if found is None:
        header: dict[str, Any] = json.loads(text)
        found = (tuple(header["regions"]), tuple(header["windows"]), int(header["invalidated"]))
        if len(_HEADERS) > 4096:
            _HEADERS.clear()
        _HEADERS[text] = found
    return found


def packed_or_packing(packed: bytes | None, snapshot: Callable[[], CurveSnapshot]) -> PackedCurve:
    """*packed* read, or, where it is missing or of another format, the snapshot packed
    (*snapshot*: a callable giving it, asked only then)."""
    found = unpack(packed)
    return found if found is not None else packed_now(snapshot())


def packed_now(snapshot: CurveSnapshot) -> PackedCurve:
    """*snapshot* packed and read back (a curve a view changed)."""
    made = unpack(pack(snapshot))
    assert made is not None
    return made


def joined_rows(curves: Sequence[PackedCurve]) -> npt.NDArray[np.void]:
    """Every curve's rows, one curve after another."""
    return np.frombuffer(b"".join(c.row_bytes for c in curves), dtype=ROW)


def regions_of(
    curves: Sequence[PackedCurve], rows: npt.NDArray[np.void]
) -> npt.NDArray[np.object_]:
    """Every row's region (*rows*: the curves' rows joined)."""
    # Curves share a handful of region lists: map each list's codes at once.
    lists: dict[tuple[str | None, ...], int] = {}
    which = np.repeat(
        np.array([lists.setdefault(c.regions, len(lists)) for c in curves], dtype=np.int64),
        [len(c) for c in curves],
    )
    codes = rows["region"]
    out = np.empty(len(codes), dtype=np.object_)
    for names, n in lists.items():
        chosen = which == n
        out[chosen] = np.array(names + (None,), dtype=np.object_)[codes[chosen]]
    return out
