from __future__ import annotations

from pathlib import Path

import pytest

from app.demo.bundles import BundleFactory
from app.submissions.domain.bundle import LayoutRejected, content_digest, locate_submission


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
