"""The dataset catalogue: the benchmark datasets a point may declare.

``point.yaml``'s ``dataset`` names one; the names are the official checker's own
(``MIN_QUERY_COUNT``, rules §6.2), to which an operator may add
(``ENDPOINTS_PORTAL_EXTRA_DATASETS``). A declared dataset is only ever a name: the portal
finds its copy of a dataset by looking the name up here, never by joining what a bundle
wrote onto a path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from submission_checker.models.aggregate import MIN_QUERY_COUNT

OFFICIAL_DATASETS = frozenset(MIN_QUERY_COUNT)
# What a catalogue name looks like: no separator, no leading dot, nothing to escape.
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,99}")


def pass_size(dataset: str | None) -> int | None:
    """How many requests make one pass over an official dataset: the checker's minimum
    completed count, which is one pass (rules §6.4); None for any other dataset."""
    return MIN_QUERY_COUNT.get(dataset) if dataset else None


def catalogue(extra: Iterable[str] = ()) -> frozenset[str]:
    return OFFICIAL_DATASETS | {name for name in extra if plain_name(name)}


def plain_name(name: str) -> bool:
    return bool(_NAME.fullmatch(name)) and ".." not in name
