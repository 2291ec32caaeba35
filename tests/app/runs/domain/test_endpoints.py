"""The reproduction allow-list (SSRF guard): names, wildcard suffixes and networks."""

from __future__ import annotations

import pytest

from app.runs.domain.endpoints import host_allowed

ALLOWED = ["api.example.com", "*.endpoints.example.org", "10.1.0.0/16", "::1/128"]


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("api.example.com", True),
        ("API.Example.com.", True),
        ("evil-api.example.com", False),
        ("a.endpoints.example.org", True),
        ("endpoints.example.org", False),  # the wildcard needs a label before it
        ("xendpoints.example.org", False),
        ("10.1.200.3", True),
        ("10.2.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("127.0.0.1", False),
        ("::1", True),
        ("[::1]", True),
        ("localhost", False),
        ("", False),
    ],
)
def test_host_allowed(host: str, allowed: bool) -> None:
    assert host_allowed(host, ALLOWED) is allowed


def test_a_name_entry_never_allows_an_address() -> None:
    assert not host_allowed("93.184.216.34", ["example.com"])
    assert host_allowed("127.0.0.1", ["localhost", "127.0.0.0/8"])
