"""Digests of data, whatever its formatting."""

from __future__ import annotations

import hashlib
import json
from typing import IO, Any


def canonical_digest(value: Any) -> str:
    """The sha256 of *value* as data: keys sorted, no spaces, so the same data read from
    a YAML file, a JSON file or a request body digests alike."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stream_digest(stream: IO[bytes]) -> str:
    """The sha256 of what *stream* holds, read a megabyte at a time."""
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()
