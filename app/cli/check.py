"""``endpoints-portal check``: the worker's checks on a bundle, locally (no database, no
server). Exit 0 passed, 1 rejected, 2 not checkable."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from app.checks.domain.compliance import ComplianceResult
from app.checks.domain.findings import Severity, Verdict
from app.settings import get_settings
from harness.cli.kit import EXIT_FAILED, EXIT_OK, Failure, emit_json


@click.command("check", short_help="check a bundle locally (exit 1 when rejected)")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-j", "--json", "as_json", is_flag=True, help="print the result as JSON")
def check(path: Path, as_json: bool) -> int:
    """Check a submission directory, organisation directory or archive as the worker
    does; exit 1 when it is rejected."""
    from app.checks.services.checks import official_checks
    from app.db.models import utcnow
    from app.submissions.domain.archive import ArchiveRejected
    from app.submissions.services.reading import read_archive

    settings = get_settings()
    if not path.exists():
        raise Failure(f"{path} does not exist")
    with tempfile.TemporaryDirectory(prefix="endpoints-portal-check-") as tmp:
        root = path
        if path.is_file():
            try:
                root = read_archive(settings, path, keep_events=False, under=Path(tmp)).folder
            except ArchiveRejected as exc:
                raise Failure(f"{path}: {exc.message} ({exc.code})") from None
        # The context the worker checks in (calendar, registries, datasets), from one home.
        result = official_checks(settings, root, utcnow())
    if as_json:
        emit_json(result.to_dict())
    else:
        _print_text(result)
    return EXIT_OK if result.verdict == Verdict.PASSED else EXIT_FAILED


def _print_text(result: ComplianceResult) -> None:
    shown = [f for f in result.findings if f.severity != Severity.INFO]
    for finding in shown:
        where = f" [{finding.point}]" if finding.point else ""
        click.echo(f"{finding.severity.value.upper():7} {finding.rule} ({finding.clause}){where}")
        click.echo(f"        {finding.message}")
        if finding.fix:
            click.echo(f"        Fix: {finding.fix}")
        if finding.path:
            click.echo(f"        {finding.path}")
    errors = sum(f.severity == Severity.ERROR for f in result.findings)
    warnings = sum(f.severity == Severity.WARNING for f in result.findings)
    passed = len(result.findings) - errors - warnings
    word = "PASSED" if result.verdict == Verdict.PASSED else "REJECTED"
    click.echo(
        f"{word}: {errors} error(s), {warnings} warning(s), {passed} passed check(s) "
        f"(endpoints-submission-cli {result.checker_version})"
    )
