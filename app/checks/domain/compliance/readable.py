"""The ``readable-files`` rule: every metadata file the checks read must be plain,
bounded data (app.core.bundle_files) before the official checker opens it; an
unreadable one is reported with its path and what is wrong, and the bundle is rejected
without running the checker on it (architecture §5).
"""

from __future__ import annotations

from pathlib import Path

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.core.bundle_files import Unreadable, read_data

RULE = portal_rule("readable-files")
SUFFIXES = (".json", ".yaml", ".yml")


def scan_readable(root: Path) -> list[Finding]:
    """An error finding for each unreadable metadata file under ``results/``."""
    findings = []
    results = root / "results"
    for path in sorted(results.rglob("*")) if results.is_dir() else []:
        if path.suffix.lower() not in SUFFIXES or not path.is_file() or path.is_symlink():
            continue
        try:
            read_data(path)
        except Unreadable as problem:
            relative = path.relative_to(root).as_posix()
            finding = RULE.finding(Severity.ERROR, f"{relative}: {problem}", fix=RULE.fix)
            findings.append(finding)
    return findings
