"""docker-compose.yml and the Dockerfile, tested for what can be tested without Docker:
their structure, the image's build inputs, and that every service starts from a command
the portal has and the README documents."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli.commands import portal
from app.settings import Settings
from tests.support import PROJECT_ROOT
from tests.support.cli import resolved

COMPOSE = yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
PORTAL_SERVICES = ("migrate", "bucket", "web", "worker", "verdict-worker", "scheduler")
DOCKERFILE = (PROJECT_ROOT / "Dockerfile").read_text()
README = (PROJECT_ROOT / "README.md").read_text()


def test_the_services_a_deployment_needs_are_there() -> None:
    assert set(SERVICES) == {"postgres", "redis", "objects", *PORTAL_SERVICES}
    for name in ("postgres", "redis", "objects", "web"):
        check = SERVICES[name]["healthcheck"]["test"]
        assert check and SERVICES[name]["healthcheck"]["retries"] >= 3, name


def test_one_worker_keeps_to_the_verdicts_and_the_others_take_everything() -> None:
    """A verdict never waits behind a re-count or a reproduction (app/jobs/queue.py)."""
    assert SERVICES["verdict-worker"]["command"][1:3] == ["worker", "--verdicts-only"]
    assert SERVICES["worker"]["command"] == ["endpoints-portal", "worker"]
    assert "deploy" not in SERVICES["verdict-worker"], "scale the others, not this one"


def test_portal_services_share_one_image_and_the_services_but_no_volume() -> None:
    """As on separate hosts: PostgreSQL, Redis, the S3 store and the secret key."""
    images = {SERVICES[name]["image"] for name in PORTAL_SERVICES}
    builds = {SERVICES[name]["build"] for name in PORTAL_SERVICES}
    assert len(images) == 1 and builds == {"."}
    mounted = []
    for name in PORTAL_SERVICES:
        service = SERVICES[name]
        mounted += [volume.split(":")[0] for volume in service.get("volumes", [])]
        env = service["environment"]
        assert env["ENDPOINTS_PORTAL_DATA_DIR"] == "/data"
        assert (
            env["DATABASE_URL"].startswith("postgresql://") and "@postgres:" in env["DATABASE_URL"]
        )
        assert env["REDIS_URL"].startswith("redis://redis:")
        assert env["ENDPOINTS_PORTAL_STORAGE_URL"].startswith("s3://")
        assert env["AWS_ENDPOINT_URL"] == "http://objects:8333"
        assert env["ENDPOINTS_PORTAL_SECRET_KEY"].startswith("${ENDPOINTS_PORTAL_SECRET_KEY:?")
    assert len(mounted) == len(set(mounted)), "a volume shared between portal services"
    assert {"postgres-data", "redis-data", "object-data"} <= set(COMPOSE["volumes"])
    assert "postgres-data:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]
    assert "-s3" in SERVICES["objects"]["command"]


def test_the_object_store_takes_only_the_portals_signed_requests() -> None:
    """Weed with no identity takes any request, a presigned URL past its expiry too: the
    store knows one identity, the portal's credentials."""
    import json

    objects = SERVICES["objects"]
    [mounted] = objects["configs"]
    assert f"-s3.config={mounted['target']}" in objects["command"]
    identities = json.loads(COMPOSE["configs"][mounted["source"]]["content"])["identities"]
    env = SERVICES["web"]["environment"]
    assert [c for i in identities for c in i["credentials"]] == [
        {"accessKey": env["AWS_ACCESS_KEY_ID"], "secretKey": env["AWS_SECRET_ACCESS_KEY"]}
    ]


def test_the_settings_read_the_variables_compose_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SERVICES["web"]["environment"].items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.data_dir == Path("/data")
    assert settings.effective_database_url.startswith("postgresql+psycopg://portal:portal@postgres")
    assert settings.broker_url == "redis://redis:6379/0"


def test_start_order_waits_for_health_migrations_and_the_bucket() -> None:
    assert SERVICES["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert SERVICES["bucket"]["depends_on"]["objects"]["condition"] == "service_healthy"
    for name in ("web", "worker", "scheduler"):
        needs = SERVICES[name]["depends_on"]
        assert needs["migrate"]["condition"] == "service_completed_successfully", name
        assert needs["bucket"]["condition"] == "service_completed_successfully", name
        assert needs["redis"]["condition"] == "service_healthy", name


def test_workers_scale_and_the_scheduler_is_one() -> None:
    worker = SERVICES["worker"]
    assert "container_name" not in worker and "ports" not in worker  # --scale worker=N works
    assert SERVICES["scheduler"].get("deploy", {}).get("replicas", 1) == 1
    web = SERVICES["web"]["command"]
    assert web[:2] == ["endpoints-portal", "web"]
    assert int(web[web.index("--workers") + 1]) > 1
    assert SERVICES["web"]["ports"] == ["8000:8000"]


@pytest.mark.parametrize("name", PORTAL_SERVICES)
def test_each_portal_command_exists_and_is_the_one_the_readme_documents(name: str) -> None:
    command = SERVICES[name]["command"]
    assert command[0] == "endpoints-portal"
    resolved(portal, command[1:])  # a real subcommand, real options
    assert f"endpoints-portal {command[1]}" in README


def test_the_web_command_serves_the_asgi_app_with_the_portals_server_settings() -> None:
    from app import asgi
    from app.web.server import GuardedH11Protocol, server_options

    assert asgi.app.title
    assert server_options(Settings())["http"] is GuardedH11Protocol  # header deadline
    assert "endpoints-portal web" in README
    assert re.search(r'CMD \["endpoints-portal", "web"', DOCKERFILE)


def test_the_image_installs_the_wheel_with_the_pinned_tree() -> None:
    copied = []
    for line in DOCKERFILE.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            parts = shlex.split(line)[1:-1]
            copied += parts
    for path in copied:
        assert (PROJECT_ROOT / path).exists(), path
    for needed in ("app", "worker", "harness", "migrations", "templates", "static",
                   "pyproject.toml", "requirements.lock"):  # fmt: skip
        assert needed in copied, needed
    # The wheel is built, then installed (not an editable tree) with the pinned tree.
    assert "pip wheel" in DOCKERFILE and "-e ." not in DOCKERFILE
    assert "-c requirements.lock /dist/*.whl" in DOCKERFILE
    assert DOCKERFILE.startswith("# ") and "FROM python:3.11" in DOCKERFILE
    assert "USER portal" in DOCKERFILE  # not root
    ignored = (PROJECT_ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "var" in ignored and ".git" in ignored
