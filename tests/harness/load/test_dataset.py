"""Datasets in JSONL, CSV and Parquet, with a prompt column or chat messages."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.load.dataset import DatasetError, load_dataset


def test_jsonl_csv_and_parquet_give_the_same_samples(tmp_path: Path) -> None:
    prompts = ["first prompt", "second, with a comma", 'third "quoted"']
    (tmp_path / "d.jsonl").write_text(
        "".join(json.dumps({"text_input": p}) + "\n" for p in prompts)
    )
    import csv

    with (tmp_path / "d.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text_input", "max_tokens"])
        writer.writerows([[p, 64] for p in prompts])
    pq.write_table(pa.table({"text_input": prompts}), tmp_path / "d.parquet")
    for name in ("d.jsonl", "d.csv", "d.parquet"):
        samples = load_dataset(tmp_path / name)
        assert [s.prompt for s in samples] == prompts, name
        assert [s.index for s in samples] == [0, 1, 2]
    assert load_dataset(tmp_path / "d.csv")[0].max_tokens == 64


def test_messages_and_explicit_columns(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "hi"}]
    (tmp_path / "c.jsonl").write_text(json.dumps({"messages": chat}) + "\n")
    assert load_dataset(tmp_path / "c.jsonl")[0].messages == chat
    (tmp_path / "q.jsonl").write_text(json.dumps({"body": "x", "prompt": "y"}) + "\n")
    assert load_dataset(tmp_path / "q.jsonl", prompt_column="body")[0].prompt == "x"


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ('{"nope": 1}\n', "a.jsonl", "no prompt column"),
        ("", "b.jsonl", "empty"),
        ("[1, 2]\n", "c.jsonl", "JSON object"),
        ("x", "d.txt", "unsupported dataset type"),
    ],
)
def test_bad_datasets_say_what_is_wrong(
    tmp_path: Path, content: str, name: str, message: str
) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(DatasetError, match=message):
        load_dataset(tmp_path / name)
