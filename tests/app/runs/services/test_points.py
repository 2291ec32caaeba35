"""Paths from bundle data: a dataset is found by its catalogue name, never by a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.paths import OutsideFolder, inside
from app.runs.services.points import dataset_file
from app.settings import Settings


@pytest.fixture
def files(tmp_path: Path) -> Settings:
    datasets = tmp_path / "data" / "datasets"
    datasets.mkdir(parents=True)
    (datasets / "cnn_dailymail.jsonl").write_text('{"prompt": "p"}\n')
    (tmp_path / "secretdata.jsonl").write_text('{"prompt": "the operator\'s secrets"}\n')
    (tmp_path / "data" / "secretdata.csv").write_text("prompt\nsecret\n")
    return Settings(data_dir=tmp_path / "data", datasets_dir=datasets)


def test_a_catalogued_dataset_is_found_by_name(files: Settings) -> None:
    found = dataset_file(files, "cnn_dailymail")
    assert found is not None and found.name == "cnn_dailymail.jsonl"
    assert dataset_file(files, "gpqa") is None  # catalogued, but no copy here


@pytest.mark.parametrize(
    "declared", ["../../secretdata", "../secretdata", "/etc/passwd", "secretdata", "", None]
)
def test_no_declared_value_reaches_a_file_outside_the_catalogue(
    files: Settings, declared: str | None
) -> None:
    assert dataset_file(files, declared) is None


def test_a_catalogue_name_linked_out_of_the_folder_is_not_followed(
    files: Settings, tmp_path: Path
) -> None:
    link = files.effective_datasets_dir / "gpqa.jsonl"
    link.symlink_to(tmp_path / "secretdata.jsonl")
    assert dataset_file(files, "gpqa") is None
    extra = files.model_copy(update={"extra_datasets": ["secretdata"]})
    assert dataset_file(extra, "secretdata") is None  # named, but not in the folder


def test_inside_refuses_every_way_out(tmp_path: Path) -> None:
    assert inside(tmp_path, "a", "b.txt") == (tmp_path / "a" / "b.txt").resolve()
    for parts in (("..", "x"), ("/etc/passwd",), ("a/../../x",), ("a\\..\\x",), ("a\x00",)):
        with pytest.raises(OutsideFolder):
            inside(tmp_path, *parts)
