"""The pinned official CLI (``endpoints-submission-cli``) and its MCP server against a
running portal, with every byte kept on loopback.

The CLI asks PyPI for its latest release on every command: a fresh version cache in a
``HOME`` of its own answers instead, with ``https_proxy`` pointing at a closed loopback
port so that a look past the cache fails at once, and ``NO_PROXY`` letting the CLI reach
the portal (and the object store's presigned URLs) directly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import traceback
import urllib.request
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx

from tests.support.portal import RunningPortal

CLI = str(Path(sys.executable).with_name("endpoints-submission-cli"))
MCP = str(Path(sys.executable).with_name("endpoints-submission-mcp"))
CLOSED_PORT = "http://127.0.0.1:9"


def cli_environment(home: Path, base_url: str, token: str) -> dict[str, str]:
    cache = home / ".cache" / "endpoints-submission-cli"
    cache.mkdir(parents=True, exist_ok=True)
    latest = version("endpoints-submission-cli")
    (cache / "version_check.json").write_text(json.dumps({"latest": latest, "ts": time.time()}))
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(
        {
            "HOME": str(home),
            "MLPERF_API_BASE_URL": base_url,
            "PRISM_USER_API_TOKEN": token,
            "https_proxy": CLOSED_PORT,
            "HTTPS_PROXY": CLOSED_PORT,
            "http_proxy": CLOSED_PORT,
            "HTTP_PROXY": CLOSED_PORT,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "COLUMNS": "200",
        }
    )
    return env


@dataclass
class OfficialCli:
    """The CLI as one organisation's submitter runs it against *portal*."""

    portal: RunningPortal
    home: Path
    workdir: Path

    def env(self, as_: str = "submitter") -> dict[str, str]:
        return cli_environment(
            self.home, f"{self.portal.url}/submission-api", self.portal.tokens[as_]
        )

    def run(
        self, *args: str, as_: str = "submitter", ok: bool = True, script: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """The command's code run in this process, as click's runner runs it: each start
        of the console script costs a second of CPU importing the CLI and its checker, and
        a workflow runs twenty commands. *script*: started as a submitter's shell starts
        it (the console script, in a process of its own)."""
        if script:
            done = subprocess.run(
                [CLI, *args], env=self.env(as_), cwd=self.workdir, capture_output=True,
                text=True, timeout=300,
            )  # fmt: skip
        else:
            done = self._in_process(list(args), as_)
        if ok:
            assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done

    def _in_process(self, args: list[str], as_: str) -> subprocess.CompletedProcess[str]:
        from click.testing import CliRunner
        from endpoints_submission_cli.main import app

        wanted = self.env(as_)
        # The runner sets these for the command and puts back what was there after it.
        changes: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
        changes.update({k: v for k, v in wanted.items() if os.environ.get(k) != v})
        here = Path.cwd()
        os.chdir(self.workdir)  # the CLI writes its checker's report where it runs
        try:
            result = CliRunner().invoke(app, args, env=changes)
        finally:
            os.chdir(here)
            # The CLI's version check opens a URL: urllib keeps the opener it built then,
            # with the closed-port proxy of the CLI's environment, for this whole process.
            urllib.request.install_opener(None)
        stderr = result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            stderr += "".join(traceback.format_exception(result.exception))
        return subprocess.CompletedProcess([CLI, *args], result.exit_code, result.stdout, stderr)

    def json(self, *args: str, as_: str = "submitter") -> Any:
        return json.loads(self.run(*args, "--json", as_=as_).stdout)

    def create_run(self, folder: Path, taken: bool = True) -> str:
        """Register the run folder; *taken*: wait until the portal took its archive (at
        once on the portal's own URLs; through S3, once a worker has read it)."""
        said = self.run("runs", "create", "--path", str(folder)).stderr
        found = re.search(r"Run created:\s*([0-9a-f]{32})", said)
        assert found is not None, said
        run_id = found.group(1)
        # Waiting is the test's, not the submitter's: asked over HTTP, not by starting the
        # CLI again (a second of CPU each time).
        deadline = time.monotonic() + 60
        key = {"X-API-Key": self.portal.tokens["submitter"]}
        url = f"{self.portal.url}/submission-api/runs/{run_id}"
        while taken and not httpx.get(url, headers=key, timeout=30).json()["is_valid"]:
            assert time.monotonic() < deadline, f"run {run_id}'s archive was never taken"
            time.sleep(0.3)
        return run_id

    def create_submission(self, run_ids: list[str], *extra: str) -> str:
        args = [f"--run-ids={run_id}" for run_id in run_ids]
        said = self.run("submissions", "create", "--division", "standardized", "--scenario",
                        "cop", "--availability", "available", *args, *extra).stderr  # fmt: skip
        found = re.search(r"Submission created:\s*([0-9a-f]{32})", said)
        assert found is not None, said
        return found.group(1)


def registered_run(database: Any, settings: Any, email: str, folder: Path, now: Any = None) -> str:
    """A run registered and given its archive as the CLI's ``runs create`` would (its own
    parser and archive builder), through the services: the run's id."""
    import datetime as dt

    from endpoints_submission_cli.runs.parser import build_archive, parse_run_folder

    from app.accounts.services.accounts import principal_of_user, user_by_email
    from app.measurements.services.registry import RunCreate, register_run, take_run_archive
    from app.submissions.services.storage import receive_local

    payload = parse_run_folder(folder)
    archive = build_archive(folder, folder.parent / f"{folder.name}.tar.gz")
    with database.session() as session:
        user = user_by_email(session, email)
        assert user is not None
        run = register_run(
            session=session, settings=settings, who=principal_of_user(user),
            payload=RunCreate.model_validate(payload), now=now or dt.datetime.now(dt.UTC),
        )  # fmt: skip
        received = receive_local(archive, settings.tmp_dir, settings.max_upload_bytes)
        take_run_archive(session=session, settings=settings, run=run, received=received)
        session.commit()
        return run.public_id
