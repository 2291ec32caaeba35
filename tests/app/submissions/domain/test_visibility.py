"""Rules §11.9 as a table: who sees what of a submission, by its public status."""

from __future__ import annotations

import pytest

from app.submissions.domain.visibility import Access, Viewer, access


@pytest.mark.parametrize(
    ("status", "public"),
    [
        (None, Access.NONE),  # in review, confidential, embargoed, or withdrawn early
        ("provisional", Access.RESULTS),  # peer review pending: no code or artifacts
        ("verified", Access.FULL),
        ("unverified", Access.FULL),
        ("withdrawn", Access.RESULTS),  # the archive entry, with its tag
        ("invalidated", Access.RESULTS),
    ],
)
def test_public_and_members(status: str | None, public: Access) -> None:
    assert access(Viewer.PUBLIC, status) == public
    assert access(Viewer.MEMBER, status) == Access.REVIEW
    assert public < Access.REVIEW  # the review record is never the public's
