"""YAML parsed by libyaml (PyYAML's C parser, about ten times faster than its pure-Python
one) wherever that is safe, and by the pure-Python parser everywhere else, with the same
answer either way.

The two must read the same documents. The pure parser composes recursively in Python and
runs out of its recursion limit past about 400 levels of nesting (the file is refused);
libyaml composes in C, up to its own nesting limit where it has one (1,000 levels in the
build PyYAML ships; none in older ones, where deep text overflows the C stack). So
libyaml is given only text that cannot nest deeper than ``MAX_LIBYAML_LEVELS``: each level
of a YAML document opens with one of ``[ { - ? :`` (a flow sequence or mapping, a block
sequence's entry, a block mapping's key), so their count bounds its depth, and counting is
one pass in C. Whatever libyaml refuses is read again by the pure parser, so an error says
what PyYAML has always said, and text that only libyaml would refuse is still read.

The official tools' modules read YAML with ``yaml.safe_load``; ``read_with_libyaml``
gives them this reading instead (the same values, faster), leaving PyYAML itself as it is
for everyone else.
"""

from __future__ import annotations

import types
from typing import Any

import yaml

# Well inside what the pure parser composes; a bundle's point.yaml has about 70 marks,
# its config.yaml 30.
MAX_LIBYAML_LEVELS = 256
_LEVEL_MARKS = ("[", "{", "-", "?", ":")
_LEVEL_MARK_BYTES = tuple(mark.encode() for mark in _LEVEL_MARKS)


def shallow_enough(text: str | bytes, *, aliases: int | None = None) -> bool:
    """Whether *text* cannot nest deeper than MAX_LIBYAML_LEVELS (and, given *aliases*,
    cannot hold more aliases than that: each alias is written with a ``*``)."""
    if isinstance(text, bytes):
        levels = sum(text.count(mark) for mark in _LEVEL_MARK_BYTES)
        stars = text.count(b"*")
    else:
        levels = sum(text.count(mark) for mark in _LEVEL_MARKS)
        stars = text.count("*")
    return levels <= MAX_LIBYAML_LEVELS and (aliases is None or stars <= aliases)


def load(
    text: str | bytes,
    fast: type[Any] = yaml.CSafeLoader,
    careful: type[Any] = yaml.SafeLoader,
    *,
    aliases: int | None = None,
) -> Any:
    """*text* read by the *fast* loader (libyaml's parser) when it is shallow enough, or
    when that fails, by the *careful* one (pure Python): loaders that construct alike."""
    if shallow_enough(text, aliases=aliases):
        try:
            return yaml.load(text, Loader=fast)  # noqa: S506 - a safe loader, given by the caller
        except yaml.YAMLError:
            pass  # the careful parser says what is wrong, in the words PyYAML always used
    return yaml.load(text, Loader=careful)  # noqa: S506 - a safe loader, given by the caller


def safe_load(stream: Any) -> Any:
    """What ``yaml.safe_load(stream)`` answers (for text, bytes or an open file)."""
    text = stream.read() if hasattr(stream, "read") else stream
    return load(text)


class _LibyamlReading(types.ModuleType):
    """PyYAML as a module sees it through ``import yaml``, but with ``safe_load`` above."""

    safe_load = staticmethod(safe_load)

    def __getattr__(self, name: str) -> Any:
        return getattr(yaml, name)


_READING = _LibyamlReading("yaml")


def read_with_libyaml(*modules: types.ModuleType) -> None:
    """Point each of *modules*' ``yaml`` (its ``import yaml``) at the reading above."""
    for module in modules:
        if getattr(module, "yaml", None) not in (yaml, _READING):
            raise TypeError(f"{module.__name__} does not read YAML through `import yaml`")
        module.yaml = _READING  # type: ignore[attr-defined]
