"""The reproduction allow-list (SSRF guard): hosts and ports; and what may become a header."""

from __future__ import annotations

import pytest

from app.core.endpoints import (
    EndpointRefused,
    endpoint_allowed,
    header_safe,
    parse_allowed,
    parse_endpoint,
)

ALLOWED = [
    "api.example.com:443",
    "*.endpoints.example.org:8443",
    "10.1.0.0/16:8000",
    "[::1]:8001",
    "gpu.example.net:*",
]


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://api.example.com/v1", True),
        ("https://API.Example.com./v1", True),
        ("http://api.example.com/v1", False),  # port 80 is not listed
        ("https://api.example.com:8443", False),
        ("https://evil-api.example.com", False),
        ("https://a.endpoints.example.org:8443", True),
        ("https://endpoints.example.org:8443", False),  # the wildcard needs a label before it
        ("https://xendpoints.example.org:8443", False),
        ("http://10.1.200.3:8000", True),
        ("http://10.1.200.3:8001", False),
        ("http://10.2.0.1:8000", False),
        ("http://169.254.169.254:80", False),  # cloud metadata
        ("http://127.0.0.1:8001", False),
        ("http://[::1]:8001", True),
        ("http://[::1]:6379", False),  # another service on the same host
        ("http://localhost:8001", False),
        ("http://gpu.example.net:31337", True),
    ],
)
def test_an_endpoint_is_allowed_by_host_and_port(url: str, allowed: bool) -> None:
    assert endpoint_allowed(parse_endpoint(url), ALLOWED) is allowed


def test_nothing_is_allowed_by_default_and_a_name_never_allows_an_address() -> None:
    assert not endpoint_allowed(parse_endpoint("http://127.0.0.1:8000"), [])
    assert not endpoint_allowed(parse_endpoint("http://93.184.216.34:80"), ["example.com:80"])


@pytest.mark.parametrize(
    "entry", ["localhost", "127.0.0.0/8", "api.example.com:", "api.example.com:http", ":80"]
)
def test_an_entry_without_a_port_is_a_configuration_error(entry: str) -> None:
    with pytest.raises(ValueError, match="port"):
        parse_allowed([entry])


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",  # malformed IPv6
        "http://127.0.0.1:99999",
        "ftp://example.com",
        "http:///v1",
        "http://user:pass@127.0.0.1:8000",
        "http://127.0.0.1:8000/v1\r\nX-Injected: yes",
        "http://127.0.0.1:8000/v1 HTTP/1.1",
    ],
)
def test_a_url_that_is_not_a_plain_endpoint_is_refused_naming_the_field(url: str) -> None:
    with pytest.raises(EndpointRefused) as refused:
        parse_endpoint(url)
    assert refused.value.field == "endpoint_url"


@pytest.mark.parametrize(
    "value", ["k\r\nX-Injected: yes", "k\r\nContent-Length: 0\r\n\r\nGET /admin", "k\x00", "ключ"]
)
def test_a_header_value_with_a_line_break_or_control_is_refused(value: str) -> None:
    with pytest.raises(EndpointRefused) as refused:
        header_safe("api_key", value)
    assert refused.value.field == "api_key"
    assert header_safe("api_key", "sk-live_0123456789") == "sk-live_0123456789"


# --- the webhooks' outbound guard --------------------------------------------------------


class _resolver:  # noqa: N801 (called as the resolver it stands for)
    """DNS as a name server would answer it (the one thing these tests cannot run)."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = list(addresses)
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return self.addresses


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.0.0.7", "192.168.1.1", "172.16.0.1", "169.254.169.254", "::1",
     "fe80::1", "0.0.0.0", "100.64.0.1", "::ffff:127.0.0.1", "224.0.0.1"],
)  # fmt: skip
def test_a_webhook_never_reaches_a_private_address_unless_the_operator_allows_it(
    address: str,
) -> None:
    from app.core.endpoints import pinned_address

    endpoint = parse_endpoint("https://hooks.example.com/in")
    with pytest.raises(EndpointRefused, match="loopback, private or reserved"):
        pinned_address(endpoint, [], _resolver(address))
    # The operator's list admits it by name or by network.
    assert pinned_address(endpoint, ["hooks.example.com:443"], _resolver(address)) == address
    network = "::/0:*" if ":" in address else "0.0.0.0/0:*"
    assert pinned_address(endpoint, [network], _resolver(address)) == address


def test_a_public_address_is_pinned_and_a_name_with_any_private_address_is_refused() -> None:
    from app.core.endpoints import pinned_address

    endpoint = parse_endpoint("https://hooks.example.com/in")
    resolve = _resolver("93.184.216.34", "93.184.216.35")
    assert pinned_address(endpoint, [], resolve) == "93.184.216.34"
    assert resolve.asked == ["hooks.example.com"]
    # A name that also answers with a loopback address (a rebinding attempt) is refused.
    with pytest.raises(EndpointRefused):
        pinned_address(endpoint, [], _resolver("93.184.216.34", "127.0.0.1"))
    with pytest.raises(EndpointRefused, match="has no address"):
        pinned_address(endpoint, [], _resolver())
