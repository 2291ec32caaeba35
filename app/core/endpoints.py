"""Which endpoints the portal may send reproduction traffic to, and what it sends them.

A reproduction makes the worker send load to a URL a user typed: without a limit, that
is a way to reach the portal's own network (SSRF). The operator lists what is allowed,
each entry a host *and* a port: ``api.example.com:443``, ``*.example.com:8443`` (any
subdomain), ``10.1.0.0/16:8000`` (a network), ``[::1]:8001``; ``:*`` allows every port
of that host. An IP address is allowed only inside a listed network, a name only by
name. Nothing is allowed by default.

Every value that becomes part of the request the harness sends (the URL, the model
name, the API key) is checked here for characters that would end a header line or the
request line (CR, LF, other control characters): a value that smuggles a header or a
second request is refused where it enters.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DEFAULT_PORTS = {"http": 80, "https": 443}


class EndpointRefused(ValueError):
    """What is wrong with an endpoint or a header value; ``field`` names the input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class AllowedEndpoint:
    host: str  # a name, "*.suffix", or a network in CIDR form
    port: int | None  # None: any port (":*")

    @classmethod
    def parse(cls, entry: str) -> AllowedEndpoint:
        text = entry.strip().lower()
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port:
            raise ValueError(
                f"allowed endpoint {entry!r} needs a host and a port (host:port, host:*)"
            )
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if port == "*":
            return cls(host, None)
        if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"allowed endpoint {entry!r}: {port!r} is not a port")
        return cls(host, int(port))

    def admits(self, host: str, port: int) -> bool:
        if self.port is not None and port != self.port:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = None
        if address is not None:
            try:
                return address in ipaddress.ip_network(self.host, strict=False)
            except ValueError:
                return False  # a name entry never allows an address
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and len(host) > len(self.host) - 1
        return host == self.host


def parse_allowed(entries: Sequence[str]) -> list[AllowedEndpoint]:
    """The operator's list, each entry checked (a bad entry is a configuration error)."""
    return [AllowedEndpoint.parse(e) for e in entries if e.strip()]


@dataclass(frozen=True)
class Endpoint:
    url: str
    host: str
    port: int


def parse_endpoint(url: str) -> Endpoint:
    """An http(s) URL with a host, and nothing that could split the request it becomes."""
    text = url.strip()
    if _CONTROL.search(text) or " " in text:
        raise EndpointRefused("endpoint_url", "the endpoint URL has spaces or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise EndpointRefused("endpoint_url", f"{text!r} is not a URL: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise EndpointRefused(
            "endpoint_url", f"the endpoint must be an http(s) URL with a host, got {text!r}"
        )
    if parts.username is not None or parts.password is not None:
        raise EndpointRefused(
            "endpoint_url", "the endpoint URL carries no credentials: send the API key apart"
        )
    host = parts.hostname.rstrip(".")
    return Endpoint(text, host, port or DEFAULT_PORTS[parts.scheme])


def endpoint_allowed(endpoint: Endpoint, allowed: Sequence[str]) -> bool:
    return any(entry.admits(endpoint.host, endpoint.port) for entry in parse_allowed(allowed))


def header_safe(field: str, value: str) -> str:
    """*value*, if it can be sent as (part of) a header value; refused otherwise."""
    if _CONTROL.search(value):
        raise EndpointRefused(
            field, f"{field} has a control character (CR, LF, …): it cannot be sent as a header"
        )
    if not value.isascii():
        raise EndpointRefused(field, f"{field} has characters outside ASCII")
    return value


# --- where a webhook may be delivered -------------------------------------------------------

Resolve = Callable[[str, int], list[str]]


def resolve_addresses(host: str, port: int) -> list[str]:
    """Every address *host* resolves to now (an address resolves to itself)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise EndpointRefused("url", f"{host} does not resolve: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address.is_global and not address.is_multicast


def pinned_address(
    endpoint: Endpoint, allowed: Sequence[str], resolve: Resolve = resolve_addresses
) -> str:
    """The one address a delivery to *endpoint* connects to, resolved once here (so a
    name cannot resolve to another address between the check and the connection: DNS
    rebinding). A public address is allowed; a loopback, private, link-local or otherwise
    reserved one only where the operator's list admits the host or that address. Every
    address the name has must pass, or none is used."""
    entries = parse_allowed(allowed)
    addresses = resolve(endpoint.host, endpoint.port)
    if not addresses:
        raise EndpointRefused("url", f"{endpoint.host} has no address")
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        listed = any(e.admits(endpoint.host, endpoint.port) or e.admits(str(address), endpoint.port)
                     for e in entries)  # fmt: skip
        if not _public(address) and not listed:
            raise EndpointRefused(
                "url",
                f"{endpoint.host} resolves to {address}, a loopback, private or reserved "
                "address: the portal delivers there only where its operator allows it",
            )
    return addresses[0]
