"""The bundle as reviewers read it: its files, one file's text, and the system
description compared across points (every point carries its own copy, rules §9.2)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.db.models import Submission
from app.settings import Settings

from .errors import ServiceError

MAX_SHOWN_BYTES = 1024 * 1024
TEXT_SUFFIXES = frozenset(
    ".json .yaml .yml .txt .md .log .csv .toml .py .sh .cfg .ini .jsonl".split()
)


class DisclosureError(ServiceError):
    pass


@dataclass(frozen=True)
class BundleFile:
    path: str
    size: int
    viewable: bool


def _root(settings: Settings, submission: Submission) -> Path:
    return (settings.data_dir / submission.bundle_root).resolve()


def bundle_files(settings: Settings, submission: Submission, limit: int = 5000) -> list[BundleFile]:
    root = _root(settings, submission)
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            found.append(BundleFile(rel, path.stat().st_size, path.suffix.lower() in TEXT_SUFFIXES))
            if len(found) >= limit:
                break
    return found


def read_bundle_file(settings: Settings, submission: Submission, rel: str) -> str:
    """The text of one bundle file, never anything outside the bundle."""
    root = _root(settings, submission)
    target = (root / rel).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        raise DisclosureError("no-such-file", f"the bundle has no file {rel!r}", 404)
    if target.suffix.lower() not in TEXT_SUFFIXES:
        raise DisclosureError("not-text", f"{rel!r} is not a text file the portal shows", 415)
    with target.open("rb") as handle:
        data = handle.read(MAX_SHOWN_BYTES + 1)
    text = data[:MAX_SHOWN_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_SHOWN_BYTES:
        text += f"\n… (only the first {MAX_SHOWN_BYTES // 1024} KiB are shown)"
    return text


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, inner in value.items():
            out.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: json.dumps(value, sort_keys=True)}


def compare_system_descriptions(settings: Settings, submission: Submission) -> dict[str, Any]:
    """The fields whose values differ between points' ``system_desc.json`` copies."""
    root = _root(settings, submission)
    copies: dict[str, dict[str, str]] = {}
    for path in sorted(root.glob("results/*/*/r*/system_desc.json")):
        label = path.parent.relative_to(root / "results").as_posix()
        try:
            copies[label] = _flatten(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            copies[label] = {"(unreadable)": "could not be read as JSON"}
    # Points in concurrency order (r16 before r128), not as text sorts them.
    labels = sorted(copies, key=_point_order)
    keys = sorted({k for fields in copies.values() for k in fields})
    differing = []
    for key in keys:
        groups: dict[str, list[str]] = {}
        for label in labels:
            groups.setdefault(copies[label].get(key, "(missing)"), []).append(label)
        if len(groups) > 1:
            # Each value once, with the points that carry it: narrow however many points.
            differing.append(
                {
                    "field": key,
                    "groups": [{"value": v, "points": pts} for v, pts in groups.items()],
                }
            )
    return {"points": labels, "fields": len(keys), "differing": differing}


def _point_order(label: str) -> tuple[str, int, str]:
    head, _, point = label.rpartition("/")
    digits = point.lstrip("r")
    return (head, int(digits) if digits.isdigit() else -1, point)
