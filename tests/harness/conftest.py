"""Harness fixtures: a simulated endpoint on loopback and a locally built tokenizer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from harness.sim import WORDS, SimConfig, SimServer

# A small chat template in the usual style, rendering reasoning and tool calls.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|start|>{{ m.role }}<|sep|>"
    "{% if m.reasoning_content %}<|think|>{{ m.reasoning_content }}<|/think|>{% endif %}"
    "{{ m.content }}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<|call|>{{ c.function.name }} "
    "{{ c.function.arguments }}{% endfor %}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant<|sep|>{% endif %}"
)
SPECIALS = ["<|bos|>", "<|start|>", "<|sep|>", "<|end|>", "<|think|>", "<|/think|>", "<|call|>"]


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


class RunningSim:
    """The simulator on its own event loop in a thread (callers may run a loop of their own)."""

    def __init__(self, config: SimConfig) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = SimServer(config)
        self.port = 0
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.port = self.loop.run_until_complete(self.server.start())
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("the simulator did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


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
