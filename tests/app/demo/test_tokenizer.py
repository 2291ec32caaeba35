"""The demo tokenizer: one token per character, as its HF tokenizer counts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.demo.tokenizer import DEMO_TOKENIZER, DemoTokenCounter
from app.settings import Settings
from harness.metrics.tokens import load_registry


@settings(max_examples=200, deadline=None, derandomize=True)
@given(texts=st.lists(st.text(max_size=80), max_size=6))
def test_the_demo_count_is_the_character_tokenizers(texts: list[str]) -> None:
    counter = DemoTokenCounter()
    encoded = counter.tokenizer.encode_batch(texts, add_special_tokens=False) if texts else []
    assert counter.count_texts(texts) == [len(e.ids) for e in encoded]
    for text in texts:
        assert counter.count_text(text) == len(text)


def test_the_demo_tokenizer_is_named_and_never_in_the_registry() -> None:
    assert DemoTokenCounter().name == DEMO_TOKENIZER and "demo data only" in DEMO_TOKENIZER
    registry = load_registry(Settings().tokenizer_registry)
    assert all("demo" not in entry.location for entry in registry.values())
    assert not {"llama3_1-8b", "gpt-oss-120b", "kimi-k3"} & set(registry)
