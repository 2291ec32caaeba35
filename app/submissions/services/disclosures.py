"""The bundle as reviewers read it: its files, one file's text, and the system
description compared across points (every point carries its own copy, rules §9.2)."""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.bundle_files import read_mapping
from app.core.numbers import whole_number
from app.core.paths import OutsideFolder, inside
from app.core.refusals import Kind, Refused
from app.db.models import Submission
from app.settings import Settings
from app.storage import StorageError
from app.submissions.services.extracted import bundle_folder

log = logging.getLogger(__name__)

MAX_SHOWN_BYTES = 1024 * 1024
TEXT_SUFFIXES = frozenset(
    ".json .yaml .yml .txt .md .log .csv .toml .py .sh .cfg .ini .jsonl".split()
)


class DisclosureError(Refused):
    pass


@dataclass(frozen=True)
class BundleFile:
    path: str
    size: int
    viewable: bool


def _root(settings: Settings, submission: Submission) -> Path | None:
    """The bundle's folder on this host; None when it cannot be read now (the store is
    out of reach, or the archive is gone or damaged: the operator's log says which)."""
    try:
        return bundle_folder(settings, submission)
    except StorageError as exc:
        log.error("submission %s: its bundle cannot be read: %s", submission.public_id, exc)
        return None


def bundle_files(settings: Settings, submission: Submission, limit: int = 5000) -> list[BundleFile]:
    root = _root(settings, submission)
    if root is None or not root.is_dir():
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
    if root is None:
        raise DisclosureError(
            "bundle-unavailable",
            "the bundle's files cannot be read now; try again in a while",
            Kind.UNAVAILABLE,
        )
    try:
        target = inside(root, *rel.split("/"))
    except OutsideFolder:
        target = None
    if target is None or not target.is_file():
        raise DisclosureError("no-such-file", f"the bundle has no file {rel!r}", Kind.NOT_FOUND)
    if target.suffix.lower() not in TEXT_SUFFIXES:
        raise DisclosureError(
            "not-text", f"{rel!r} is not a text file the portal shows", Kind.UNSUPPORTED
        )
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


def _system_desc_copies(root: Path | None) -> list[tuple[Path, str, Any]]:
    """Each point's ``system_desc.json``: its path, the point's label
    (``<system>/<model>/r<N>``) and its parsed content (None when unreadable); none when
    the bundle cannot be read now."""
    copies: list[tuple[Path, str, Any]] = []
    if root is None:
        return copies
    for path in sorted(root.glob("results/*/*/r*/system_desc.json")):
        label = path.parent.relative_to(root / "results").as_posix()
        copies.append((path, label, read_mapping(path)))
    return copies


def compare_system_descriptions(settings: Settings, submission: Submission) -> dict[str, Any]:
    """The fields whose values differ between points' ``system_desc.json`` copies."""
    copies: dict[str, dict[str, str]] = {
        label: _flatten(desc) if desc is not None else {"(unreadable)": "could not be read as JSON"}
        for _path, label, desc in _system_desc_copies(_root(settings, submission))
    }
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
    number = whole_number(digits)
    return (head, -1 if number is None else number, point)


# What buyers compare systems on, from each system's system_desc.json (rules §8.2), and
# the declared steady-state window of each point (point.yaml, rules §4.4).
SYSTEM_FIELDS = (
    ("system_category", "System category"),
    ("serving_framework", "Serving framework"),
    ("model_precision", "Model precision"),
    ("dataset_name", "Dataset"),
    ("config_summary", "Configuration summary"),
    ("disaggregated", "Disaggregated serving"),
    ("tensor_parallel", "Tensor parallel"),
    ("pipeline_parallel", "Pipeline parallel"),
    ("expert_parallel", "Expert parallel"),
    ("data_parallel", "Data parallel"),
    ("batch", "Maximum batch size"),
)
NODE_FIELDS = (
    ("host_processor_model_name", "Host processor"),
    ("host_memory_capacity", "Host memory"),
    ("cooling", "Cooling"),
    ("driver", "Driver"),
    ("operating_system", "Operating system"),
)
ACCELERATOR_FIELDS = (
    ("accelerator_memory_capacity", "Accelerator memory"),
    ("accelerator_interconnect", "Accelerator interconnect"),
)


def _shown(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _first_dict(items: Any) -> dict[str, Any]:
    return next((i for i in items if isinstance(i, dict)), {}) if isinstance(items, list) else {}


# What a bundle discloses depends only on its archive, which is stored once and never
# changed: kept per archive and folder, so a results view of many systems reads each
# bundle's files once, not on every request (the most recently used are kept).
_DISCLOSED: OrderedDict[tuple[str, str], dict[str, dict[str, Any]]] = OrderedDict()
_DISCLOSED_KEPT = 512
_DISCLOSED_LOCK = threading.Lock()


def system_disclosures(settings: Settings, submission: Submission) -> dict[str, dict[str, Any]]:
    """Per system folder: the disclosures (label → value, missing ones left out), and per
    point of each curve the declared steady-state window."""
    key = (submission.archive.sha256, submission.bundle_root or "")
    with _DISCLOSED_LOCK:
        if (kept := _DISCLOSED.get(key)) is not None:
            _DISCLOSED.move_to_end(key)
            return copy.deepcopy(kept)
    root = _root(settings, submission)
    out = _read_disclosures(root)
    if root is not None:  # a bundle out of reach now is read again next time
        with _DISCLOSED_LOCK:
            _DISCLOSED[key] = copy.deepcopy(out)
            while len(_DISCLOSED) > _DISCLOSED_KEPT:
                _DISCLOSED.popitem(last=False)
    return out


def _read_disclosures(root: Path | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for desc_path, label, desc in _system_desc_copies(root):
        entry = out.setdefault(label.split("/", 1)[0], {"fields": {}, "steady_state": {}})
        point = read_mapping(desc_path.parent / "point.yaml") or {}
        window = point.get("steady_state")
        if isinstance(window, dict) and window:
            entry["steady_state"][label] = {
                "verdict": window.get("verdict"),
                "window": window.get("window") if isinstance(window.get("window"), dict) else {},
            }
        if entry["fields"] or not isinstance(desc, dict):
            continue  # the first readable copy describes the system (differences: above)
        # model_precision: system_desc.json's, else the point's own disclosure.
        precision = desc.get("model_precision")
        values = {
            **desc,
            "model_precision": point.get("model_precision") if precision is None else precision,
        }
        node = _first_dict(desc.get("node_types"))
        accelerator = _first_dict(node.get("accelerator_info"))
        found = [(name, values.get(key)) for key, name in SYSTEM_FIELDS]
        found += [(name, node.get(key)) for key, name in NODE_FIELDS]
        found += [(name, accelerator.get(key)) for key, name in ACCELERATOR_FIELDS]
        entry["fields"] = {k: v for k, raw in found if (v := _shown(raw)) is not None}
    return out
