"""What a downloaded archive is called (app/submissions/services/archives.py)."""

from __future__ import annotations

from app.submissions.services.archives import download_name


def test_the_bundles_own_id_names_it_and_nothing_else_of_it_reaches_the_header() -> None:
    assert download_name("acme-2026-12", "0123456789abcdef") == "acme-2026-12-01234567"
    # A bundle's id is its own to say: quotes, slashes and line breaks never pass.
    hostile = download_name('x"; filename="evil.sh\r\nSet-Cookie: a=b/../..', "0123456789abcdef")
    assert hostile == "x-filename-evil.sh-Set-Cookie-a-b-01234567"
    assert download_name(None, "0123456789abcdef") == "0123456789abcdef"
    assert download_name("../..", "0123456789abcdef") == "0123456789abcdef"
