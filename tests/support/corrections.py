"""Corrected bundles for the corrections' tests (rules §11.7): a submitted bundle's tree
kept on disk, copied and edited, packed as the CLI packs it."""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.demo.bundles import BundleFactory, SystemSpec, pack_tree


@dataclass(frozen=True)
class Bundles:
    """A submitted bundle's tree (``<org>/<submission_id>/``) and where to pack copies."""

    root: Path  # the submission root of the submitted bundle
    work: Path

    def archive(self, name: str, *edits: Callable[[Path], None]) -> Path:
        """A copy of the submitted bundle with *edits* applied to its submission root,
        packed as ``<name>.tar.gz``."""
        copy = self.work / name / self.root.parent.name
        shutil.copytree(self.root.parent, copy)
        for edit in edits:
            edit(copy / self.root.name)
        return pack_tree(copy, self.work / f"{name}.tar.gz", "tar.gz", arcname=copy.name)


def edited_archive(source: Path, dest: Path, *edits: Callable[[Path], None]) -> Path:
    """*source* (a ``<org>/<submission_id>/`` tar.gz) unpacked, its submission root
    edited, packed again as *dest*: a corrected bundle without building it anew."""
    work = dest.with_suffix(".d")
    with tarfile.open(source) as tar:
        tar.extractall(work, filter="data")
    [org] = [p for p in work.iterdir() if p.is_dir()]
    [root] = [p for p in org.iterdir() if (p / "results").is_dir()]
    for edit in edits:
        edit(root)
    packed = pack_tree(org, dest, "tar.gz", arcname=org.name)
    shutil.rmtree(work)
    return packed


def bundles(tmp_path: Path, name: str = "corr") -> Bundles:
    system = SystemSpec(name=f"Acme {name}")
    root = BundleFactory(system=system, submission_id=f"sub-{name}").build(tmp_path / "tree")
    return Bundles(root, tmp_path / "copies")


def readme(root: Path) -> Path:
    return sorted(root.glob("src/*/README.md"))[0]


def add_launch_notes(root: Path) -> None:
    (readme(root).parent / "NOTES.md").write_text("Launched with the flags in launch.sh.\n")


def fix_readme(root: Path) -> None:
    readme(root).write_text("# How we ran it\n\nThe launch flags, spelt right this time.\n")


def add_docs(root: Path) -> None:
    (root / "docs" / "calibration.md").write_text("Power calibrated on 2026-11-20.\n")


def change_snapshot(root: Path) -> None:
    """The client's own metrics of a point: measured, so a result."""
    snapshot = point_dirs(root)[0] / "metrics" / "final_snapshot.json"
    snapshot.write_text(snapshot.read_text() + " ")


def point_dirs(root: Path) -> list[Path]:
    return sorted(root.glob("results/*/*/r*"), key=lambda p: int(p.name[1:]))


def change_result(root: Path) -> None:
    """A point's throughput raised: a result, which no correction may change."""
    summary = point_dirs(root)[-1] / "result_summary.json"
    data = json.loads(summary.read_text())
    summary.write_text(json.dumps({**data, "note": "rerun"}))


def drop_last_point(root: Path) -> None:
    shutil.rmtree(point_dirs(root)[-1])


def label_of(point: Path) -> str:
    return "/".join(point.parts[-3:])


def rename_system(root: Path) -> None:
    """Metadata corrected in every point's system description."""
    for path in root.glob("results/*/*/r*/system_desc.json"):
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "system_name": "Acme corr (corrected)"}))


def other_division(root: Path) -> None:
    """Standardized declared RDI: the chair's reclassification, never a correction."""
    for path in root.glob("results/*/*/r*/system_desc.json"):
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "division": "RDI"}))


def no_docs(root: Path) -> None:
    """The docs/ folder the official checks require (a non-result file, so the
    comparison lets it through and the checks refuse it)."""
    shutil.rmtree(root / "docs")
