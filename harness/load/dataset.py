"""Datasets: JSONL, CSV or Parquet, with a prompt column or chat ``messages``."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPT_COLUMNS = ("prompt", "text_input", "input", "question")


class DatasetError(Exception):
    pass


@dataclass(frozen=True)
class Sample:
    index: int
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    max_tokens: int | None = None


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; errors name the line."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    rows: list[tuple[int, dict[str, Any]]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise DatasetError(f"{path}:{number}: each line must be a JSON object")
            rows.append((number, row))
    return rows


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        return [row for _, row in read_jsonl(path)]
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise DatasetError("reading Parquet needs pyarrow (pip install pyarrow)") from exc
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        return rows
    raise DatasetError(f"{path}: unsupported dataset type {suffix!r} (jsonl, csv or parquet)")


def load_dataset(path: Path, prompt_column: str | None = None) -> list[Sample]:
    rows = _rows(path)
    if not rows:
        raise DatasetError(f"{path}: the dataset is empty")
    first = rows[0]
    column = prompt_column
    if column is None and "messages" not in first:
        column = next((c for c in PROMPT_COLUMNS if c in first), None)
        if column is None:
            raise DatasetError(
                f"{path}: no prompt column; name one with --prompt-column "
                f"(columns: {', '.join(sorted(first))})"
            )
    samples = []
    for i, row in enumerate(rows):
        max_tokens = row.get("max_tokens") or row.get("max_new_tokens")
        max_tokens = int(max_tokens) if max_tokens not in (None, "") else None
        if column is not None:
            if column not in row:
                raise DatasetError(f"{path}: row {i + 1} has no {column!r} column")
            samples.append(Sample(i, prompt=str(row[column]), max_tokens=max_tokens))
        else:
            messages = row["messages"]
            if isinstance(messages, str):
                messages = json.loads(messages)
            samples.append(Sample(i, messages=list(messages), max_tokens=max_tokens))
    return samples


def prompt_key(text: str | None, messages: list[dict[str, Any]] | None) -> str | None:
    """A prompt's identity, the same for a dataset sample and for the prompt an event
    records: the text when there is one, else the messages as canonical JSON."""
    if text is not None:
        return "t:" + text
    if messages is not None:
        return "m:" + json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return None


def dataset_keys(samples: list[Sample]) -> frozenset[str]:
    """Every sample's prompt identity (:func:`prompt_key`)."""
    return frozenset(key for s in samples if (key := prompt_key(s.prompt, s.messages)) is not None)
