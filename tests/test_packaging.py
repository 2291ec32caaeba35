"""The portal as a package: the wheel carries the templates, static files and migrations,
and an install of it alone, far from the checkout, migrates, serves and checks."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from app.cli.supervisor import end_group
from app.demo.bundles import BundleFactory
from tests.support import PROJECT_ROOT
from tests.support.portal import wait_until_serving
from tests.support.services import listening_socket


def test_every_package_of_the_checkout_is_in_the_wheel() -> None:
    listed = set(
        tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]
    )
    on_disk = {
        ".".join(init.parent.relative_to(PROJECT_ROOT).parts)
        for top in ("app", "worker", "harness")
        for init in (PROJECT_ROOT / top).rglob("__init__.py")
    }
    bundled = {"app.bundled.templates", "app.bundled.static", "app.bundled.migrations",
               "app.bundled.migrations.versions"}  # fmt: skip
    assert listed == on_disk | bundled


def _run(*args: str, cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed, and beside it the pinned
    dependencies of the environment running these tests: their folder is on its path
    (not the checkout: the editable install's hook is not loaded from there), and
    ``pip check`` proves they meet what the wheel declares. Installing them all again
    from the lock, as ``make install`` does on every fresh clone, took two minutes here."""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"),
         str(PROJECT_ROOT), cwd=base, env=env)  # fmt: skip
    [wheel] = (base / "dist").glob("endpoints_portal-*.whl")
    venv = base / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=base, env=env)
    python = str(venv / "bin/python")
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                cwd=base, env=env).strip()  # fmt: skip
    (Path(site) / "pinned-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Nothing byte-compiled at install (the first import does what it needs).
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    _run(*pip, "install", "-q", "--no-deps", "--no-compile", str(wheel), cwd=base, env=env)
    _run(*pip, "check", cwd=base, env=env)
    return venv


@pytest.mark.slow
def test_the_installed_wheel_migrates_serves_and_checks(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"  # nowhere near the checkout
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "DATABASE", "REDIS"))}
    # No demo: loading it runs the pipeline for six submissions (tests/app/demo has it).
    env |= {"ENDPOINTS_PORTAL_DATA_DIR": str(home / "data"), "PYTHONUNBUFFERED": "1",
            "ENDPOINTS_PORTAL_DEMO_DATA": "0"}  # fmt: skip
    where = _run(str(installed / "bin/python"), "-c", "import app; print(app.__file__)",
                 cwd=home, env=env)  # fmt: skip
    assert Path(where.strip()).is_relative_to(installed)

    portal = [str(installed / "bin/endpoints-portal")]
    _run(*portal, "migrate", cwd=home, env=env)
    user = ["sub@acme.example"]
    _run(*portal, "users", "create", "--role", "submitter", "--org", "Acme Corp",
         "--password-stdin", *user, cwd=home, env=env, stdin="a long password\n")  # fmt: skip
    token = _run(*portal, "users", "token", "--name", "ci", *user, cwd=home, env=env).strip()

    log = (home / "serve.log").open("wb")
    with listening_socket() as listener:
        fd = listener.fileno()
        serve = subprocess.Popen(
            [*portal, "serve", "--fd", str(fd)], cwd=home, env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(fd,),
        )  # fmt: skip
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        wait_until_serving(url, serve, home / "serve.log")
        with httpx.Client(base_url=url, timeout=30) as client:
            # Templates and static files from the wheel.
            page = client.get("/rules")
            assert page.status_code == 200 and 'id="rule-path-traversal"' in page.text
            assert client.get("/static/app.css").status_code == 200
            assert client.get("/static/__init__.py").status_code == 404
            # The worker of the installed package checks an upload.
            archive = BundleFactory(submission_id="sub-wheel").archive(tmp_path / "b.tar.gz")
            with archive.open("rb") as fh:
                created = client.post(
                    "/api/v1/submissions",
                    files={"file": ("b.tar.gz", fh, "application/gzip")},
                    headers={"Authorization": f"Bearer {token}"},
                )
            assert created.status_code == 201, created.text
            public_id = created.json()["id"]
            deadline = time.monotonic() + 300  # against a hang, not a speed limit
            while True:
                body = client.get(
                    f"/api/v1/submissions/{public_id}",
                    headers={"Authorization": f"Bearer {token}"},
                ).json()
                if body["finished"]:
                    break
                assert time.monotonic() < deadline, (home / "serve.log").read_text()[-4000:]
                time.sleep(0.5)
            assert body["state"] == "passed_checks", body
    finally:
        end_group(serve, 40)
