"""One large point's tokens counted in parts, by several processes or machines, and merged
exactly.

Tokenizing is what a re-count spends its time on, so that is what is split: part ``k`` of
``N`` counts the responses (and prompts) on the lines of blocks ``k, k + N, k + 2N, …`` of
``BLOCK_LINES`` lines each, reading the file from its start (a gzip file cannot be entered
in the middle) but parsing only its own lines. Each part's counts are keyed by line
number and can be saved (``.npz``) and sent back from another machine. The summary is then
computed in one pass over the events with the parts' counts instead of a tokenizer
(:class:`Precounted`): the same function, the same numbers, whatever ``N`` is. Every
response is counted both whole and after its first chunk, so the merge needs nothing of
the order the parts ran in.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import orjson

from harness.metrics import events as ev
from harness.metrics.events import Output, Prompt
from harness.metrics.tokens import TokenCounter

BLOCK_LINES = 10_000
BATCH = 256
Ints = npt.NDArray[np.int64]


def part_of(line: int, parts: int, block_lines: int = BLOCK_LINES) -> int:
    """Which part counts line *line* (from 1)."""
    return ((line - 1) // block_lines) % parts


@dataclass(frozen=True)
class PartCounts:
    """Part ``part`` of ``parts``: per counted line, the response's tokens (whole, and after
    its first chunk; −1 where it has none), and the prompts' (−1: no prompt to count)."""

    part: int
    parts: int
    output_lines: Ints
    n_out: Ints
    n_after: Ints
    prompt_lines: Ints
    n_prompt: Ints

    def save(self, path: Path) -> None:
        with path.open("wb") as fh:
            np.savez_compressed(
                fh,
                meta=np.array([self.part, self.parts], dtype=np.int64),
                output_lines=self.output_lines,
                n_out=self.n_out,
                n_after=self.n_after,
                prompt_lines=self.prompt_lines,
                n_prompt=self.n_prompt,
            )

    @classmethod
    def load(cls, path: Path) -> PartCounts:
        with np.load(path) as data:
            part, parts = (int(v) for v in data["meta"])
            return cls(
                part,
                parts,
                *(
                    data[k]
                    for k in ("output_lines", "n_out", "n_after", "prompt_lines", "n_prompt")
                ),
            )


def _lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        yield from fh


def count_part(
    path: Path,
    counter: TokenCounter,
    part: int,
    parts: int,
    *,
    count_prompts: bool = True,
    block_lines: int = BLOCK_LINES,
    progress: Callable[[int], None] | None = None,
) -> PartCounts:
    """Count part *part* of *parts* of the events file (module docstring)."""
    if not 0 <= part < parts:
        raise ValueError(f"part must be between 0 and {parts - 1}, got {part}")
    counter = counter.remembering()
    output_lines: list[int] = []
    counted: list[tuple[int, int | None]] = []
    prompt_lines: list[int] = []
    prompts: list[int] = []
    waiting: list[Output] = []

    def flush() -> None:
        if waiting:
            counted.extend(counter.count_outputs(waiting, [True] * len(waiting)))
            waiting.clear()

    for number, raw in enumerate(_lines(path), start=1):
        if progress is not None and number % 100_000 == 0:
            progress(number)
        if part_of(number, parts, block_lines) != part:
            continue
        try:
            event = orjson.loads(raw)
        except ValueError:
            continue  # the summary reports malformed lines; nothing here to count
        if not isinstance(event, dict):
            continue
        kind = event.get("event_type")
        if kind == ev.COMPLETE:
            output = Output.from_data(event.get("data"))
            if output is not None:
                output_lines.append(number)
                waiting.append(output)
                if len(waiting) >= BATCH:
                    flush()
        elif kind == ev.ISSUED and count_prompts:
            count = counter.count_prompt(Prompt.from_data(event.get("data")))
            prompt_lines.append(number)
            prompts.append(-1 if count is None else count)
    flush()
    return PartCounts(
        part,
        parts,
        np.array(output_lines, dtype=np.int64),
        np.array([c[0] for c in counted], dtype=np.int64),
        np.array([-1 if c[1] is None else c[1] for c in counted], dtype=np.int64),
        np.array(prompt_lines, dtype=np.int64),
        np.array(prompts, dtype=np.int64),
    )


class Precounted:
    """Every part's counts, looked up by line (``harness.metrics.summary.Counts``)."""

    def __init__(self, parts: list[PartCounts]) -> None:
        if not parts:
            raise ValueError("no counted parts")
        total = parts[0].parts
        have = sorted(p.part for p in parts)
        if any(p.parts != total for p in parts) or have != list(range(total)):
            raise ValueError(
                f"the parts do not make one whole: have {have} of {total}"
                + ("" if all(p.parts == total for p in parts) else " (different part counts)")
            )

        def joined(lines: str, *values: str) -> tuple[Ints, ...]:
            keys = np.concatenate([getattr(p, lines) for p in parts])
            order = np.argsort(keys, kind="stable")
            return (
                keys[order],
                *(np.concatenate([getattr(p, v) for p in parts])[order] for v in values),
            )

        self._out_lines, self._n_out, self._n_after = joined("output_lines", "n_out", "n_after")
        self._prompt_lines, self._n_prompt = joined("prompt_lines", "n_prompt")

    @staticmethod
    def _index(keys: Ints, lines: list[int] | int) -> Ints:
        wanted = np.atleast_1d(np.asarray(lines, dtype=np.int64))
        at = np.searchsorted(keys, wanted)
        found = (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == wanted)
        if not found.all():
            missing = int(wanted[~found][0])
            raise KeyError(f"line {missing} of the events was not counted by any part")
        return at

    def outputs(
        self, lines: list[int], outputs: list[Output], with_tail: list[bool]
    ) -> list[tuple[int, int | None]]:
        at = self._index(self._out_lines, lines)
        return [
            (int(n), int(a) if tail and a >= 0 else None)
            for n, a, tail in zip(self._n_out[at], self._n_after[at], with_tail, strict=True)
        ]

    def output(self, line: int, output: Output) -> int:
        return int(self._n_out[self._index(self._out_lines, line)[0]])

    def prompt(self, line: int, prompt: Prompt) -> int | None:
        value = int(self._n_prompt[self._index(self._prompt_lines, line)[0]])
        return None if value < 0 else value
