"""The layering of the architecture page, held by import-linter."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support import PROJECT_ROOT


def test_import_contracts_are_kept() -> None:
    """Every contract of pyproject.toml is read and kept: the features form a DAG."""
    contracts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"][
        "importlinter"
    ]["contracts"]
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint)], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(contracts)} kept, 0 broken" in result.stdout
    (root,) = [c for c in contracts if c.get("containers") == ["app"]]
    features = {"accounts", "checks", "dossier", "publishing", "results", "review", "runs"}
    # Each feature a layer of its own (or independent of its sibling): no two may import
    # each other, so there is no circle between them.
    layered = [layer for layer in root["layers"] if set(layer.split(" | ")) & features]
    assert all(":" not in layer for layer in layered), layered


def test_required_top_level_exists() -> None:
    for name in (
        "pyproject.toml",
        "app",
        "migrations",
        "worker",
        "templates",
        "static",
        "harness",
        "tests",
        "docker-compose.yml",
        "README.md",
        "Makefile",
        ".ci/run",
    ):
        assert (PROJECT_ROOT / name).exists(), name
    assert "make test" in (PROJECT_ROOT / ".ci/run").read_text()


def _http_statuses_in_refusals(path: Path) -> list[str]:
    """Integer literals 400-599 handed to anything that refuses or errs."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if not any(word in name for word in ("Error", "Refus", "refuse", "Rejected", "Problem")):
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
                if 400 <= arg.value < 600:
                    found.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}")
    return found


def test_the_domain_and_the_services_choose_no_http_status() -> None:
    modules = [
        path
        for path in (PROJECT_ROOT / "app").rglob("*.py")
        if {"core", "jobs", "domain", "services"} & set(path.relative_to(PROJECT_ROOT).parts)
        or path.name == "domain.py"
    ]
    assert len(modules) > 40
    assert [hit for path in modules for hit in _http_statuses_in_refusals(path)] == []
    # The check itself sees a status where the web layer hands one over.
    assert _http_statuses_in_refusals(PROJECT_ROOT / "app/submissions/web/uploads.py")


def test_test_modules_share_code_only_through_tests_support() -> None:
    crossing = []
    for path in (PROJECT_ROOT / "tests").rglob("*.py"):
        if "support" in path.relative_to(PROJECT_ROOT / "tests").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                if not node.module.startswith("tests.support"):  # type: ignore[union-attr]
                    crossing.append(f"{path.relative_to(PROJECT_ROOT)}: {node.module}")
    assert crossing == []


QUERIES = frozenset({"scalar", "scalars", "execute", "query", "get"})


def test_the_web_asks_services_and_never_queries_the_database() -> None:
    """Routes and pages read through services (one home for each query); a session is
    only handed on, committed or rolled back at the edge."""
    leaks = []
    modules = [*PROJECT_ROOT.glob("app/*/web/*.py"), *PROJECT_ROOT.glob("app/web/*.py")]
    assert len(modules) > 15
    for module in modules:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
                names = {alias.name for alias in node.names}
                if node.module != "sqlalchemy.orm" or names != {"Session"}:
                    leaks.append(f"{module.name}:{node.lineno} imports {node.module}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in QUERIES
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "session"
            ):
                leaks.append(f"{module.name}:{node.lineno} session.{node.func.attr}(...)")
    assert leaks == []


MOST_LINES = 80


def test_no_function_is_longer_than_80_lines() -> None:
    long = set()
    for root in ("app", "worker", "harness"):
        for path in (PROJECT_ROOT / root).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    assert node.end_lineno is not None
                    if node.end_lineno - node.lineno + 1 > MOST_LINES:
                        long.add((path.relative_to(PROJECT_ROOT).as_posix(), node.name))
    assert long == set()
