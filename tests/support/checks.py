"""The compliance checks of one bundle at one moment, run once per test.

A test of what follows the checks (the review, the record) may upload the same bundles
again and again: the first upload of a bundle at a moment runs the real checks, and the
same bundle checked at the same moment with the same context is answered from that run.
The key is everything the checks read (the bundle's content, the moment, the earlier
uploads, the registries, the calendar and the datasets), so an answer is never one the
checks would not give; the checks' own tests (tests/app/checks) run them every time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.checks.domain.compliance import ComplianceResult, run_compliance
from app.checks.services import checks
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
