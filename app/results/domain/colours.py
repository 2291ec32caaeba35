"""One colour per system, the same on every chart that shows it.

A system's colour is picked from its organisation and name (a stable hash into a
colour-blind-safe palette, Okabe and Ito's with yellow left out for contrast on white and
Tol's indigo for an eighth), so
the results, compare, the agentic chart and every export agree; on one chart, a system
whose colour another already holds takes the next free one, so no two share a colour
while the palette lasts. The charts read the colour from the data the API serves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#1A1A1A",  # near black
    "#332288",  # indigo (Tol's), not a brown that reads as the vermillion's neighbour
)


def preferred(key: str) -> int:
    """The palette index *key* (organisation and system) is given wherever it is drawn."""
    digest = hashlib.blake2s(key.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % len(PALETTE)


def system_key(organization: str, system: str) -> str:
    return f"{organization.strip().lower()}\x00{system.strip().lower()}"


def colours(keys: Sequence[str]) -> list[str]:
    """A colour per key (the same key, the same colour): each its preferred one unless
    another key on this chart holds it, then the next free one; keys are settled in
    sorted order, so the same set of systems is coloured the same way every time."""
    taken: dict[int, str] = {}
    given: dict[str, int] = {}
    for key in sorted(set(keys)):
        index = preferred(key)
        if len(taken) < len(PALETTE):
            while index in taken:
                index = (index + 1) % len(PALETTE)
        taken.setdefault(index, key)
        given[key] = index
    return [PALETTE[given[key]] for key in keys]
