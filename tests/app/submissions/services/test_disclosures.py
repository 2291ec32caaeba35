"""The system description compared across a submission's points, and read once per
archive."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.db.models import StoredFile, Submission
from app.demo.bundles import BundleFactory, CurveSpec
from app.settings import Settings
from app.submissions.services.disclosures import (
    compare_system_descriptions,
    system_disclosures,
)


def test_differences_list_each_value_once_with_its_points_in_concurrency_order(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path / "data", storage_cache_dir=tmp_path / "cache")
    curve = CurveSpec(concurrencies=(1, 16, 64, 128, 256, 1024, 2048))
    # This host's extraction of an archive (the cache bundle_folder reads first).
    sha256 = "ab" * 32
    extraction = settings.bundles_dir / sha256
    root = BundleFactory(curves=(curve,)).build(extraction)
    copies = sorted(root.glob("results/*/*/r*/system_desc.json"))
    for path in copies:
        if path.parent.name in ("r128", "r1024"):
            desc = json.loads(path.read_text())
            desc["host_memory_capacity"] = "2 TB"
            path.write_text(json.dumps(desc))
    submission = Submission(
        archive=StoredFile(sha256=sha256, size=1, kind="archive"),
        bundle_root=root.relative_to(extraction).as_posix(),
    )

    found = compare_system_descriptions(settings, submission)

    dirs = [label.rsplit("/", 1)[1] for label in found["points"]]
    assert dirs == sorted(dirs, key=lambda d: int(d[1:]))  # r16 before r128, not as text
    fields = {d["field"]: d for d in found["differing"]}
    assert "system_name" not in fields  # the same everywhere: not listed
    field = fields["host_memory_capacity"]
    groups = {g["value"]: [p.rsplit("/", 1)[1] for p in g["points"]] for g in field["groups"]}
    assert groups['"2 TB"'] == ["r128", "r1024"]
    assert len(groups) == 2 and sum(len(v) for v in groups.values()) == len(copies)


def test_a_bundle_is_read_once_and_one_out_of_reach_is_read_when_it_is_back(
    tmp_path: Path,
) -> None:
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
