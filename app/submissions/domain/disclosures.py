"""What a bundle discloses about its systems, read from its files once, where the
archive is read (the reading child process, architecture decision 18), and kept with the
submission: the disclosures buyers compare (rules §8.2), each point's declared steady-state
window (point.yaml), and the system description compared across points (every point
carries its own copy, rules §9.2). The web process shows what is kept; it never parses a
bundle's files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.bundle_files import read_mapping
from app.core.digests import canonical_digest
from app.core.numbers import whole_number
from app.submissions.domain.bundle import point_summary

# A hostile system description could differ in a million keys: a page shows this many.
MAX_DIFFERING = 500
MAX_SHOWN_VALUE = 300


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


def compare_copies(copies: list[tuple[Path, str, Any]]) -> dict[str, Any]:
    """The fields whose values differ between points' ``system_desc.json`` copies."""
    flat: dict[str, dict[str, str]] = {
        label: _flatten(desc) if desc is not None else {"(unreadable)": "could not be read as JSON"}
        for _path, label, desc in copies
    }
    # Points in concurrency order (r16 before r128), not as text sorts them.
    labels = sorted(flat, key=_point_order)
    keys = sorted({k for fields in flat.values() for k in fields})
    differing = []
    for key in keys:
        groups: dict[str, list[str]] = {}
        for label in labels:
            value = flat[label].get(key, "(missing)")[:MAX_SHOWN_VALUE]
            groups.setdefault(value, []).append(label)
        if len(groups) > 1:
            # Each value once, with the points that carry it: narrow however many points.
            differing.append(
                {
                    "field": key,
                    "groups": [{"value": v, "points": pts} for v, pts in groups.items()],
                }
            )
            if len(differing) == MAX_DIFFERING:
                break
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


def _number(value: float) -> str:
    """A float as a person writes it: 0.1 + 0.2 is 0.3, not 0.30000000000000004."""
    return f"{value:.6g}"


def _shown(value: Any) -> str | None:
    """A disclosed value as the page shows it: words for booleans, numbers without float
    noise, a mapping as its set entries ("disaggregated: no, prefill nodes: 2"), a list
    joined; nothing for an empty one."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        parts = [f"{str(k).replace('_', ' ')}: {v}" for k, raw in value.items()
                 if (v := _shown(raw)) is not None]  # fmt: skip
        return ", ".join(parts)[:MAX_SHOWN_VALUE] or None
    if isinstance(value, list):
        items = [v for raw in value if (v := _shown(raw)) is not None]
        return ", ".join(items)[:MAX_SHOWN_VALUE] or None
    return str(value)[:MAX_SHOWN_VALUE]


def _first_dict(items: Any) -> dict[str, Any]:
    return next((i for i in items if isinstance(i, dict)), {}) if isinstance(items, list) else {}


Copies = list[tuple[Path, str, Any]]


def system_fields(copies: Copies) -> dict[str, dict[str, Any]]:
    """Per system folder: the disclosures (label → value, missing ones left out), and per
    point of each curve the declared steady-state window."""
    out: dict[str, dict[str, Any]] = {}
    for desc_path, label, desc in copies:
        entry = out.setdefault(label.split("/", 1)[0], {"fields": {}, "steady_state": {}})
        point = read_mapping(desc_path.parent / "point.yaml") or {}
        window = point.get("steady_state")
        if isinstance(window, dict) and window:
            entry["steady_state"][label] = {
                "status": window.get("status"),
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
        # A client-over-network result's endpoint and contact (rules §11.10): shown as
        # text, never followed.
        entry["endpoint"] = {
            "url": _shown(values.get("endpoint_url")),
            "contact": _shown(values.get("submitter_contact")),
        }
    return out


def summary_digests(root: Path | None) -> dict[str, str | None]:
    """Per point (``<system>/<model>/r<N>``): the canonical digest of its run summary
    (None when unreadable), by which the run a point was built from is recognised."""
    if root is None:
        return {}
    found: dict[str, str | None] = {}
    for folder in sorted(root.glob("results/*/*/r*")):
        if folder.is_dir():
            summary = point_summary(folder)
            label = folder.relative_to(root / "results").as_posix()
            found[label] = canonical_digest(summary) if summary is not None else None
    return found


def read_disclosures(root: Path | None) -> dict[str, Any]:
    """Everything the pages show of the bundle's own words: ``systems`` (per system
    folder) and ``comparison`` (the system description across points), each point's
    files read once; and each point's summary digest."""
    copies = _system_desc_copies(root)
    return {
        "systems": system_fields(copies),
        "comparison": compare_copies(copies),
        "summaries": summary_digests(root),
    }
