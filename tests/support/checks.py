"""The compliance checks of one bundle at one moment, and the re-count of one point's
events, run once per test.

A test of what follows the checks (the review, the record) may upload the same bundles
again and again: the first upload of a bundle at a moment runs the real checks, and the
same bundle checked at the same moment with the same context is answered from that run.
The key is everything the checks read (the bundle's content, the moment, the earlier
uploads, the registries, the calendar and the datasets), so an answer is never one the
checks would not give; the checks' own tests (tests/app/checks) run them every time.
The same holds for the re-count's analysis of one events file (tests/app/runs and the
worker's tests run it every time).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.checks.domain.compliance import ComplianceResult, run_compliance
from app.checks.services import checks
from app.runs.domain.retokenize import Analysis, analyse
from app.runs.services import retokenization
from app.submissions.domain.bundle import content_digest


def check_each_bundle_once(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Memoise the checks for the rest of the test; returns how many really ran."""
    answers: dict[tuple[Any, ...], ComplianceResult] = {}

    def checked(path: Path, **context: Any) -> ComplianceResult:
        key = (content_digest(path), *(repr(context[k]) for k in sorted(context)))
        if key not in answers:
            answers[key] = run_compliance(path, **context)
        return answers[key]

    monkeypatch.setattr(checks, "run_compliance", checked)
    return lambda: len(answers)


def recount_each_events_file_once(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Memoise the re-count's analysis for the rest of the test; returns how many really
    ran. The key is what the analysis reads: the events (their file is named by their
    digest), the counter, the point's reported figures and the options; each caller gets
    its own copy of the answer."""
    answers: dict[tuple[Any, ...], Analysis] = {}

    def analysed(events: Path, counter: Any, reported: Any, point: str, **options: Any) -> Analysis:
        options.pop("progress", None)  # how far it got: nothing the answer depends on
        # The events' file is named by their digest; the counter by its class and name.
        counted_by = (type(counter).__name__, getattr(counter, "name", None))
        key = (events.name, counted_by, repr(reported), point, repr(sorted(options.items())))
        if key not in answers:
            answers[key] = analyse(events, counter, reported, point, **options)
        return copy.deepcopy(answers[key])

    monkeypatch.setattr(retokenization, "analyse", analysed)
    return lambda: len(answers)
