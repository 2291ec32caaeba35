"""Paths from bundle data: a dataset is found by its catalogue name, never by a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from app.core.paths import OutsideFolder, inside
from app.db.models import Point
from app.db.session import Database
from app.runs.services.points import dataset_file, min_duration_s
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


def test_each_point_s_minimum_duration_is_its_region_s_and_kind_s(
    demo_env: tuple[Settings, Database],
) -> None:
    """§6.2: 600 s up to concurrency 32, else 1,200 s, and 2,400 s for an agentic point:
    what a reproduction must run before it confirms a point."""
    _settings, database = demo_env
    with database.session() as session:
        points = session.scalars(select(Point).join(Point.curve)).all()
        seen = set()
        for point in points:
            if point.offline_kind == "dedicated":
                continue
            agentic = point.curve.is_agentic
            expected = 600 if point.concurrency <= 32 else (2400 if agentic else 1200)
            assert min_duration_s(point) == expected, (point.curve.benchmark_model, point.dir_name)
            seen.add((agentic, expected))
    assert seen == {(False, 600), (False, 1200), (True, 600), (True, 2400)}
