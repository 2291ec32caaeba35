"""An S3-compatible object store (AWS S3, SeaweedFS, Garage, Ceph, …) through boto3.

The endpoint and credentials come from the standard variables (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``). botocore since 1.36
adds CRC checksums to every request by default, which stores other than AWS's may not
take: checksums are sent and checked only where the API requires them.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from app.storage.base import (
    CHUNK,
    ObjectMissing,
    StorageError,
    StoreUnavailable,
    check_content,
    checked_key,
)
from app.storage.cache import CacheEntry, evict_least_recent
from app.storage.local import LocalStore

# Errors that say "not now" rather than "not so": the store is down, slow or overloaded.
_UNAVAILABLE_CODES = {"500", "502", "503", "504", "SlowDown", "ServiceUnavailable",
                      "InternalError", "RequestTimeout"}  # fmt: skip
_MISSING_CODES = {"404", "NoSuchKey", "NotFound"}
_TOKEN = re.compile(r"[0-9a-f]{32}")


def _client(attempts: int, timeout_s: float) -> Any:
    import boto3
    from botocore.config import Config

    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    config = Config(
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        retries={"max_attempts": attempts, "mode": "standard"},
        connect_timeout=timeout_s,
        read_timeout=max(timeout_s, 60.0),
        # A self-hosted store is addressed by path (bucket names are no host names there).
        s3={"addressing_style": "path" if endpoint else "auto"},
        # Presigned URLs in Signature Version 4: their expiry is part of what is signed
        # (X-Amz-Expires), which every store enforces; some stores take a version-2 URL
        # after its Expires has passed.
        signature_version="s3v4",
    )
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    return boto3.client("s3", endpoint_url=endpoint, region_name=region, config=config)


class S3Store:
    def __init__(
        self,
        bucket: str,
        prefix: str,
        cache_dir: Path,
        cache_bytes: int,
        attempts: int = 3,
        timeout_s: float = 5.0,
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.cache = LocalStore(cache_dir)
        self.cache_bytes = cache_bytes
        self._s3 = _client(attempts, timeout_s)

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def _name(self, key: str) -> str:
        return self.prefix + checked_key(key)

    def _call(self, what: str, key: str, call: Any, **kwargs: Any) -> Any:
        """One S3 call, its errors turned into the store's."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return call(Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            if code in _MISSING_CODES:
                raise ObjectMissing(f"{key} is not in {self.location}") from None
            message = f"{what} {key} in {self.location}: {code} {error.get('Message', '')}"
            if code in _UNAVAILABLE_CODES:
                raise StoreUnavailable(message.strip()) from exc
            raise StorageError(message.strip()) from exc
        except BotoCoreError as exc:  # no connection, a timeout, a broken answer
            raise StoreUnavailable(f"{self.location} cannot be reached: {exc}") from exc

    def ensure_bucket(self) -> bool:
        """Make the bucket if it is not there; True when it was made."""
        try:
            self._call("looking up", "the bucket", self._s3.head_bucket)
            return False
        except ObjectMissing:
            pass
        self._call("making", "the bucket", self._s3.create_bucket)
        return True

    def put_file(self, key: str, path: Path) -> None:
        from boto3.s3.transfer import TransferConfig

        if not self.exists(key):  # content-addressed: the same key is the same bytes
            # Large files go in parts (multipart upload), each retried on its own.
            transfer = TransferConfig(
                multipart_threshold=16 * CHUNK, multipart_chunksize=16 * CHUNK
            )

            def upload(Bucket: str) -> None:  # noqa: N803 - boto3's own keyword
                from boto3.exceptions import S3UploadFailedError

                try:
                    self._s3.upload_file(str(path), Bucket, self._name(key), Config=transfer)
                except S3UploadFailedError as exc:  # every attempt failed
                    raise StoreUnavailable(f"storing {key} in {self.location}: {exc}") from exc

            self._call("storing", key, upload)
        path.unlink(missing_ok=True)

    def open(self, key: str) -> BinaryIO:
        answer = self._call("reading", key, self._s3.get_object, Key=self._name(key))
        return answer["Body"]  # type: ignore[no-any-return]

    def exists(self, key: str) -> bool:
        try:
            self._call("looking up", key, self._s3.head_object, Key=self._name(key))
        except ObjectMissing:
            return False
        return True

    def size(self, key: str) -> int:
        head = self._call("looking up", key, self._s3.head_object, Key=self._name(key))
        return int(head["ContentLength"])

    def delete(self, key: str) -> None:
        self._call("removing", key, self._s3.delete_object, Key=self._name(key))

    def keys(self) -> Iterator[str]:
        pages = self._s3.get_paginator("list_objects_v2")

        def listing(Bucket: str) -> list[dict[str, Any]]:  # noqa: N803 - boto3's own keyword
            found: list[dict[str, Any]] = []
            for page in pages.paginate(Bucket=Bucket, Prefix=self.prefix):
                found.extend(page.get("Contents", []))
            return found

        for item in self._call("listing", self.prefix or "/", listing):
            try:
                yield checked_key(str(item["Key"])[len(self.prefix) :])
            except ValueError:
                continue

    def local_path(self, key: str) -> Path:
        """A cached copy, fetched once and checked against its hash before it is used; an
        object removed from the store is not served from the cache either."""
        if not self.exists(key):
            self.cache.delete(key)
            raise ObjectMissing(f"{key} is not in {self.location}")
        if self.cache.exists(key):
            path = self.cache.local_path(key)
            os.utime(path)  # recently used: evicted last
            return path
        partial = self.cache.root / f".fetch-{uuid.uuid4().hex}"
        self.cache.root.mkdir(parents=True, exist_ok=True)
        try:
            with self.open(key) as source, partial.open("wb") as target:
                while chunk := source.read(CHUNK):
                    target.write(chunk)
            with partial.open("rb") as fetched:
                check_content(key, fetched, self.location)
            self.cache.put_file(key, partial)
        finally:
            partial.unlink(missing_ok=True)
        self._evict(keep=key)
        return self.cache.local_path(key)

    # Staging: objects a client puts through a presigned URL, before the portal has read
    # them; each under a token of its own, never at a content address.

    def _staged(self, token: str) -> str:
        if not _TOKEN.fullmatch(token):
            raise ValueError(f"{token!r} is not a staging token")
        return f"{self.prefix}staging/{token}"

    def presigned_upload(self, token: str, expires_s: int) -> str:
        """A URL that takes one PUT of ``application/octet-stream`` at the staging object
        *token*, until it expires: the bytes never pass through the portal's web."""
        params = {"Bucket": self.bucket, "Key": self._staged(token),
                  "ContentType": "application/octet-stream"}  # fmt: skip
        return str(self._s3.generate_presigned_url("put_object", Params=params,
                                                   ExpiresIn=expires_s))  # fmt: skip

    def presigned_download(self, key: str, expires_s: int, filename: str) -> str:
        """A URL that GETs the object *key* as *filename* until it expires."""
        params = {"Bucket": self.bucket, "Key": self._name(key),
                  "ResponseContentDisposition": f'attachment; filename="{filename}"'}  # fmt: skip
        return str(self._s3.generate_presigned_url("get_object", Params=params,
                                                   ExpiresIn=expires_s))  # fmt: skip

    def staged_size(self, token: str) -> int | None:
        """The staged object's size, or None while nothing is there."""
        try:
            head = self._call("looking up", token, self._s3.head_object, Key=self._staged(token))
        except ObjectMissing:
            return None
        return int(head["ContentLength"])

    def fetch_staged(self, token: str, target: Path, limit: int) -> None:
        """Copy the staged object to *target*, refusing it past *limit* bytes."""
        answer = self._call("reading", token, self._s3.get_object, Key=self._staged(token))
        written = 0
        with answer["Body"] as source, target.open("wb") as out:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > limit:
                    raise StorageError(f"the staged object is larger than {limit} bytes")
                out.write(chunk)

    def delete_staged(self, token: str) -> None:
        self._call("removing", token, self._s3.delete_object, Key=self._staged(token))

    def _evict(self, keep: str) -> None:
        """Least recently used copies go until the cache fits its bound again."""
        entries = []
        for key in self.cache.keys():
            if key == keep:
                continue
            try:
                stat = (self.cache.root / key).stat()
            except FileNotFoundError:  # another process evicted it meanwhile
                continue
            entries.append(CacheEntry(stat.st_mtime, stat.st_size, partial(self.cache.delete, key)))
        evict_least_recent(entries, self.cache.size(keep), self.cache_bytes)
