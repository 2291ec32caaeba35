"""Tar headers reach tarfile only once the portal's own bounded reader has judged them
(CVE-2024-6232 and the header tricks that move the next member)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from app.submissions.domain.archive import ArchiveLimits, ArchiveRejected, extract_archive
from app.submissions.domain.tar_guard import TarHeaderRefused, pax_records
from tests.support import hostile
from tests.support.bundles import tar_bytes

LIMITS = ArchiveLimits(max_members=50, max_total_bytes=2**22, max_member_bytes=2**21)


def _refused(tmp_path: Path, data: bytes) -> ArchiveRejected:
    archive = tmp_path / "upload.tar.gz"
    archive.write_bytes(data)
    with pytest.raises(ArchiveRejected) as info:
        extract_archive(archive, tmp_path / "out", LIMITS)
    assert not (tmp_path / "out").exists()
    return info.value


def _extracted(tmp_path: Path, data: bytes) -> Path:
    tmp_path.mkdir(exist_ok=True)
    archive = tmp_path / "upload.tar.gz"
    archive.write_bytes(data)
    return extract_archive(archive, tmp_path / "out", LIMITS).root


@pytest.mark.parametrize(
    "archive", [hostile.pax_digit_run(), hostile.pax_digits_in_a_value()], ids=["run", "value"]
)
def test_a_pax_header_with_a_long_run_of_digits_is_refused_before_tarfile_sees_it(
    tmp_path: Path, archive: bytes
) -> None:
    refusal = _refused(tmp_path, archive)
    assert refusal.code == "bad-tar-header"
    assert "CVE-2024-6232" in refusal.message


def test_the_pax_digit_run_is_the_small_upload_of_the_report() -> None:
    assert len(hostile.pax_digit_run()) < 400


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"12 path=a.txt\n", "length does not match"),
        (b"path=a.txt\n", "without its length"),
        (b"11 path a.txt\n", "length does not match"),
        (b"10 pathxx\n", "without a key"),
        (b"99999999999999999999999 path=a\n", "without its length"),
    ],
)
def test_malformed_pax_records_are_refused(payload: bytes, why: str) -> None:
    with pytest.raises(TarHeaderRefused, match=why):
        pax_records(payload)


def test_well_formed_pax_records_are_read() -> None:
    payload = hostile.pax_record(b"path", b"org/a.txt") + hostile.pax_record(b"mtime", b"1.5")
    assert pax_records(payload + b"\0" * 40) == {"path": b"org/a.txt", "mtime": b"1.5"}


def test_archives_tarfile_writes_with_long_names_in_either_format_extract(tmp_path: Path) -> None:
    long_name = "org/" + "/".join(["folder-with-a-long-name"] * 8) + "/point.yaml"
    for fmt, sub in ((tarfile.PAX_FORMAT, "pax"), (tarfile.GNU_FORMAT, "gnu")):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz", format=fmt) as tar:
            info = tarfile.TarInfo(long_name)
            info.size = 5
            info.pax_headers = {"comment": "made by a test"} if fmt == tarfile.PAX_FORMAT else {}
            tar.addfile(info, io.BytesIO(b"hello"))
        root = _extracted(tmp_path / sub, buffer.getvalue())
        assert (root / long_name).read_bytes() == b"hello"


def test_a_size_given_by_a_pax_header_moves_the_next_header_as_tarfile_reads_it(
    tmp_path: Path,
) -> None:
    root = _extracted(tmp_path, hostile.pax_size("org/a.txt", b"hello", 5))
    assert (root / "org/a.txt").read_bytes() == b"hello"


def test_a_pax_size_past_the_member_limit_is_refused(tmp_path: Path) -> None:
    refusal = _refused(tmp_path, hostile.pax_size("org/a.txt", b"hello", 2**40))
    assert refusal.code == "member-too-large"


@pytest.mark.parametrize(
    ("archive", "code"),
    [
        (hostile.chained_extensions(), "bad-tar-header"),
        (hostile.gnu_sparse(), "special-file"),
        (hostile.gnu_long_name(), "bad-tar-header"),
    ],
    ids=["chained", "sparse", "long-name"],
)
def test_headers_that_tarfile_resolves_by_moving_the_next_header_are_refused(
    tmp_path: Path, archive: bytes, code: str
) -> None:
    assert _refused(tmp_path, archive).code == code


def test_an_old_style_directory_has_no_data_after_its_header(tmp_path: Path) -> None:
    folder = tarfile.TarInfo("org/sub/")
    folder.type = tarfile.AREGTYPE
    root = _extracted(tmp_path, tar_bytes([(folder, None), (tarfile.TarInfo("org/b"), b"b")]))
    assert (root / "org/sub").is_dir()
    assert (root / "org/b").read_bytes() == b"b"
