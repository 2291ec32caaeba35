"""Static files addressed by their content: cached for a year, compressed once.

Pages link to `/static/app.css?v=<digest>`. A request carrying the current digest may be
kept by the browser forever (the link changes when the file does); any other request is
answered with `no-cache` and an ETag, so an old page after a deploy still gets a file,
just not a stale one. Compressible files are gzipped once, when first served compressed,
and kept in memory: the Plotly bundle alone is 4.8 MB raw and about a third of that
compressed (a page that only links to it pays for its digest, not for its compression).

A file is served under one name only, its plain relative path: ``./``, ``//``, ``..`` or
a link that leads elsewhere is another spelling, answered 404, so that nobody can make
the cache hold a file once per spelling. The cache itself is bounded (least recently used
first out).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import mimetypes
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fastapi import HTTPException, Request, Response

COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Asset:
    body: bytes
    compressible: bool
    media_type: str
    digest: str


# The folder is a package only so that it travels in the wheel; its Python is not served.
_NOT_SERVED = frozenset({".py", ".pyc"})
# What the cache may hold, raw and compressed together: every file the portal ships
# (about 7 MB), with room to spare.
CACHE_BYTES = 64 * 1024 * 1024


def plain_path(path: str) -> bool:
    """Whether *path* is the one spelling of a file: relative, '/'-separated, with no
    empty, '.' or '..' part."""
    parts = path.split("/")
    return bool(path) and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def swagger_ui_dir() -> Path:
    """Swagger UI, from a pinned package rather than a CDN the CSP would block."""
    return Path(str(importlib.resources.files("fastapi_offline") / "static"))


class StaticAssets:
    def __init__(self, roots: Mapping[str, Path], cache_bytes: int = CACHE_BYTES) -> None:
        """roots: a URL prefix ("" or "vendor/api-docs/") to the folder it serves."""
        self._roots = dict(roots)
        # By the file, never by the spelling of a request: (file, "raw" or "gzip").
        self._cache: OrderedDict[tuple[Path, str], Asset | bytes] = OrderedDict()
        self._cached_bytes = 0
        self._cache_bytes = cache_bytes
        self._lock = threading.Lock()
        self._urls: dict[str, str] = {}  # a served file's link, by its path

    def _locate(self, path: str) -> Path | None:
        """The file *path* names under its one spelling; None for any other."""
        if not plain_path(path):
            return None
        for prefix, root in sorted(self._roots.items(), key=lambda kv: -len(kv[0])):
            if not path.startswith(prefix):
                continue
            base = root.resolve()
            candidate = (base / path[len(prefix) :]).resolve()
            if (
                candidate.is_relative_to(base)
                # a link to another file of the folder is another spelling of that file
                and candidate.relative_to(base).as_posix() == path[len(prefix) :]
                and candidate.is_file()
                and candidate.suffix not in _NOT_SERVED
            ):
                return candidate
        return None

    def _kept(self, key: tuple[Path, str]) -> Asset | bytes | None:
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
            return found

    def _keep(self, key: tuple[Path, str], value: Asset | bytes) -> None:
        size = len(value.body if isinstance(value, Asset) else value)
        with self._lock:
            if key in self._cache:
                return
            self._cache[key] = value
            self._cached_bytes += size
            while self._cached_bytes > self._cache_bytes and len(self._cache) > 1:
                _, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped.body if isinstance(dropped, Asset) else dropped)

    def _asset(self, file: Path) -> Asset:
        kept = self._kept((file, "raw"))
        if isinstance(kept, Asset):
            return kept
        body = file.read_bytes()
        media_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        asset = Asset(
            body=body,
            compressible=media_type.startswith(COMPRESSIBLE) and len(body) > 1024,
            media_type=media_type,
            digest=hashlib.sha256(body).hexdigest()[:16],
        )
        self._keep((file, "raw"), asset)
        return asset

    def get(self, path: str) -> Asset | None:
        file = self._locate(path)
        return None if file is None else self._asset(file)

    def _compressed(self, file: Path, asset: Asset) -> bytes:
        kept = self._kept((file, "gzip"))
        if isinstance(kept, bytes):
            return kept
        done = gzip.compress(asset.body, compresslevel=9, mtime=0)
        self._keep((file, "gzip"), done)
        return done

    @property
    def cached_bytes(self) -> int:
        return self._cached_bytes

    def url(self, path: str) -> str:
        """The link a page uses; a missing file is an error when the page renders."""
        found = self._urls.get(path)  # pages link the same few files on every view
        if found is not None:
            return found
        asset = self.get(path)
        if asset is None:
            raise LookupError(f"no static file {path!r}")
        found = self._urls[path] = f"/static/{path}?v={asset.digest}"
        return found

    def response(self, request: Request, path: str) -> Response:
        file = self._locate(path)
        if file is None:
            raise HTTPException(404, detail=f"no static file {path[:200]!r}")
        asset = self._asset(file)
        etag = f'"{asset.digest}"'
        cache = IMMUTABLE if request.query_params.get("v") == asset.digest else "no-cache"
        headers = {"ETag": etag, "Cache-Control": cache, "Vary": "Accept-Encoding"}
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        if asset.compressible and "gzip" in request.headers.get("accept-encoding", ""):
            headers["Content-Encoding"] = "gzip"
            gzipped = self._compressed(file, asset)
            return Response(gzipped, media_type=asset.media_type, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)
