"""Copying a portal's artifacts to another store (``storage migrate``) and checking a
store (``storage check``): every hash checked, damage reported, safe to run again."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from app.storage import ArtifactStore, archive_key, counts_key, open_store
from app.storage.transfer import copy_objects
from tests.support import PROJECT_ROOT
from tests.support.objectstore import corrupt, shared_object_store, upload_file


def _local(tmp_path: Path, name: str) -> ArtifactStore:
    return open_store(f"file://{tmp_path / name}", cache_dir=tmp_path / "cache", cache_bytes=10**9)


def _put(
    store: ArtifactStore, scratch: Path, data: bytes, key_of: Callable[[str], str] = archive_key
) -> str:
    path, sha256 = upload_file(scratch, data)
    key = key_of(sha256)
    store.put_file(key, path)
    return key


def test_a_copy_checks_every_object_reports_damage_and_can_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weed = shared_object_store()
    for name, value in weed.env.items():
        monkeypatch.setenv(name, value)
    source = _local(tmp_path, "blobs")
    target = open_store(weed.new_url(), cache_dir=tmp_path / "s3-cache", cache_bytes=10**9)
    scratch = tmp_path / "scratch"
    keys = [
        _put(source, scratch, b"archive one"),
        _put(source, scratch, b"archive two"),
        _put(source, scratch, b"a part's counts", counts_key),
    ]

    first = copy_objects(source, target, scratch)
    assert sorted(first.copied) == sorted(keys) and first.ok
    for key in keys:
        with source.open(key) as mine, target.open(key) as theirs:
            assert mine.read() == theirs.read()

    # Stopped and run again, after a hand damaged one copy and a new upload came in.
    corrupt(target, keys[0], b"not what the key names")
    keys.append(_put(source, scratch, b"archive three"))
    seen: list[tuple[str, str]] = []
    again = copy_objects(source, target, scratch, lambda key, what: seen.append((key, what)))
    assert sorted(again.copied) == sorted([keys[0], keys[3]])  # the damaged one replaced
    assert sorted(again.present) == sorted(keys[1:3])
    assert sorted(seen) == sorted([(k, "copied") for k in (keys[0], keys[3])]
                                  + [(k, "present") for k in keys[1:3]])  # fmt: skip

    # Damage in the source is reported and never copied.
    bad = _put(source, scratch, b"archive four")
    corrupt(source, bad, b"rotten")
    last = copy_objects(source, target, scratch)
    assert not last.ok and [key for key, _ in last.damaged] == [bad]
    assert "corrupt" in last.damaged[0][1] and not target.exists(bad)
    assert list(scratch.iterdir()) == []  # no copy left behind


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "storage", *args],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_cli_makes_the_bucket_checks_it_and_migrates_a_data_directory(
    tmp_path: Path,
) -> None:
    weed = shared_object_store()
    data = tmp_path / "data"
    _put(_local(data, "blobs"), tmp_path / "scratch", b"an uploaded archive")
    bucket = f"migrate-{uuid.uuid4().hex[:8]}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ENDPOINTS_PORTAL_")},
        **weed.env,
        "ENDPOINTS_PORTAL_DATA_DIR": str(data),
        "ENDPOINTS_PORTAL_STORAGE_CACHE_DIR": str(tmp_path / "cache"),
    }

    on_s3 = {**env, "ENDPOINTS_PORTAL_STORAGE_URL": f"s3://{bucket}/portal"}
    made = _cli("check", "--create", env=on_s3)
    assert made.returncode == 0, made.stderr
    assert f"made the bucket {bucket}" in made.stdout
    assert "writes, reads back and removes an object" in made.stdout
    checked = _cli("check", env=on_s3)
    assert checked.returncode == 0 and "made the bucket" not in checked.stdout
    # A store that does not take the portal's credentials: said, with status 2.
    refused = _cli("check", env={**on_s3, "AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    assert refused.returncode == 2 and refused.stderr.startswith("Error: "), refused.stdout

    moved = _cli("migrate", "--to", f"s3://{bucket}/portal", env=env)
    assert moved.returncode == 0, moved.stderr
    assert "1 copied, 0 there already, 0 damaged" in moved.stdout
    assert f"ENDPOINTS_PORTAL_STORAGE_URL=s3://{bucket}/portal" in moved.stdout
    again = _cli("migrate", "--to", f"s3://{bucket}/portal", env=env)
    assert again.returncode == 0 and "0 copied, 1 there already" in again.stdout
    same = _cli("migrate", "--to", f"s3://{bucket}/portal", env=on_s3)
    assert same.returncode == 2 and "is the store the portal uses already" in same.stderr
