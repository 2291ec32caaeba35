"""From run folders to a submission bundle, with the official builder.

Each run folder gets the files a submitter adds (``point.yaml``, ``system_desc.json``,
``system_power.json``, ``src/``, ``documentation/``); the folders are packed and handed
to ``endpoints_submission_cli``'s own ``build_submission_folder``, so the layout is
exactly what ``submissions create`` would upload.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from endpoints_submission_cli.submissions.builder import build_submission_folder

#: The keys §8.3 requires in every point.yaml (point-disclosure-complete).
DISCLOSURE_FIELDS = (
    "division", "max_supported_concurrency", "model_name", "model_precision", "link_to_model",
    "dataset_name", "dataset_type", "dataset_link", "seed_set", "target_cohort",
)  # fmt: skip


@dataclass
class Disclosure:
    """What the submitter declares once and every point repeats (rules §8.3)."""

    division: str
    model_name: str
    model_precision: str
    link_to_model: str
    dataset: str  # key of the official minimum-query table, e.g. "cnn_dailymail"
    dataset_name: str
    dataset_link: str
    seed_set: str
    seeds: dict[str, int]
    target_cohort: str
    max_supported_concurrency: int
    dataset_type: str = "Performance"
    extra: dict[str, Any] = field(default_factory=dict)


def point_yaml(
    disclosure: Disclosure,
    *,
    concurrency: int,
    region: str | None,
    offline: str,
    load_pattern: str,
    warmup: dict[str, Any],
    steady_state: dict[str, Any] | None = None,
    min_sample_count: int | None = None,
    min_duration_ms: int | None = None,
) -> dict[str, Any]:
    """A run's ``point.yaml``; *min_duration_ms* is what the run was set to run for (the
    official client's default, 600 s, for a run that ends with its samples)."""
    point: dict[str, Any] = {
        "concurrency": concurrency,
        "dataset": disclosure.dataset,
        "runtime_settings": {
            "load_pattern": load_pattern,
            "min_duration_ms": 600000 if min_duration_ms is None else min_duration_ms,
            # One pass over the dataset (rules §6): also the steady state's super-pass.
            "min_sample_count": min_sample_count,
            "stream_all_chunks": True,
            "runtime": dict(disclosure.seeds),
            "warmup": {"salt": False},
        },
        "warmup": warmup,
        "division": disclosure.division,
        "max_supported_concurrency": disclosure.max_supported_concurrency,
        "model_name": disclosure.model_name,
        "model_precision": disclosure.model_precision,
        "link_to_model": disclosure.link_to_model,
        "dataset_name": disclosure.dataset_name,
        "dataset_type": disclosure.dataset_type,
        "dataset_link": disclosure.dataset_link,
        "offline": offline,
        "seed_set": disclosure.seed_set,
        "target_cohort": disclosure.target_cohort,
        **disclosure.extra,
    }
    if region is not None:
        point["region"] = region
    if steady_state is not None:
        point["steady_state"] = steady_state
    return point


def add_submitter_files(
    run_dir: Path,
    *,
    point: dict[str, Any],
    system_desc: dict[str, Any],
    system_power: dict[str, Any] | None,
    implementation: str = "implementation",
    readme: str = "# Implementation\n\nHow the endpoint was served.\n",
    accuracy_results: dict[str, Any] | None = None,
) -> None:
    """Write the files a submitter adds to a run folder before assembly."""
    (run_dir / "point.yaml").write_text(yaml.safe_dump(point, sort_keys=False))
    (run_dir / "system_desc.json").write_text(json.dumps(system_desc, indent=2))
    if system_power is not None:
        (run_dir / "system_power.json").write_text(json.dumps(system_power, indent=2))
    impl = run_dir / "src" / implementation
    impl.mkdir(parents=True, exist_ok=True)
    (impl / "README.md").write_text(readme)
    docs = run_dir / "documentation"
    docs.mkdir(exist_ok=True)
    if not any(docs.iterdir()):
        (docs / "README.md").write_text("# Documentation\n")
    if accuracy_results is not None:
        (run_dir / "accuracy").mkdir(exist_ok=True)
        (run_dir / "accuracy" / "accuracy_results.json").write_text(json.dumps(accuracy_results))


def assemble(
    run_dirs: Sequence[Path],
    *,
    division: str,
    availability: str,
    work_dir: Path,
    submission_id: str,
) -> Path:
    """Pack each run folder and build ``<org>/<submission_id>/``; returns the submission dir."""
    with tempfile.TemporaryDirectory() as tmp:
        archives: list[tuple[str, Path]] = []
        for i, run_dir in enumerate(run_dirs):
            run_id = f"run-{i:03d}-{run_dir.name}"
            archive = Path(tmp) / f"{run_id}.tar.gz"
            with tarfile.open(archive, "w:gz") as tar:
                # events.jsonl stays behind, as the official builder would leave it.
                tar.add(run_dir, arcname=run_id, filter=_without_events)
            archives.append((run_id, archive))
        with warnings.catch_warnings():
            # Per-point tps_utilization differs by design; the builder warns about it.
            warnings.simplefilter("ignore", UserWarning)
            org_dir = build_submission_folder(
                archives,
                division=division,
                availability=availability,
                work_dir=work_dir,
                submission_id=submission_id,
            )
    return org_dir / submission_id


def _without_events(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if info.name.endswith("/events.jsonl") else info


def pack(submission_dir: Path, dest: Path) -> Path:
    """``<org>/<submission_id>/…`` as a .tar.gz, as ``submissions create`` uploads it."""
    org_dir = submission_dir.parent
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(org_dir, arcname=org_dir.name)
    return dest
