"""`endpoints-portal check`: the worker's checks on a local directory or archive."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.demo.bundles import BundleFactory
from tests.support import PROJECT_ROOT
from tests.support.bundles import broken, tar_bytes
from tests.support.portal import start_portal, stop_portal

FINDING_KEYS = {"rule", "severity", "passed", "clause", "title", "message", "fix", "path", "point"}


def _check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "check", *args],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )


def test_passing_archive_exits_zero_with_json(good_archive: Path) -> None:
    result = _check(str(good_archive), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "passed" and report["checker_version"] == "1.5.3.0"
    assert all(FINDING_KEYS <= set(f) for f in report["findings"])
    assert {f["rule"] for f in report["findings"]} >= {"point-count", "target-cohort-cutoff"}
    assert "duplicate-upload" not in {f["rule"] for f in report["findings"]}  # no database here


def test_rejected_directory_exits_one_and_keeps_official_ids(tmp_path: Path) -> None:
    root = BundleFactory().build(tmp_path, edits=broken("zero-tpot-p90", "missing-system-power"))
    result = _check(str(root.parent))  # the organisation directory works too
    assert result.returncode == 1
    assert "metric-consistency-tpot-p90" in result.stdout and "power-descriptor" in result.stdout
    assert "REJECTED" in result.stdout.splitlines()[-1]
    as_json = json.loads(_check(str(root), "--json").stdout)
    errors = {(f["rule"], f["severity"]) for f in as_json["findings"] if not f["passed"]}
    assert errors == {("metric-consistency-tpot-p90", "error"), ("power-descriptor", "error")}


def test_the_local_check_reads_the_datasets_the_portal_is_configured_with(
    tmp_path: Path,
) -> None:
    def rename(root: Path) -> None:
        for point in root.glob("results/*/*/r*/point.yaml"):
            point.write_text(point.read_text().replace("cnn_dailymail", "my_own_prompts"))

    root = BundleFactory().build(tmp_path, edits=(rename,))

    def warned(env: dict[str, str] | None) -> bool:
        report = json.loads(_check(str(root), "--json", env=env).stdout)
        return any(f["rule"] == "dataset-name" for f in report["findings"])

    assert warned(None), "not in the official catalogue"
    assert not warned({"ENDPOINTS_PORTAL_EXTRA_DATASETS": '["my_own_prompts"]'})


def test_hostile_archive_and_missing_path_exit_two(tmp_path: Path) -> None:
    link = tarfile.TarInfo("org/x")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    evil = tmp_path / "evil.tar.gz"
    evil.write_bytes(tar_bytes([(link, None)]))
    result = _check(str(evil))
    assert result.returncode == 2 and "symbolic link" in result.stderr
    assert _check(str(tmp_path / "nothing-here")).returncode == 2


@dataclass(frozen=True)
class Said:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def portal_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., Said]:
    """``endpoints-portal`` in this process, on an empty data directory: these commands are
    database work, and each start of the script costs a second of CPU (the checks above
    and the worker below start it)."""
    from app.cli import main

    monkeypatch.setenv("ENDPOINTS_PORTAL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ENDPOINTS_PORTAL_DEMO_DATA", "0")
    monkeypatch.delenv("DATABASE_URL", raising=False)

    def cli(*args: str, stdin: str = "") -> Said:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
        said = capsys.readouterr()
        return Said(code, said.out, said.err)

    return cli


def test_users_create_and_token(portal_cli: Callable[..., Said]) -> None:
    def users(*args: str, stdin: str = "") -> Said:
        return portal_cli("users", *args, stdin=stdin)

    created = users(
        "create",
        "admin@mlc.org",
        "--role",
        "admin",
        "--password-stdin",
        stdin="a long enough password\n",
    )
    assert created.returncode == 0, created.stderr
    token = users("token", "admin@mlc.org", "--name", "ops")
    assert token.returncode == 0 and token.stdout.strip().startswith("epp_")
    assert "shown only now" in token.stderr
    assert (
        users(
            "create", "x@mlc.org", "--role", "admin", "--password-stdin", stdin="short\n"
        ).returncode
        == 2
    )
    assert "admin@mlc.org\tadmin" in users("list").stdout
    revoked = users("revoke-token", token.stdout.strip()[:10])
    assert revoked.returncode == 0 and "revoked 1" in revoked.stdout
    # An invitation: the one-time link printed once, on the portal's public address.
    invited = users("invite", "chair2@mlc.org", "--role", "chair")
    assert invited.returncode == 0, invited.stderr
    assert invited.stdout.strip().startswith("http://127.0.0.1:8000/join/")
    assert "works once" in invited.stderr and "shown only now" in invited.stderr
    member = users("invite", "new@fjord.example")  # a submitter needs an organisation
    assert member.returncode == 2 and "the organization is required" in member.stderr
    taken = users("invite", "admin@mlc.org", "--role", "admin")
    assert taken.returncode != 0 and "has an account already" in taken.stderr
    # An organisation that exists is joined only when the operator says so.
    first = users("invite", "a@fjord.example", "--org", "Fjord Labs")
    assert first.returncode == 0, first.stderr
    alike = users("invite", "b@fjord.example", "--org", "Fjord Labs.")
    assert alike.returncode == 2 and "--join Fjord_Labs" in alike.stderr
    joined = users("invite", "b@fjord.example", "--join", "Fjord_Labs")
    assert joined.returncode == 0, joined.stderr


def test_publish_and_clock_act_at_now_and_orgs_set(portal_cli: Callable[..., Said]) -> None:
    """--now is how operators (and tests) act at a set time; the cohort calendar holds."""
    cli = portal_cli
    assert cli("migrate").returncode == 0
    early = cli("publish", "2026-12-C0", "--now", "2026-12-02T07:59:00-08:00")
    assert early.returncode == 2 and "too-early" in early.stderr
    naive = cli("publish", "2026-12-C0", "--now", "2026-12-02T08:00:00")
    assert naive.returncode == 2 and "time zone" in naive.stderr
    done = cli("publish", "2026-12-C0", "--now", "2026-12-02T08:00:00-08:00")
    assert done.returncode == 0 and "0 publication(s) in 2026-12-C0" in done.stdout
    past = cli("publish", "2026-11-C1", "--now", "2026-12-02T09:00:00-08:00")
    assert past.returncode == 2 and "not-current" in past.stderr
    assert cli("clock", "--now", "2026-12-03T09:00:00-08:00").returncode == 0
    created = cli("users", "create", "r@zen.example", "--role", "reviewer", "--org",
                  "Zen Labs", "--password-stdin", stdin="a long enough password\n")  # fmt: skip
    assert created.returncode == 0, created.stderr
    slug = cli("orgs", "list").stdout.split("\t")[0]
    changed = cli(
        "orgs", "set", slug, "--country", "DE", "--subdivision", "BY", "--committee", "yes"
    )
    assert changed.returncode == 0, changed.stderr
    listed = cli("orgs", "list").stdout
    assert "DE-BY" in listed and "committee (appointed)" in listed
    bad = cli("orgs", "set", slug, "--country", "Narnia")
    assert bad.returncode == 2 and "bad-country" in bad.stderr


def _serving(data_dir: Path) -> set[int]:
    """The processes that serve *data_dir* (found by their environment)."""
    marker = f"ENDPOINTS_PORTAL_DATA_DIR={data_dir}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
def test_serve_stopped_by_sigterm_stops_its_worker(tmp_path: Path) -> None:
    """Service managers and containers stop `serve` with SIGTERM, not Ctrl-C."""
    portal = start_portal(tmp_path / "data", tmp_path / "portal.log")
    try:
        deadline = time.monotonic() + 30
        while len(_serving(portal.data_dir)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_serving(portal.data_dir)) >= 2  # the web process and its worker
        portal.process.send_signal(signal.SIGTERM)
        assert portal.process.wait(timeout=40) == 143
        deadline = time.monotonic() + 10
        while _serving(portal.data_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _serving(portal.data_dir) == set(), portal.log.read_text()[-2000:]
    finally:
        stop_portal(portal)


def test_super_passes_set_list_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator records a benchmark's other super-pass size with its source, in
    process: the command is plain database work."""
    from app.cli import main

    monkeypatch.setenv("ENDPOINTS_PORTAL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ENDPOINTS_PORTAL_DEMO_DATA", "0")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    source = "WG decision of 2026-11-02"
    assert main(["super-passes", "set", "cnn_dailymail", "3342", "--source", source]) == 0
    assert main(["super-passes", "list"]) == 0
    assert capsys.readouterr().out == f"cnn_dailymail\t3342\t0.25 of a pass\t{source}\n"
    # Refused with what is wrong, and nothing changed.
    assert main(["super-passes", "set", "no_such_set", "10", "--source", "x"]) == 2
    assert "'no_such_set' is not in the catalogue" in capsys.readouterr().err
    assert main(["super-passes", "set", "cnn_dailymail", "0", "--source", "x"]) == 2
    assert "at least one request, not 0" in capsys.readouterr().err
    assert main(["super-passes", "set", "cnn_dailymail", "10", "--source", " "]) == 2
    assert "source must say" in capsys.readouterr().err
    assert main(["super-passes", "list"]) == 0
    assert "3342" in capsys.readouterr().out
    assert main(["super-passes", "unset", "cnn_dailymail"]) == 0
    assert main(["super-passes", "unset", "cnn_dailymail"]) == 2
    assert "no super-pass is defined for 'cnn_dailymail'" in capsys.readouterr().err
    assert main(["super-passes", "list"]) == 0
    assert capsys.readouterr().out == ""


def test_a_worker_with_a_broken_policy_file_stops_at_start_naming_the_entry(
    tmp_path: Path,
) -> None:
    from importlib.resources import files

    shipped = files("app.core").joinpath("review_policy.toml").read_text("utf-8")
    broken_file = tmp_path / "policy.toml"
    broken_file.write_text(shipped.replace("per_year = 8", 'per_year = "eight"'))
    env = {**os.environ, "ENDPOINTS_PORTAL_DATA_DIR": str(tmp_path / "data"),
           "ENDPOINTS_PORTAL_REVIEW_POLICY_FILE": str(broken_file)}  # fmt: skip
    started = subprocess.run(
        [sys.executable, "-m", "app.cli", "worker"], capture_output=True, text=True,
        cwd=PROJECT_ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert started.returncode != 0
    assert str(broken_file) in started.stderr and "per_year" in started.stderr
