from __future__ import annotations

from pathlib import Path

import pytest

from app.demo.bundles import BundleFactory
from app.submissions.domain.bundle import (
    LayoutRejected,
    content_digest,
    declared_organisation,
    locate_submission,
    point_summary,
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return BundleFactory().build(tmp_path_factory.mktemp("b"))


def test_org_then_submission_layout(built: Path) -> None:
    layout = locate_submission(built.parent.parent)
    assert layout.root == built
    assert layout.organisation == "Acme_Corp"
    assert layout.submission_dir_name == "sub-0001"


def test_submission_directory_or_its_contents_at_the_top(built: Path) -> None:
    assert locate_submission(built.parent).root == built
    assert locate_submission(built).root == built
    assert locate_submission(built).submission_dir_name is None


def test_several_submissions_are_refused(tmp_path: Path) -> None:
    for name in ("sub-a", "sub-b"):
        (tmp_path / "org" / name / "results").mkdir(parents=True)
    with pytest.raises(LayoutRejected) as error:
        locate_submission(tmp_path)
    assert error.value.code == "several-submissions"
    assert "sub-a" in error.value.message and "sub-b" in error.value.message


def test_no_results_anywhere_is_refused(tmp_path: Path) -> None:
    (tmp_path / "random" / "stuff").mkdir(parents=True)
    with pytest.raises(LayoutRejected) as error:
        locate_submission(tmp_path)
    assert error.value.code == "no-submission-root"


def test_content_digest_ignores_cli_metadata_only(built: Path, tmp_path: Path) -> None:
    before = content_digest(built)
    (built / "cli_metadata.json").write_text('{"created_at": "another time"}')
    assert content_digest(built) == before
    summary = next(built.glob("results/*/*/r1/result_summary.json"))
    original = summary.read_bytes()
    summary.write_bytes(original + b" ")
    try:
        assert content_digest(built) != before
    finally:
        summary.write_bytes(original)


def test_a_points_summary_is_read_from_where_each_client_writes_it(tmp_path: Path) -> None:
    flat = tmp_path / "older"
    flat.mkdir()
    (flat / "result_summary.json").write_text('{"system_tps": 10.0}')
    assert point_summary(flat) == {"system_tps": 10.0}
    newer = tmp_path / "newer"
    (newer / "performance").mkdir(parents=True)
    (newer / "performance" / "result_summary.json").write_text('{"system_tps": 20.0}')
    (newer / "result_summary.json").write_text('{"system_tps": 99.0}')
    assert point_summary(newer) == {"system_tps": 20.0}
    assert point_summary(tmp_path / "none") is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"system_tps": 1.0, "system_tps": 2.0}',  # two readers would see two values
        b'{"system_tps": NaN}',
        b"[1, 2]",
        b'{"system": "\xff"}',  # not UTF-8
    ],
)
def test_a_summary_the_reader_refuses_is_no_summary(tmp_path: Path, data: bytes) -> None:
    # Every reader of a bundle's files reads through the one hardened reader: what the
    # checks reject as unreadable is never half-read anywhere else.
    (tmp_path / "result_summary.json").write_bytes(data)
    assert point_summary(tmp_path) is None


def test_an_organisation_named_twice_in_one_file_names_none(built: Path, tmp_path: Path) -> None:
    assert declared_organisation(built) is not None
    point = tmp_path / "results" / "sys" / "model" / "r1"
    point.mkdir(parents=True)
    (point / "system_desc.json").write_text(
        '{"submitter_org_names": "Acme", "submitter_org_names": "Other"}'
    )
    assert declared_organisation(tmp_path) is None
