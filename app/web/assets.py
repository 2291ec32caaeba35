"""Static files addressed by their content: cached for a year, compressed once.

Pages link to `/static/app.css?v=<digest>`. A request carrying the current digest may be
kept by the browser forever (the link changes when the file does); any other request is
answered with `no-cache` and an ETag, so an old page after a deploy still gets a file,
just not a stale one. Compressible files are gzipped once, when first served compressed,
and kept in memory: the Plotly bundle alone is 4.8 MB raw and about a third of that
compressed (a page that only links to it pays for its digest, not for its compression).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import mimetypes
import threading
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


def swagger_ui_dir() -> Path:
    """Swagger UI, from a pinned package rather than a CDN the CSP would block."""
    return Path(str(importlib.resources.files("fastapi_offline") / "static"))


class StaticAssets:
    def __init__(self, roots: Mapping[str, Path]) -> None:
        """roots: a URL prefix ("" or "vendor/api-docs/") to the folder it serves."""
        self._roots = dict(roots)
        self._cache: dict[str, Asset] = {}
        self._gzipped: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def _locate(self, path: str) -> Path | None:
        for prefix, root in sorted(self._roots.items(), key=lambda kv: -len(kv[0])):
            if not path.startswith(prefix):
                continue
            base = root.resolve()
            candidate = (base / path[len(prefix) :]).resolve()
            if (
                candidate.is_relative_to(base)
                and candidate.is_file()
                and candidate.suffix not in _NOT_SERVED
            ):
                return candidate
        return None

    def get(self, path: str) -> Asset | None:
        if (cached := self._cache.get(path)) is not None:
            return cached
        file = self._locate(path)
        if file is None:
            return None
        body = file.read_bytes()
        media_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        compressible = media_type.startswith(COMPRESSIBLE) and len(body) > 1024
        asset = Asset(
            body=body,
            compressible=compressible,
            media_type=media_type,
            digest=hashlib.sha256(body).hexdigest()[:16],
        )
        with self._lock:
            self._cache[path] = asset
        return asset

    def _compressed(self, path: str, asset: Asset) -> bytes:
        if (done := self._gzipped.get(path)) is None:
            done = gzip.compress(asset.body, compresslevel=9, mtime=0)
            with self._lock:
                self._gzipped[path] = done
        return done

    def url(self, path: str) -> str:
        """The link a page uses; a missing file is an error when the page renders."""
        asset = self.get(path)
        if asset is None:
            raise LookupError(f"no static file {path!r}")
        return f"/static/{path}?v={asset.digest}"

    def response(self, request: Request, path: str) -> Response:
        asset = self.get(path)
        if asset is None:
            raise HTTPException(404, detail=f"no static file {path!r}")
        etag = f'"{asset.digest}"'
        cache = IMMUTABLE if request.query_params.get("v") == asset.digest else "no-cache"
        headers = {"ETag": etag, "Cache-Control": cache, "Vary": "Accept-Encoding"}
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        if asset.compressible and "gzip" in request.headers.get("accept-encoding", ""):
            headers["Content-Encoding"] = "gzip"
            gzipped = self._compressed(path, asset)
            return Response(gzipped, media_type=asset.media_type, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)
