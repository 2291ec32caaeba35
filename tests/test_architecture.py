"""The layering of the architecture page, held by import-linter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT


def test_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint)], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


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
