"""What a bundle discloses, read where its archive is read and kept with the submission:
the system description compared across points, and the disclosures buyers compare; the
web process shows what is kept and parses no bundle file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.db.models import StoredFile, Submission
from app.demo.bundles import BundleFactory, CurveSpec
from app.settings import Settings
from app.submissions.domain.disclosures import read_disclosures
from app.submissions.services.disclosures import (
    compare_system_descriptions,
    system_disclosures,
)
from app.submissions.services.reading import read_archive


def test_differences_list_each_value_once_with_its_points_in_concurrency_order(
    tmp_path: Path,
) -> None:
    curve = CurveSpec(concurrencies=(1, 16, 64, 128, 256, 1024, 2048))
    root = BundleFactory(curves=(curve,)).build(tmp_path / "bundle")
    copies = sorted(root.glob("results/*/*/r*/system_desc.json"))
    for path in copies:
        if path.parent.name in ("r128", "r1024"):
            desc = json.loads(path.read_text())
            desc["host_memory_capacity"] = "2 TB"
            path.write_text(json.dumps(desc))

    found = read_disclosures(root)["comparison"]

    dirs = [label.rsplit("/", 1)[1] for label in found["points"]]
    assert dirs == sorted(dirs, key=lambda d: int(d[1:]))  # r16 before r128, not as text
    fields = {d["field"]: d for d in found["differing"]}
    assert "system_name" not in fields  # the same everywhere: not listed
    field = fields["host_memory_capacity"]
    groups = {g["value"]: [p.rsplit("/", 1)[1] for p in g["points"]] for g in field["groups"]}
    assert groups['"2 TB"'] == ["r128", "r1024"]
    assert len(groups) == 2 and sum(len(v) for v in groups.values()) == len(copies)


def test_the_reading_child_keeps_what_the_pages_show(tmp_path: Path) -> None:
    """The disclosures come with the archive's reading; the pages read them from the
    submission even when no host has the bundle's files."""
    settings = Settings(data_dir=tmp_path / "data", storage_cache_dir=tmp_path / "cache")
    archive = BundleFactory().archive(tmp_path / "good.tar.gz")
    reading = read_archive(settings, archive, keep_events=False)
    reading.discard()
    submission = Submission(archive=StoredFile(sha256="ef" * 32, size=1, kind="archive"),
                            bundle_root="", disclosed=reading.disclosed)  # fmt: skip
    (system,) = system_disclosures(settings, submission)
    shown = system_disclosures(settings, submission)[system]["fields"]
    assert shown["Serving framework"] == "vLLM 0.11"
    assert compare_system_descriptions(settings, submission)["points"]
    shown.clear()  # a caller's copy: what is kept does not change
    assert system_disclosures(settings, submission)[system]["fields"]


def test_values_read_as_a_person_writes_them(tmp_path: Path) -> None:
    """Issue 48: the configuration summary showed a raw Python dict, and a float its
    eighteenth digit."""
    root = BundleFactory().build(tmp_path / "bundle")
    for path in root.glob("results/*/*/r*/system_desc.json"):
        desc = json.loads(path.read_text())
        desc["config_summary"] = {"disaggregated": None, "prefill_nodes": 2, "eager": False}
        desc["node_types"][0]["host_memory_capacity"] = 0.1 + 0.2
        path.write_text(json.dumps(desc))
    (entry,) = read_disclosures(root)["systems"].values()
    assert entry["fields"]["Configuration summary"] == "prefill nodes: 2, eager: no"
    assert entry["fields"]["Host memory"] == "0.3"


def test_a_submission_kept_before_the_reader_kept_them_is_read_once(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", storage_cache_dir=tmp_path / "cache")
    # An archive this host has not extracted and the store does not hold: out of reach.
    sha256 = "cd" * 32
    submission = Submission(archive=StoredFile(sha256=sha256, size=1, kind="archive"))
    submission.bundle_root = ""
    assert system_disclosures(settings, submission) == {}
    extraction = settings.bundles_dir / sha256
    root = BundleFactory().build(extraction)
    submission.bundle_root = root.relative_to(extraction).as_posix()
    read = system_disclosures(settings, submission)  # back: read now, not the miss above
    (system,) = read
    assert read[system]["fields"]["Serving framework"]
    # Kept per archive: the host's extraction going does not take the disclosures along,
    # and what a caller does with its copy changes nothing kept.
    shutil.rmtree(extraction)
    read[system]["fields"].clear()
    again = system_disclosures(settings, submission)
    assert again[system]["fields"]["Serving framework"] and again != read
