"""Names made from what people type."""

from __future__ import annotations

from app.core.names import slugify


def test_slugify_matches_the_cli() -> None:
    assert slugify("Acme Corp") == "Acme_Corp"
    assert slugify("  Foo & Bar, Inc.  ") == "Foo_Bar_Inc"
    assert slugify("  ") == "unknown"
