"""Both stores behind the one interface: the local directory and an S3-compatible store
(SeaweedFS's weed, on loopback), with the same expectations."""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.storage import (
    ArtifactStore,
    ObjectCorrupt,
    ObjectMissing,
    StoreUnavailable,
    archive_key,
    events_key,
    open_store,
    parse_storage_url,
    verified_stream,
)
from app.storage.s3 import S3Store
from tests.support.objectstore import corrupt, shared_object_store, upload_file
from tests.support.services import free_port


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    store = shared_object_store()
    for name, value in store.env.items():
        monkeypatch.setenv(name, value)
    yield store.env


@pytest.fixture(params=["file", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtifactStore:
    cache = tmp_path / "cache"
    if request.param == "file":
        return open_store(f"file://{tmp_path / 'blobs'}", cache_dir=cache, cache_bytes=10**9)
    request.getfixturevalue("s3_env")
    return open_store(shared_object_store().new_url(), cache_dir=cache, cache_bytes=10**9)


def test_an_object_is_stored_once_read_back_listed_and_removed(
    store: ArtifactStore, tmp_path: Path
) -> None:
    data = os.urandom(3 * 1024 * 1024)
    path, sha = upload_file(tmp_path / "in", data)
    key = archive_key(sha)
    assert not store.exists(key)
    store.put_file(key, path)
    assert not path.exists()  # consumed
    assert store.exists(key) and store.size(key) == len(data)
    with store.open(key) as stream:
        assert stream.read() == data
    assert b"".join(verified_stream(store, key)) == data
    assert store.local_path(key).read_bytes() == data
    again, _ = upload_file(tmp_path / "again", data)
    store.put_file(key, again)  # the same content: kept, and the file consumed
    assert not again.exists() and list(store.keys()) == [key]
    store.delete(key)
    store.delete(key)  # gone already: not an error
    assert not store.exists(key)
    with pytest.raises(ObjectMissing, match=key):
        store.open(key)
    with pytest.raises(ObjectMissing):
        store.local_path(key)


def test_a_corrupted_or_missing_object_is_never_served(
    store: ArtifactStore, tmp_path: Path
) -> None:
    path, sha = upload_file(tmp_path, b"the archive as uploaded")
    key = archive_key(sha)
    store.put_file(key, path)
    corrupt(store, key, b"the archive, changed")
    with pytest.raises(ObjectCorrupt, match="corrupt"):
        verified_stream(store, key)
    store.delete(key)
    with pytest.raises(ObjectMissing):
        verified_stream(store, key)


def test_an_event_log_is_checked_against_its_uncompressed_content(
    store: ArtifactStore, tmp_path: Path
) -> None:
    events = b'{"event": "request_start"}\n' * 1000
    sha = hashlib.sha256(events).hexdigest()
    packed = tmp_path / "events.gz"
    packed.write_bytes(gzip.compress(events, mtime=0))
    key = events_key(sha)
    store.put_file(key, packed)
    with gzip.open(store.local_path(key)) as stream:
        assert stream.read() == events
    corrupt(store, key, gzip.compress(events[:-10], mtime=0))
    with pytest.raises(ObjectCorrupt):
        verified_stream(store, key)


@pytest.mark.parametrize(
    "key", ["../etc/passwd", "ab/" + "0" * 64, "00/" + "0" * 63, "00/" + "0" * 64 + ".zip", ""]
)
def test_only_content_addresses_are_keys(store: ArtifactStore, key: str) -> None:
    with pytest.raises(ValueError, match="content address"):
        store.exists(key)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("s3://Bad_Bucket/x", "bucket name"),
        ("s3://bucket/../x", "prefix"),
        ("s3://bucket/x?y=1", "prefix"),
        ("file://relative/path", "absolute"),
        ("ftp://host/x", "file:///path or s3://bucket/prefix"),
    ],
)
def test_a_bad_storage_url_is_refused_with_what_is_wrong(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_storage_url(url)


def test_a_store_that_cannot_be_reached_is_unavailable_not_missing(
    s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")  # nobody there
    down = S3Store("portal-down", "", tmp_path / "cache", 10**9, attempts=1, timeout_s=1)
    path, sha = upload_file(tmp_path, b"an archive")
    with pytest.raises(StoreUnavailable, match="cannot be reached"):
        down.put_file(archive_key(sha), path)
    with pytest.raises(StoreUnavailable):
        down.exists(archive_key(sha))


def test_the_s3_cache_keeps_to_its_bound_and_refetches_what_it_dropped(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.storage.cache as cache

    monkeypatch.setattr(cache, "GRACE_S", 0)  # no copy is in use here
    store = open_store(shared_object_store().new_url(), cache_dir=tmp_path / "cache",
                       cache_bytes=2_500_000)  # fmt: skip
    assert isinstance(store, S3Store)
    keys = []
    for n in range(3):
        path, sha = upload_file(tmp_path / "in", os.urandom(1_000_000) + bytes([n]))
        store.put_file(archive_key(sha), path)
        keys.append(archive_key(sha))
    for key in keys:
        store.local_path(key)
    cached = list(store.cache.keys())
    assert keys[2] in cached and keys[0] not in cached and len(cached) == 2
    assert hashlib.sha256(store.local_path(keys[0]).read_bytes()).hexdigest() in keys[0]
