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
one pass in C; text in a corner of the grammar where the two parsers part (a tab, a tag,
a block scalar, a flow collection: listed below) goes to the pure parser too. Whatever
libyaml refuses is read again by the pure parser, so an error says what PyYAML has
always said, and text that only libyaml would refuse is still read.

The official tools' modules read YAML with ``yaml.safe_load``: the checker each bundle's
files (half of a check's time was spent there), the builder each run's point.yaml and
config.yaml, several times over. ``read_official_tools_with_libyaml`` gives them this
reading instead (the same values, faster), leaving PyYAML itself as it is for everyone
else.
"""

from __future__ import annotations

import importlib
import re
import types
from typing import Any

import yaml

# Well inside what the pure parser composes; a bundle's point.yaml has about 70 marks,
# its config.yaml 30.
MAX_LIBYAML_LEVELS = 256
_LEVEL_MARKS = ("[", "{", "-", "?", ":")
# Where the two parsers part, searches of generated documents (tests/app/core/
# test_fast_yaml.py) found a tab in a plain scalar (white space to libyaml, refused by the
# pure parser), a byte-order mark past the start (dropped by libyaml), a block scalar's
# header followed at once by a comment, an empty tag, a "?" inside a plain scalar in a
# flow collection: the corners of the grammar and its flow style. libyaml reads no text
# that holds a tab, a carriage return or another line break, a byte-order mark or a
# backslash (escapes) anywhere; an indicator where a token may start (a tag, a directive,
# a block scalar, an explicit key, the reserved @ and `; inside a plain scalar they are
# letters to both); or a flow collection other than an empty [] or {}. A line that is a
# comment is left out of the second search (both parsers skip it, or it is the letters
# of a quoted scalar). What the tools write, block style with plain and quoted scalars,
# holds none of these.
_READ_DIFFERENTLY_ANYWHERE = re.compile("[\t\r\x85\u2028\u2029\ufeff\\\\]")
_READ_DIFFERENTLY_AS_A_TOKEN = re.compile(
    "(?:^|(?<=[\\s,:-]))[!%|>@`?]|\\[(?!\\])|\\{(?!\\})", re.MULTILINE
)
_COMMENT_LINE = re.compile("^ *#.*$", re.MULTILINE)
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def libyaml_reads_alike(text: str | bytes, *, aliases: int | None = None) -> bool:
    """Whether libyaml reads *text* as the pure parser would: it cannot nest deeper than
    MAX_LIBYAML_LEVELS and holds nothing the two read differently (and, given *aliases*,
    it cannot hold more aliases than that: each alias is written with a ``*``)."""
    if isinstance(text, bytes):
        if text.startswith(_UTF16_MARKS):
            return False  # UTF-16: counted as text by the pure parser only
        text = text.decode("utf-8", errors="replace")  # invalid bytes: refused by both
    if _READ_DIFFERENTLY_ANYWHERE.search(text):
        return False
    if _READ_DIFFERENTLY_AS_A_TOKEN.search(_COMMENT_LINE.sub("", text)):
        return False
    levels = sum(text.count(mark) for mark in _LEVEL_MARKS)
    return levels <= MAX_LIBYAML_LEVELS and (aliases is None or text.count("*") <= aliases)


def load(
    text: str | bytes,
    fast: type[Any] = yaml.CSafeLoader,
    careful: type[Any] = yaml.SafeLoader,
    *,
    aliases: int | None = None,
) -> Any:
    """*text* read by the *fast* loader (libyaml's parser) where it reads as the pure
    parser would, else (or when it fails) by the *careful* one (pure Python): loaders
    that construct alike."""
    if libyaml_reads_alike(text, aliases=aliases):
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


# The modules of the pinned official tools that ``import yaml`` and call its safe_load.
OFFICIAL_YAML_READERS = (
    "submission_checker.checker",
    "submission_checker.drafters",
    "submission_checker.messages",
    "submission_checker.seed_sets",
    "submission_checker.models.loader",
    "endpoints_submission_cli.submissions.builder",
    "endpoints_submission_cli.runs.parser",
)


def read_official_tools_with_libyaml() -> None:
    """The official checker and builder read YAML as above (idempotent)."""
    read_with_libyaml(*(importlib.import_module(name) for name in OFFICIAL_YAML_READERS))


def read_with_libyaml(*modules: types.ModuleType) -> None:
    """Point each of *modules*' ``yaml`` (its ``import yaml``) at the reading above."""
    for module in modules:
        if getattr(module, "yaml", None) not in (yaml, _READING):
            raise TypeError(f"{module.__name__} does not read YAML through `import yaml`")
        module.yaml = _READING  # type: ignore[attr-defined]
