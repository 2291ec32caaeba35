"""The demo tokenizer: one token per character.

No reference tokenizer of the demo's models (Llama 3.1 8B, gpt-oss-120b, Kimi K3) ships
with the portal, and the demo's outputs are random letters anyway. The demo loader hands
this counter to the re-counts of its own submissions, and every such re-count names it.
It is never in the tokenizer registry, so a real bundle uploaded to a portal that loaded
the demo is not counted with it.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, models, pre_tokenizers

from harness.metrics.tokens import TokenCounter

DEMO_TOKENIZER = "demo tokenizer: one token per character (demo data only)"


def character_tokenizer() -> Tokenizer:
    """An HF tokenizer that makes every character (newlines included) one token."""
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    return tokenizer


class DemoTokenCounter(TokenCounter):
    """Counts as :func:`character_tokenizer` does, as ``len``: the same number without
    encoding (the demo loads on every new portal, and encoding is most of a re-count)."""

    def __init__(self) -> None:
        super().__init__(character_tokenizer(), None, name=DEMO_TOKENIZER)

    def count_text(self, text: str) -> int:
        return len(text)

    def count_texts(self, texts: list[str]) -> list[int]:
        return [len(text) for text in texts]
