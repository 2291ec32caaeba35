"""Which endpoints the portal may send reproduction traffic to.

A reproduction makes the worker send load to a URL a user typed: without a limit, that
is a way to reach the portal's own network (SSRF). The operator lists what is allowed:
host names (``api.example.com``), wildcard suffixes (``*.example.com``) and networks
(``10.1.0.0/16``, ``::1/128``); an IP address is allowed only inside a listed network.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    host = host.strip().lower().rstrip(".")
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    for entry in (e.strip().lower() for e in allowed):
        if not entry:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue  # a name entry never allows an address
        elif entry.startswith("*."):
            if host.endswith(entry[1:]) and len(host) > len(entry) - 1:
                return True
        elif host == entry:
            return True
    return False
