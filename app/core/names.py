"""Names the portal makes from what people type."""

from __future__ import annotations

import re


def slugify(name: str) -> str:
    """The CLI's org slug: non-word characters to '_', runs collapsed, trimmed."""
    slug = re.sub(r"[^\w-]", "_", name.strip())
    slug = re.sub(r"_+", "_", slug).strip("_")
    return slug[:64] or "unknown"
