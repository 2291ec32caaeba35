"""Harness fixtures: a simulated endpoint on loopback and a locally built tokenizer."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from harness.sim import WORDS, SimConfig
from tests.support.sim import RunningSim
from tests.support.tokenizers import CHAT_TEMPLATE, SPECIALS


@pytest.fixture(scope="session")
def local_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-level tokenizer with special tokens and a chat template, built here."""
    words = [
        "[UNK]",
        *SPECIALS,
        *WORDS,
        "user",
        "assistant",
        "system",
        "hello",
        "world",
        "the",
        "a",
        "lookup",
        "{",
        "}",
        '"q":',
        '"x"',
        "write",
        "haiku",
        "about",
        "gpus",
    ]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(SPECIALS)
    out = tmp_path_factory.mktemp("tok")
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<|bos|>", "eos_token": "<|end|>", "chat_template": CHAT_TEMPLATE})
    )
    return out


@pytest.fixture
def sim() -> Iterator[Callable[[SimConfig], RunningSim]]:
    started: list[RunningSim] = []

    def start(config: SimConfig) -> RunningSim:
        running = RunningSim(config)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    prompts = ["write a haiku about gpus", "hello world", "the lookup", "lorem ipsum dolor sit"]
    path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))
    return path
