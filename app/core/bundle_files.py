"""A bundle's metadata files (JSON, YAML), read under limits: the one reader every part
of the portal opens them with.

Nothing in a bundle is trusted (architecture §5). A file that is not UTF-8, is larger
than a metadata file can reasonably be, nests deeper than a parser can follow, expands
YAML aliases into a "billion laughs", repeats a key (two readers would see two different
values), holds NaN or Infinity, or an integer past 128 bits, is refused
with what is wrong. The checks report such a file (the ``readable-files`` rule); every
other reader takes it as missing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml

from app.core import fast_yaml

MAX_METADATA_BYTES = 8 * 1024 * 1024
# YAML that libyaml may not read (app.core.fast_yaml) is parsed in Python, about a megabyte
# a second: a bundle's YAML files (point.yaml, config.yaml, server configurations) are a
# few kilobytes.
MAX_YAML_BYTES = 1024 * 1024
MAX_YAML_ALIASES = 1000
MAX_EXPANDED_NODES = 1_000_000  # what the document becomes once its aliases are expanded
MAX_DEPTH = 64
# Seeds use all 64 bits (rules §4.3), and the client's final_snapshot.json keeps each
# series' sum of squares (nanoseconds squared, summed over the run) as a plain integer,
# past 2^64 on any run of seconds-long requests; no run needs more than 128 bits.
INT_LIMIT = 2**128


class Unreadable(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise Unreadable(f"the key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _refuse_constant(name: str) -> float:
    raise Unreadable(f"{name} is not a number JSON allows")


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) >= INT_LIMIT:
        raise Unreadable(f"the integer {text[:24]}… is beyond ±2^128")
    return value


class _LimitedConstruction(yaml.constructor.SafeConstructor):
    """SafeLoader's construction, refusing mappings with repeated keys and documents whose
    aliases expand past what any metadata file holds."""

    def construct_document(self, node: Any) -> Any:
        # A few aliases of aliases expand to billions of nodes ("billion laughs"): count
        # what the document would be once expanded before building anything from it.
        if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
            raise Unreadable(
                f"its YAML aliases expand to more than {MAX_EXPANDED_NODES} values "
                "(an alias expansion bomb)"
            )
        return super().construct_document(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        hashable = [k for k in keys if isinstance(k, str | int | float | bool)]
        if len(set(hashable)) != len(hashable):
            repeated = next(k for k in hashable if hashable.count(k) > 1)
            raise Unreadable(f"the key {repeated!r} appears twice in one mapping")
        return super().construct_mapping(node, deep=deep)


class _CarefulLoader(_LimitedConstruction, yaml.SafeLoader):
    """The pure-Python parser, which also counts the aliases as it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_YAML_ALIASES:
                raise Unreadable(
                    f"more than {MAX_YAML_ALIASES} YAML aliases (an alias expansion bomb?)"
                )
        return super().compose_node(parent, index)


class _FastLoader(_LimitedConstruction, yaml.CSafeLoader):
    """libyaml's parser, given only text it reads as the pure parser does
    (app.core.fast_yaml), with too few ``*`` to hold more aliases than allowed."""


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a cycle counts once (and the constructor refuses recursion)
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[id(node)] = size
    return size


def _check_values(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise Unreadable(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, bool):
        return
    if isinstance(value, int) and abs(value) >= INT_LIMIT:
        raise Unreadable(f"the integer {str(value)[:24]}… is beyond ±2^128")
    if isinstance(value, float) and not math.isfinite(value):
        raise Unreadable(f"{value} is not a finite number")
    if isinstance(value, dict):
        for item in value.values():
            _check_values(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_values(item, depth + 1)


def read_data(path: Path) -> Any:
    """Parse one metadata file under the limits above, or raise Unreadable."""
    size = path.stat().st_size
    limit = MAX_METADATA_BYTES if path.suffix == ".json" else MAX_YAML_BYTES
    if size > limit:
        raise Unreadable(
            f"{size} bytes; a {path.suffix[1:].upper()} metadata file may have {limit}"
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            f"not UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"
        ) from None
    try:
        if path.suffix == ".json":
            data = json.loads(
                text,
                object_pairs_hook=_no_duplicates,
                parse_constant=_refuse_constant,
                parse_int=_bounded_int,
            )
        else:
            data = fast_yaml.load(text, _FastLoader, _CarefulLoader, aliases=MAX_YAML_ALIASES)
    except RecursionError:
        raise Unreadable("nested deeper than a parser can follow") from None
    except Unreadable:
        raise
    except (ValueError, yaml.YAMLError) as exc:
        raise Unreadable(f"not valid {path.suffix[1:].upper()}: {str(exc)[:200]}") from None
    try:
        _check_values(data)
    except RecursionError:
        raise Unreadable("nested deeper than a parser can follow") from None
    return data


def read_mapping(path: Path) -> dict[str, Any] | None:
    """A metadata file that should hold one object: its content, or None when it is
    missing, unreadable under the limits, or not an object."""
    try:
        data = read_data(path)
    except (OSError, Unreadable):
        return None
    return data if isinstance(data, dict) else None
