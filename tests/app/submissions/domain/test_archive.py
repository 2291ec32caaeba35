"""Hostile and malformed archives are refused before anything is written."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.submissions.domain.archive import (
    ArchiveLimits,
    ArchiveRejected,
    extract_archive,
    normalise_member_name,
)
from tests.support.bundles import tar_bytes

LIMITS = ArchiveLimits(
    max_members=50,
    max_total_bytes=2 * 1024 * 1024,
    max_member_bytes=1024 * 1024,
    max_compression_ratio=50.0,
    ratio_floor_bytes=256 * 1024,
)


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def _write(tmp_path: Path, data: bytes, name: str = "upload.tar.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _rejected(tmp_path: Path, archive: Path) -> ArchiveRejected:
    dest = tmp_path / "out"
    with pytest.raises(ArchiveRejected) as info:
        extract_archive(archive, dest, LIMITS)
    # Nothing at the destination, no staging directory left beside it.
    assert not dest.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]
    return info.value


def _zip(tmp_path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    path = tmp_path / "upload.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return path


def test_extracts_regular_files_and_directories(tmp_path: Path) -> None:
    dir_info = tarfile.TarInfo("org/sub")
    dir_info.type = tarfile.DIRTYPE
    archive = _write(
        tmp_path,
        tar_bytes(
            [(dir_info, None), _file("org/sub/results/a.json", b"{}"), _file("./org/b.txt", b"hi")]
        ),
    )
    result = extract_archive(archive, tmp_path / "out", LIMITS)
    assert result.format == "tar.gz"
    assert (tmp_path / "out/org/sub/results/a.json").read_bytes() == b"{}"
    assert (tmp_path / "out/org/b.txt").read_bytes() == b"hi"
    assert result.members == 3 and result.total_bytes == 4


@pytest.mark.parametrize(
    ("member", "code"),
    [
        ("/etc/passwd", "absolute-path"),
        ("../escape.txt", "path-traversal"),
        ("org/../../escape.txt", "path-traversal"),
        ("org\\..\\escape.txt", "bad-name"),
        ("C:/windows/evil.txt", "absolute-path"),
        ("org/\x01name", "bad-name"),
    ],
)
def test_tar_member_names_that_escape_are_refused(tmp_path: Path, member: str, code: str) -> None:
    archive = _write(tmp_path, tar_bytes([_file("org/ok.txt"), _file(member)]))
    error = _rejected(tmp_path, archive)
    assert error.code == code
    assert error.member is not None
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (tarfile.SYMTYPE, "symlink"),
        (tarfile.LNKTYPE, "hardlink"),
        (tarfile.CHRTYPE, "special-file"),
        (tarfile.BLKTYPE, "special-file"),
        (tarfile.FIFOTYPE, "special-file"),
    ],
)
def test_tar_links_and_devices_are_refused(tmp_path: Path, kind: bytes, code: str) -> None:
    archive = _write(
        tmp_path, tar_bytes([_file("org/ok.txt"), _special("org/link", kind, "/etc/passwd")])
    )
    error = _rejected(tmp_path, archive)
    assert error.code == code
    assert "org/link" in error.message


def test_symlink_then_write_through_it_is_refused(tmp_path: Path) -> None:
    """The classic: a link to outside, then a file 'inside' the link."""
    archive = _write(
        tmp_path,
        tar_bytes(
            [_special("org/dir", tarfile.SYMTYPE, str(tmp_path)), _file("org/dir/pwned", b"!")]
        ),
    )
    assert _rejected(tmp_path, archive).code == "symlink"
    assert not (tmp_path / "pwned").exists()


def test_too_many_members(tmp_path: Path) -> None:
    archive = _write(
        tmp_path, tar_bytes([_file(f"org/f{i}") for i in range(LIMITS.max_members + 1)])
    )
    error = _rejected(tmp_path, archive)
    assert error.code == "too-many-members"
    assert str(LIMITS.max_members) in error.message


def test_member_over_the_per_file_limit(tmp_path: Path) -> None:
    archive = _write(
        tmp_path, tar_bytes([_file("org/big.bin", b"a" * (LIMITS.max_member_bytes + 1))])
    )
    assert _rejected(tmp_path, archive).code == "member-too-large"


def test_total_over_the_limit(tmp_path: Path) -> None:
    chunk = bytes(range(256)) * 3000  # incompressible enough to stay under the ratio
    members = [_file(f"org/part{i}.bin", chunk) for i in range(4)]
    archive = _write(tmp_path, tar_bytes(members))
    assert _rejected(tmp_path, archive).code in {"too-large", "compression-ratio"}


def test_gzip_bomb_is_stopped_by_the_ratio(tmp_path: Path) -> None:
    """A tar of zeros compresses ~1000:1; it is refused while streaming, not after."""
    limits = ArchiveLimits(
        max_members=10,
        max_total_bytes=10**12,
        max_member_bytes=10**12,
        max_compression_ratio=100,
        ratio_floor_bytes=1024 * 1024,
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("org/zeros.bin")
        info.size = 64 * 1024 * 1024
        tar.addfile(info, io.BytesIO(b"\0" * info.size))
    archive = _write(tmp_path, buffer.getvalue())
    dest = tmp_path / "out"
    with pytest.raises(ArchiveRejected) as error:
        extract_archive(archive, dest, limits)
    assert error.value.code == "compression-ratio"
    assert not dest.exists()


def test_duplicate_member_and_file_directory_conflict(tmp_path: Path) -> None:
    dup = _write(tmp_path, tar_bytes([_file("org/a.txt"), _file("org/a.txt")]), "dup.tar.gz")
    assert _rejected(tmp_path, dup).code == "duplicate-member"
    conflict = _write(tmp_path, tar_bytes([_file("org/a"), _file("org/a/b.txt")]), "c.tar.gz")
    assert _rejected(tmp_path, conflict).code == "path-conflict"


def test_corrupt_truncated_and_foreign_files(tmp_path: Path) -> None:
    whole = tar_bytes([_file("org/a.txt", b"hello" * 1000)])
    truncated = _write(tmp_path, whole[: len(whole) // 2], "trunc.tar.gz")
    assert _rejected(tmp_path, truncated).code == "corrupt-archive"
    not_tar = _write(tmp_path, gzip.compress(b"just text, not a tar" * 40), "text.gz")
    assert _rejected(tmp_path, not_tar).code in {"corrupt-archive", "empty-archive"}
    foreign = _write(tmp_path, b"%PDF-1.7 not an archive", "doc.pdf")
    assert _rejected(tmp_path, foreign).code == "unsupported-format"
    empty = _write(tmp_path, tar_bytes([]), "empty.tar.gz")
    assert _rejected(tmp_path, empty).code == "empty-archive"


def test_zip_traversal_absolute_and_symlink(tmp_path: Path) -> None:
    assert _rejected(tmp_path, _zip(tmp_path, [("org/../../x.txt", b"!")])).code == "path-traversal"
    assert _rejected(tmp_path, _zip(tmp_path, [("/abs.txt", b"!")])).code == "absolute-path"
    link = zipfile.ZipInfo("org/link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    assert _rejected(tmp_path, _zip(tmp_path, [(link, b"/etc/passwd")])).code == "symlink"
    fifo = zipfile.ZipInfo("org/fifo")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    assert _rejected(tmp_path, _zip(tmp_path, [(fifo, b"")])).code == "special-file"


def test_zip_bomb_is_refused_from_its_declared_sizes(tmp_path: Path) -> None:
    archive = _zip(tmp_path, [("org/zeros.bin", b"\0" * (LIMITS.max_member_bytes - 1))])
    archive_small = tmp_path / "bomb.zip"
    archive.rename(archive_small)
    limits = ArchiveLimits(
        max_members=5,
        max_total_bytes=10**9,
        max_member_bytes=10**9,
        max_compression_ratio=50,
        ratio_floor_bytes=512 * 1024,
    )
    with pytest.raises(ArchiveRejected) as error:
        extract_archive(archive_small, tmp_path / "out", limits)
    assert error.value.code == "compression-ratio"
    assert not (tmp_path / "out").exists()


def test_zip_extracts_and_ignores_macos_metadata(tmp_path: Path) -> None:
    archive = _zip(
        tmp_path,
        [
            ("org/sub/results/x.json", b"{}"),
            ("__MACOSX/org/._x", b"junk"),
            ("org/.DS_Store", b"junk"),
        ],
    )
    result = extract_archive(archive, tmp_path / "out", LIMITS)
    assert result.format == "zip"
    assert (tmp_path / "out/org/sub/results/x.json").exists()
    assert not (tmp_path / "out/__MACOSX").exists()
    assert not (tmp_path / "out/org/.DS_Store").exists()


def test_destination_must_be_new(tmp_path: Path) -> None:
    archive = _write(tmp_path, tar_bytes([_file("org/a.txt")]))
    (tmp_path / "out").mkdir()
    with pytest.raises(FileExistsError):
        extract_archive(archive, tmp_path / "out", LIMITS)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("./org/a.txt", "org/a.txt"), ("org//sub/./a", "org/sub/a"), ("org/sub/", "org/sub")],
)
def test_member_names_are_normalised(raw: str, expected: str) -> None:
    assert normalise_member_name(raw) == expected


_PREFIXES = [b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", b"PK\x03\x04", b"PK\x05\x06", b""]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(prefix=st.sampled_from(_PREFIXES), body=st.binary(max_size=600))
def test_any_bytes_extract_or_are_refused_with_a_code(
    tmp_path_factory: pytest.TempPathFactory, prefix: bytes, body: bytes
) -> None:
    """Truncated gzip streams, broken zip directories, noise: refused, never a crash."""
    base = tmp_path_factory.mktemp("fuzz")
    upload = base / "upload.bin"
    upload.write_bytes(prefix + body)
    try:
        extracted = extract_archive(upload, base / "out", ArchiveLimits())
    except ArchiveRejected as exc:
        assert exc.code and exc.message
        assert not (base / "out").exists() or not any((base / "out").rglob("*"))
    else:
        assert extracted.root.is_relative_to(base / "out")


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=5))
def test_any_member_names_stay_inside_or_are_refused(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    base = tmp_path_factory.mktemp("names")
    members = []
    for name in names:
        info = tarfile.TarInfo(name)
        members.append((info, b"x"))
    upload = base / "upload.tar.gz"
    try:
        upload.write_bytes(tar_bytes(members))
    except (ValueError, UnicodeEncodeError):
        return  # tarfile itself cannot write such a name
    try:
        extract_archive(upload, base / "out", ArchiveLimits())
    except ArchiveRejected as exc:
        assert exc.code
    for path in (base / "out").rglob("*") if (base / "out").exists() else []:
        assert path.resolve().is_relative_to((base / "out").resolve())
