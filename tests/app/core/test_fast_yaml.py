"""libyaml where it is safe, the pure parser elsewhere: the same answer as
``yaml.safe_load`` for any text, shallow or deep, well-formed or not."""

from __future__ import annotations

import importlib
import types
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import fast_yaml

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.dates()
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=40,
)


def _outcome(read: Any, text: str | bytes) -> tuple[str, object]:
    try:
        return "read", read(text)
    except yaml.YAMLError as exc:
        return "refused", str(exc)
    except RecursionError:
        return "too deep", None


@settings(max_examples=200)
@given(
    value=documents,
    flow=st.sampled_from([None, True, False]),
    # A character put somewhere, most often breaking the document.
    cut=st.none()
    | st.tuples(st.integers(min_value=0), st.sampled_from("[]{}:-?*&!'\"\t#|>%@`\r\\\ufeff\u2028")),
    as_bytes=st.booleans(),
)
def test_any_text_reads_as_safe_load_reads_it(
    value: object, flow: bool | None, cut: tuple[int, str] | None, as_bytes: bool
) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow)
    if cut is not None:
        at = cut[0] % (len(text) + 1)
        text = text[:at] + cut[1] + text[at:]
    given_text: str | bytes = text.encode() if as_bytes else text
    assert _outcome(fast_yaml.safe_load, given_text) == _outcome(yaml.safe_load, given_text)


class _Marked(yaml.CSafeLoader):
    """libyaml's loader, marking what it reads: which of the two parsers read a text."""

    def construct_document(self, node: Any) -> Any:
        return ("libyaml", super().construct_document(node))


def test_shallow_text_goes_to_libyaml_and_deep_text_to_the_pure_parser() -> None:
    # What libyaml reads comes back marked; what the pure parser reads, as it is.
    shallow = "a:\n- 1\n- b: 2\nc: []\n"
    assert fast_yaml.load(shallow, _Marked) == ("libyaml", {"a": [1, {"b": 2}], "c": []})
    levels = fast_yaml.MAX_LIBYAML_LEVELS + 1  # each "- " opens a level
    deep = fast_yaml.load("- " * levels + "x\n", _Marked)
    assert isinstance(deep, list)
    assert fast_yaml.load("- " * (levels - 1) + "x\n", _Marked)[0] == "libyaml"
    # A flow collection goes to the pure parser, however shallow.
    assert fast_yaml.load("a: [1]\n", _Marked) == {"a": [1]}
    # With aliases limited, only text with few enough "*" goes to libyaml.
    aliased = "x: &a 1\ny: *a\n"
    assert fast_yaml.load(aliased, _Marked, aliases=1) == ("libyaml", {"x": 1, "y": 1})
    assert fast_yaml.load(aliased, _Marked, aliases=0) == {"x": 1, "y": 1}


# Texts where libyaml and the pure parser part, found by searches like the one above.
PARTING = {
    "[\t]\n": [],  # a tab: white space to libyaml, refused by the pure parser
    "[n?ull]\n": ["n?ull"],  # a "?" in a plain scalar in a flow collection
    ">#[]\n#": "",  # a block scalar's header with a comment at once
    "{!\r}\u2028\n": {"": None},  # an empty tag
    "[\u2028\ufeff]\n": [],  # a byte-order mark past the start
}


@pytest.mark.parametrize("text", PARTING)
def test_where_the_parsers_part_the_pure_parser_reads(text: str) -> None:
    assert yaml.load(text, Loader=yaml.CSafeLoader) == PARTING[text]  # noqa: S506
    assert _outcome(fast_yaml.safe_load, text) == _outcome(yaml.safe_load, text)
    assert _outcome(fast_yaml.safe_load, text) != ("read", PARTING[text])


@pytest.mark.parametrize("levels", [300, 5_000, 200_000])
def test_deep_text_is_read_or_refused_as_the_pure_parser_does(levels: int) -> None:
    for text in ("[" * levels + "]" * levels, "- " * levels + "x\n"):
        assert _outcome(fast_yaml.safe_load, text) == _outcome(yaml.safe_load, text)


def test_an_error_reads_in_pyyaml_s_words() -> None:
    text = "a: [1, 2\nb: 3\n"
    with pytest.raises(yaml.YAMLError) as fast:
        fast_yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(text)
    assert str(fast.value) == str(pure.value)
    assert "while parsing a flow sequence" in str(fast.value)


def test_the_official_checker_and_builder_read_yaml_through_it() -> None:
    fast_yaml.read_official_tools_with_libyaml()
    for name in fast_yaml.OFFICIAL_YAML_READERS:
        module = importlib.import_module(name)
        assert module.yaml.safe_load is fast_yaml.safe_load, module.__name__
        assert module.yaml.YAMLError is yaml.YAMLError  # everything else is PyYAML's own


def test_only_a_module_that_imports_yaml_is_given_it() -> None:
    reader = types.ModuleType("reader")
    reader.yaml = yaml  # type: ignore[attr-defined]
    fast_yaml.read_with_libyaml(reader)
    fast_yaml.read_with_libyaml(reader)  # twice is once
    assert reader.yaml.safe_load("a: 1") == {"a": 1}
    assert yaml.safe_load is not fast_yaml.safe_load  # PyYAML itself is left as it was
    with pytest.raises(TypeError, match="does not read YAML"):
        fast_yaml.read_with_libyaml(types.ModuleType("other"))
