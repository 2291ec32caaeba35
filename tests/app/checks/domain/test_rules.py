"""The rule catalogue: every rule a finding or a refused upload names is in it, once,
with what it checks; what the portal emits never falls outside it."""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from submission_checker.messages import catalog as official_catalog

import app.submissions.domain.archive
import app.submissions.domain.bundle
import app.submissions.domain.tar_guard
import app.submissions.domain.zip_directory
import app.submissions.services.intake
import app.submissions.services.reading
from app.checks.domain.compliance import EarlierUpload, run_compliance
from app.checks.domain.findings import Finding, Severity, Source
from app.checks.domain.rules import PORTAL_RULES, Stage, catalogue, is_catalogued, portal_rule
from app.core.cohorts import BusinessCalendar
from app.demo.bundles import BundleFactory
from app.runs.domain.reproduction import Measured, judge_reproduction
from app.runs.domain.retokenize import Reported, analyse
from harness.sim import sim_token_counter
from tests.support.bundles import BREAKAGES, broken

CALENDAR = BusinessCalendar.of("America/Los_Angeles")
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def test_every_rule_has_one_id_a_title_and_a_clause() -> None:
    rules = catalogue()
    assert len(rules) == len({*official_catalog()} - {"_shared", "_pydantic"}) + len(PORTAL_RULES)
    for rule_id, rule in rules.items():
        assert rule.id == rule_id and KEBAB.fullmatch(rule_id), rule_id
        assert rule.title and rule.explanation
    # The portal's ids never shadow an official one.
    assert not {r.id for r in PORTAL_RULES} & set(official_catalog())


def test_the_official_rules_are_passed_through_as_the_checker_names_them() -> None:
    for rule_id, entry in official_catalog().items():
        if rule_id.startswith("_"):
            continue
        rule = catalogue()[rule_id]
        assert rule.source == Source.OFFICIAL and rule.stage == Stage.CHECKS
        assert (rule.title, rule.clause) == (entry.title, entry.spec)


@pytest.mark.parametrize("rule", PORTAL_RULES, ids=lambda r: r.id)
def test_each_portal_rule_explains_itself(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.source == Source.PORTAL and rule.severity is not None
    # A sentence or two a submitter can act on, not a placeholder.
    assert len(rule.explanation) >= 40 and rule.explanation.endswith("."), rule.id
    assert rule.clause == "portal" or re.fullmatch(r"§\d+(\.\d+)*", rule.clause), rule.id
    if rule.severity == Severity.ERROR:
        assert rule.fix, f"{rule.id}: an error says what to do about it"


def test_an_uncatalogued_rule_cannot_be_emitted() -> None:
    with pytest.raises(KeyError):
        portal_rule("made-up-rule")


def _refusal_codes(module: object, *names: str) -> set[str]:
    """The literal codes a module's refusals are raised with."""
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    return {
        str(node.args[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_every_way_an_upload_is_refused_is_an_upload_rule() -> None:
    codes = (
        _refusal_codes(app.submissions.domain.archive, "ArchiveRejected")
        | _refusal_codes(app.submissions.domain.tar_guard, "TarHeaderRefused")
        | _refusal_codes(app.submissions.domain.zip_directory, "ZipRefused")
        | _refusal_codes(app.submissions.services.reading, "ArchiveRejected")
        | _refusal_codes(app.submissions.domain.bundle, "LayoutRejected")
        | _refusal_codes(app.submissions.services.intake, "IntakeError")
    )
    assert {"path-traversal", "symlink", "compression-ratio", "no-submission-root"} <= codes
    assert {"bad-tar-header", "overlapping-members", "archive-budget"} <= codes
    # What the upload form refuses before the archive is opened.
    codes |= {"no-file", "several-files", "empty-upload", "upload-too-large"}
    for code in codes:
        assert portal_rule(code).stage == Stage.UPLOAD, code


def _emitted(tmp_path: Path) -> list[Finding]:
    """Findings from every place the portal makes them, over bundles that trip them."""
    at = dt.datetime(2026, 12, 2, 6, 0, tzinfo=ZoneInfo("America/Los_Angeles"))
    earlier = [EarlierUpload("EP-1", at - dt.timedelta(days=1))]
    findings: list[Finding] = []
    for name in sorted(BREAKAGES):
        root = BundleFactory().build(tmp_path / name, edits=broken(name))
        findings += run_compliance(
            root, evaluated_at=at, calendar=CALENDAR, earlier_uploads=earlier
        ).findings
    unreadable = BundleFactory().build(tmp_path / "unreadable")
    next(unreadable.rglob("result_summary.json")).write_text('{"a": NaN}')
    findings += run_compliance(unreadable, evaluated_at=at, calendar=CALENDAR).findings

    events = tmp_path / "events.jsonl"
    events.write_text(
        "\n".join(
            json.dumps(line)
            for line in (
                {"event": "sample_issued", "sample_id": 1, "timestamp_ns": 0},
                "not an event",
            )
        )
    )
    reported = Reported(10, 5.0, 10.0, 100.0, 20.0, 1000.0, 3, 3)
    findings += analyse(events, sim_token_counter(), reported, "s/m/r1").findings
    findings += analyse(events, None, reported, "s/m/r1").findings
    for got in (Measured(1.0, 1.0), Measured(100.0, 100.0), Measured(None, None)):
        findings.append(judge_reproduction(Measured(10.0, 10.0), got, 0.1, "s/m/r1"))
    return findings


def test_every_emitted_finding_names_a_catalogued_rule(tmp_path: Path) -> None:
    findings = _emitted(tmp_path)
    rules = {f.rule for f in findings}
    # The corpus reaches every stage that emits findings, official and portal alike.
    assert {"readable-files", "duplicate-upload", "target-cohort-cutoff"} <= rules
    assert {"tokenizer-missing", "events-malformed", "reproduction-margin"} <= rules
    assert {"point-count", "seed-runtime-match"} <= rules
    for finding in findings:
        assert is_catalogued(finding.rule), f"{finding.rule} is in no catalogue"
        rule = catalogue()[finding.rule]
        assert finding.source == rule.source, finding.rule
        if rule.source == Source.PORTAL:
            assert (finding.title, finding.clause) == (rule.title, rule.clause)
