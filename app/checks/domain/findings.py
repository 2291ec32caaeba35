"""The one shape every check result takes, official or the portal's own."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from app.core.findings import SEVERITY_ORDER, Severity, Source, Verdict

__all__ = ["SEVERITY_ORDER", "Finding", "Severity", "Source", "Verdict"]


@dataclass(frozen=True)
class Finding:
    """One result of one rule.

    ``path`` is relative to the submission root. ``point`` names the Pareto point as
    ``<system>/<model>/r<N>`` when the finding concerns one, else ``None``.
    """

    rule: str
    severity: Severity
    title: str
    message: str
    source: Source = Source.OFFICIAL
    key: str = ""
    clause: str = ""
    fix: str | None = None
    path: str | None = None
    point: str | None = None

    @property
    def passed(self) -> bool:
        return self.severity != Severity.ERROR

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["severity"] = self.severity.value
        data["source"] = self.source.value
        data["passed"] = self.passed
        return data


def portal_finding(
    rule: str,
    title: str,
    clause: str,
    severity: Severity,
    message: str,
    *,
    point: str | None = None,
    fix: str | None = None,
) -> Finding:
    """A finding of one of the portal's own rules (its key is its severity)."""
    return Finding(
        rule=rule,
        severity=severity,
        title=title,
        message=message,
        fix=fix,
        clause=clause,
        source=Source.PORTAL,
        key=severity.value,
        point=point,
    )


def verdict_of(findings: list[Finding]) -> Verdict:
    """ERROR rejects; warnings and info pass, as the official checker decides."""
    if any(f.severity == Severity.ERROR for f in findings):
        return Verdict.REJECTED
    return Verdict.PASSED
