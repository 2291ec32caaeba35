"""``endpoints-portal`` in click keeps every command and option it had (the argparse
version's surface, written down when it was replaced), and speaks the official CLI's
idiom: ``-j/--json`` records, ``Error: …`` on stderr with its status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.cli.commands import portal
from tests.support.cli import resolved, surface

# command: (its arguments, its long options), as they were before click.
LEGACY = {
    "serve": ("", "--host --no-worker --port"),
    "web": ("", "--host --port --workers"),
    "storage check": ("", "--create"),
    "storage migrate": ("", "--create --to"),
    "worker": ("", "--beat --concurrency --loglevel"),
    "scheduler": ("", "--loglevel"),
    "clock": ("", "--now"),
    "migrate": ("", ""),
    "demo": ("", ""),
    "users create": ("email", "--name --org --password-stdin --role"),
    "users token": ("email", "--name --scope"),
    "users invite": ("email", "--join --new-organization --org --role"),
    "users revoke-token": ("prefix", ""),
    "users list": ("", ""),
    "orgs list": ("", ""),
    "orgs set": ("slug", "--committee --country --subdivision"),
    "super-passes list": ("", ""),
    "super-passes set": ("dataset size", "--source"),
    "super-passes unset": ("dataset", ""),
    "publish": ("cohort", "--actor --now"),
    "check": ("path", "--json"),
}


@pytest.mark.parametrize("path", sorted(LEGACY))
def test_every_command_and_option_of_before_is_still_there(path: str) -> None:
    arguments, options = LEGACY[path]
    names = path.split()
    values = {"email": "a@b.example", "prefix": "p", "slug": "s", "dataset": "d", "size": "3",
              "cohort": "2026-12-C0", "path": "."}  # fmt: skip
    argv = [*names, *(values[a] for a in arguments.split())]
    required = {"users create": ["--role", "submitter"], "users token": ["--name", "n"],
                "super-passes set": ["--source", "s"],
                "storage migrate": ["--to", "s3://b/p"]}  # fmt: skip
    command, _ = resolved(portal, [*argv, *required.get(path, [])])
    have, positional = surface(command)
    assert set(options.split()) <= have
    assert positional == arguments.split()


def test_records_print_as_json_with_j(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENDPOINTS_PORTAL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ENDPOINTS_PORTAL_DEMO_DATA", "0")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("ENDPOINTS_PORTAL_NEW_PASSWORD", "a long enough passphrase 1")
    assert main(["users", "create", "ops@zen.example", "--role", "admin"]) == 0
    capsys.readouterr()
    assert main(["users", "list", "-j"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"email": "ops@zen.example", "role": "admin", "active": True}
    ]
    assert main(["super-passes", "set", "cnn_dailymail", "3342", "--source", "WG"]) == 0
    assert main(["super-passes", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [
        {"dataset": "cnn_dailymail", "size": 3342, "pass_size": 13368, "source": "WG"}
    ]
    assert main(["clock", "-j", "--now", "2026-12-02T09:00:00+00:00"]) == 0
    assert json.loads(capsys.readouterr().out)["now"] == "2026-12-02T09:00:00+00:00"


def test_errors_say_error_on_stderr_with_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENDPOINTS_PORTAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert main(["users", "revoke-token", "nosuch"]) == 2
    assert capsys.readouterr().err == "Error: no token starts nosuch\n"
    assert main(["check", str(tmp_path / "absent")]) == 2
    assert capsys.readouterr().err == f"Error: {tmp_path / 'absent'} does not exist\n"
    # A usage error is click's own: the usage, then what is wrong.
    assert main(["clock", "--now", "2026-12-02T09:00:00"]) == 2
    assert "Error: Invalid value for '--now': needs a time zone" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2
