"""The registry of job kinds: every job the services make has a kind there, and the
worker carries each kind with a task of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import app.checks.services.checks
import app.review.services.corrections
import app.runs.services.recount_parts
import app.runs.services.reproductions
import app.runs.services.retokenization
import app.submission_api.services.transfers
import app.submissions.services.intake
from app.jobs.kinds import registry
from app.pipeline import JOB_KINDS


def _kinds_made(module: object) -> set[str]:
    """The kinds of the Job rows a module creates: Job(kind=NAME)."""
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    names = {
        keyword.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Job"
        for keyword in node.keywords
        if keyword.arg == "kind" and isinstance(keyword.value, ast.Name)
    }
    return {getattr(module, name) for name in names}


def test_every_job_the_services_make_is_of_a_registered_kind() -> None:
    made = set()
    for module in (
        app.submissions.services.intake,
        app.checks.services.checks,
        app.runs.services.retokenization,
        app.runs.services.recount_parts,
        app.runs.services.reproductions,
        app.submission_api.services.transfers,
        app.review.services.corrections,
    ):
        made |= _kinds_made(module)
    assert made == {
        "check_submission", "retokenize_point", "recount_part", "reproduce_point",
        "receive_staged", "check_correction",
    }  # fmt: skip
    assert made == set(JOB_KINDS)


def test_the_worker_registers_one_task_per_kind() -> None:
    import worker.tasks  # noqa: F401  (registers the tasks)
    from app.broker import CLOCK_TASK, EXPIRE_RUNS_TASK, WEBHOOKS_TASK
    from worker.celery_app import celery_app

    portal_tasks = {name for name in celery_app.tasks if name.startswith("portal.")}
    periodic = {CLOCK_TASK, EXPIRE_RUNS_TASK, WEBHOOKS_TASK}
    assert portal_tasks == {kind.task for kind in JOB_KINDS.values()} | periodic
    for kind in JOB_KINDS.values():
        assert kind.doing and callable(kind.run) and callable(kind.fail)


def test_a_kind_declared_twice_is_refused_at_start() -> None:
    check = JOB_KINDS["check_submission"]
    with pytest.raises(ValueError, match="'check_submission' is declared twice"):
        registry(check, *JOB_KINDS.values())
    assert registry(*JOB_KINDS.values()) == JOB_KINDS
