"""A zip's central directory is read by the portal: counted before it is read whole,
and refused when entries overlap (CVE-2024-0450)."""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from app.submissions.domain.archive import ArchiveLimits, ArchiveRejected, extract_archive
from app.submissions.domain.zip_directory import ZipRefused, read_entries
from tests.support import hostile


def _read(data: bytes, max_members: int = 20_000) -> list[str]:
    return [e.name for e in read_entries(io.BytesIO(data), len(data), max_members)]


def test_the_300001_entry_zip_is_refused_from_its_count_without_reading_its_directory() -> None:
    data = hostile.zip_of_many(300_001)
    assert len(data) > 20 * 1024**2  # the report's 25 MB: what zipfile would read whole
    tracemalloc.start()
    with pytest.raises(ZipRefused) as info:
        _read(data)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert info.value.code == "too-many-members"
    assert peak < 1024**2  # nothing like the directory's 300,001 entries was held


def test_a_count_that_lies_is_caught_while_the_directory_is_read() -> None:
    data = hostile.zip_of_many(60, declared=10)
    with pytest.raises(ZipRefused) as info:
        _read(data, max_members=50)
    assert info.value.code == "too-many-members"


def test_overlapping_entries_are_refused() -> None:
    with pytest.raises(ZipRefused) as info:
        _read(hostile.zip_overlap())
    assert info.value.code == "overlapping-members"
    assert "CVE-2024-0450" in info.value.message


def test_a_zip_that_zipfile_writes_reads_as_zipfile_reads_it(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("org/", b"")
        zf.writestr("org/ünïcode.txt", b"x" * 5000)
        zf.writestr("org/b.txt", b"")
    data = buffer.getvalue()
    assert _read(data) == ["org/", "org/ünïcode.txt", "org/b.txt"]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert [i.filename for i in zf.infolist()] == _read(data)


def test_a_zip64_archive_is_read(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", allowZip64=True) as zf:
        with zf.open("org/a.txt", "w", force_zip64=True) as member:
            member.write(b"hello")
    assert _read(buffer.getvalue()) == ["org/a.txt"]


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x05\x06\0\0\0\0\x05\0\x05\0" + b"\0" * 10,  # five entries, no directory
        b"PK\x03\x04 nothing else",
        b"\0" * 100,
    ],
)
def test_a_damaged_directory_is_refused_as_corrupt(data: bytes) -> None:
    with pytest.raises(ZipRefused) as info:
        _read(data)
    assert info.value.code in {"corrupt-archive", "too-many-members"}


def test_through_extraction_the_refusals_keep_their_codes(tmp_path: Path) -> None:
    for name, data, code in (
        ("many.zip", hostile.zip_of_many(300_001), "too-many-members"),
        ("overlap.zip", hostile.zip_overlap(), "overlapping-members"),
        ("long.zip", hostile.zip_long_component(), "bad-name"),
    ):
        archive = tmp_path / name
        archive.write_bytes(data)
        with pytest.raises(ArchiveRejected) as info:
            extract_archive(archive, tmp_path / "out", ArchiveLimits())
        assert info.value.code == code, name
        assert str(tmp_path) not in info.value.message
