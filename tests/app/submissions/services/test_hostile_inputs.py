"""Hostile files inside a well-formed archive, through intake, the checks and the API.

Each case damages one file of a passing bundle the way an attacker or a broken tool
would. Whatever the damage, the portal must end the check with a verdict or a stated
reason, keep what it stored, and answer every API read with JSON (never a 500).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.models import Point, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, pack_tree
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.submissions import accept

Damage = Callable[[Path], None]


def _points(root: Path) -> list[Path]:
    return sorted(
        (p for p in root.glob("results/*/*/r*") if p.is_dir()), key=lambda p: int(p.name[1:])
    )


def _summary(root: Path, index: int = 2) -> Path:
    return _points(root)[index] / "result_summary.json"


def _set_in_summary(key: str, raw: str) -> Damage:
    """Write *raw* (JSON text, NaN and Infinity included) as a summary's *key*."""

    def damage(root: Path) -> None:
        path = _summary(root)
        data = json.loads(path.read_text())
        data[key] = "__RAW__"
        path.write_text(json.dumps(data).replace('"__RAW__"', raw))

    return damage


def _billion_laughs(root: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("model_name: *a9")
    (_points(root)[1] / "point.yaml").write_text("\n".join(lines) + "\n")


def _deep_json(root: Path) -> None:
    _summary(root).write_text("[" * 200_000 + "]" * 200_000)


def _deep_yaml(root: Path) -> None:
    (_points(root)[2] / "config.yaml").write_text("- " * 300_000 + "x\n")


def _many_aliases(root: Path) -> None:
    path = _points(root)[1] / "point.yaml"
    aliases = ", ".join(["*n"] * 5_000)
    path.write_text(path.read_text() + f"notes: &n one\nmore_notes: [{aliases}]\n")


def _utf16_system_desc(root: Path) -> None:
    path = _points(root)[0] / "system_desc.json"
    path.write_bytes(path.read_text().encode("utf-16"))


def _latin1_config(root: Path) -> None:
    path = _points(root)[0] / "config.yaml"
    path.write_bytes(path.read_bytes() + "# caf\xe9 \xff\xfe\n".encode("latin-1"))


def _enormous_line(root: Path) -> None:
    path = _points(root)[0] / "config.yaml"
    path.write_text(path.read_text() + "# " + "x" * (24 * 1024 * 1024) + "\n")


def _duplicated_keys(root: Path) -> None:
    """The same key twice: Python's json keeps the last, another reader the first."""
    path = _summary(root)
    text = path.read_text()
    assert '"n_samples_completed"' in text
    path.write_text(text.replace("{", '{"n_samples_completed": 999999, ', 1))


def _binary_yaml(root: Path) -> None:
    (_points(root)[3] / "point.yaml").write_bytes(bytes(range(256)) * 64)


#: Each damage, and what the ``readable-files`` finding must say about it.
CASES: dict[str, tuple[Damage, str]] = {
    "nan-system-tps": (_set_in_summary("system_tps", "NaN"), "NaN is not a number"),
    "infinite-system-tps": (_set_in_summary("system_tps", "Infinity"), "Infinity is not"),
    "negative-infinite-duration": (_set_in_summary("duration_ns", "-Infinity"), "-Infinity"),
    "huge-int-completed": (_set_in_summary("n_samples_completed", str(2**130)), "±2^128"),
    "huge-int-negative": (_set_in_summary("n_samples_issued", str(-(2**140))), "±2^128"),
    "billion-laughs-yaml": (_billion_laughs, "alias expansion bomb"),
    "deep-json": (_deep_json, "nested deeper"),
    "deep-yaml": (_deep_yaml, "nested deeper"),
    "many-aliases-yaml": (_many_aliases, "more than 1000 YAML aliases"),
    "utf16-system-desc": (_utf16_system_desc, "not UTF-8"),
    "latin1-config": (_latin1_config, "not UTF-8"),
    "enormous-line": (_enormous_line, "a YAML metadata file may have 1048576"),
    "duplicated-keys": (_duplicated_keys, "'n_samples_completed' appears twice"),
    "binary-yaml": (_binary_yaml, "not UTF-8"),
}


@pytest.fixture(scope="module")
def clean_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return BundleFactory(submission_id="sub-hostile").build(tmp_path_factory.mktemp("clean"))


@pytest.fixture
def client(settings: Settings, database: Database) -> Iterator[TestClient]:
    token = create_accounts(database)["chair"]
    with TestClient(create_app(settings, queue=RecordingQueue()), headers=bearer(token)) as c:
        yield c


def _damaged(clean_bundle: Path, tmp_path: Path, damage: Damage, name: str) -> Path:
    org = tmp_path / "bundle" / clean_bundle.parent.name
    shutil.copytree(clean_bundle, org / clean_bundle.name)
    damage(org / clean_bundle.name)
    archive = tmp_path / f"{name}.tar.gz"
    pack_tree(org, archive, "tar.gz", arcname=org.name)
    return archive


def _upload_and_check(database: Database, settings: Settings, archive: Path) -> tuple[int, str]:
    """Intake and the worker's check, in-process; the check must not raise."""
    queue = RecordingQueue()
    submission_id, _ = accept(database, settings, queue, archive)
    with database.session() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        try:
            run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
        except Exception:  # the worker would record the reason; say which case escaped
            pytest.fail(f"{archive.name}: the checks raised instead of recording a verdict")
        return submission_id, submission.public_id


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file_ends_in_a_verdict_or_a_reason_and_reads_as_json(
    case: str,
    clean_bundle: Path,
    tmp_path: Path,
    settings: Settings,
    database: Database,
    client: TestClient,
) -> None:
    damage, expected = CASES[case]
    archive = _damaged(clean_bundle, tmp_path, damage, case)
    sid, public_id = _upload_and_check(database, settings, archive)
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None and submission.state == "rejected", case
        errors = [f for f in submission.check_runs[-1].findings if f.severity == "error"]
        assert len(errors) == 1, [(f.rule, f.message) for f in errors]
        [finding] = errors
        assert finding.rule == "readable-files" and expected in finding.message, finding.message
        assert finding.message.startswith("results/"), finding.message  # it says where
        # The checker never ran on it: nothing of it was stored as results.
        assert session.query(Point).count() == 0
    for path in ("", "/findings", "/timeline"):
        response = client.get(f"/api/v1/submissions/{public_id}{path}")
        assert response.status_code == 200, (case, path, response.text[:300])
        response.json()
    assert client.get(f"/submissions/{public_id}").status_code == 200


def test_counts_beyond_a_bigint_are_judged_not_crashed_on(
    clean_bundle: Path, tmp_path: Path, settings: Settings, database: Database
) -> None:
    """2^63 + 5 completed samples: a 64-bit value (readable), but beyond a BIGINT column."""
    damage = _set_in_summary("n_samples_completed", str(2**63 + 5))
    archive = _damaged(clean_bundle, tmp_path, damage, "big")
    sid, _ = _upload_and_check(database, settings, archive)
    with database.session() as session:
        rejected = session.get(Submission, sid)
        assert rejected is not None and rejected.state == "rejected"  # the checker's rules
        counts = [p.n_samples_completed for p in session.query(Point)]
        assert max(counts) == 2**63 - 1  # kept at the column's bound, not overflowed
