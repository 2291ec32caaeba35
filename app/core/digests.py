"""Digests of data, whatever its formatting."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_digest(value: Any) -> str:
    """The sha256 of *value* as data: keys sorted, no spaces, so the same data read from
    a YAML file, a JSON file or a request body digests alike."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
