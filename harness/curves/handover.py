"""Measured runs handed to a Submission API (the portal's ``/submission-api`` or the
official service) as ``endpoints-submission-cli runs create`` hands them: the official
client package's own parser, archive and API calls, a dependency as its builder is.

Each run is registered, then its folder packed and uploaded through the signed URL the
service hands out; a run whose upload fails is deleted again, as the CLI rolls back, so
the service never keeps a run without its archive.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from endpoints_submission_cli.exceptions import APIError, ArchiveError, RunFolderError
from endpoints_submission_cli.runs import api as runs_api
from endpoints_submission_cli.runs.parser import build_archive, parse_run_folder

# The official client reads the service's address from this variable on every call.
_ADDRESS_VARIABLE = "MLPERF_API_BASE_URL"


class HandoverFailed(Exception):
    """A run could not be registered; *registered* are those that were, before it."""

    def __init__(self, message: str, registered: list[RegisteredRun]) -> None:
        super().__init__(message)
        self.registered = registered


@dataclass(frozen=True)
class RegisteredRun:
    run_dir: Path
    run_id: str


def submission_api_address(text: str) -> str:
    """*text* as a Submission API address (``http(s)://host[:port][/path]``, no query, no
    credentials), without its trailing slash; ValueError saying what is wrong."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{text!r} is not an http(s) address, e.g. http://127.0.0.1:8000/submission-api"
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"{text!r}: give the address alone (no credentials, query or fragment)")
    return text.strip().rstrip("/")


@contextmanager
def _service_at(address: str) -> Iterator[None]:
    before = os.environ.get(_ADDRESS_VARIABLE)
    os.environ[_ADDRESS_VARIABLE] = address
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_ADDRESS_VARIABLE, None)
        else:
            os.environ[_ADDRESS_VARIABLE] = before


def register_runs(
    run_dirs: Sequence[Path], address: str, token: str, *, is_test: bool = False
) -> list[RegisteredRun]:
    """Register every run folder with the service at *address*, in order."""
    registered: list[RegisteredRun] = []
    with _service_at(submission_api_address(address)):
        for run_dir in run_dirs:
            try:
                registered.append(_register(run_dir, token, is_test))
            except (APIError, ArchiveError, RunFolderError, OSError) as exc:
                raise HandoverFailed(f"{run_dir}: {exc}", registered) from exc
    return registered


def _register(run_dir: Path, token: str, is_test: bool) -> RegisteredRun:
    payload = parse_run_folder(run_dir)
    if is_test:
        payload["is_test"] = True
    run_id = str(runs_api.create_run(token, payload)["id"])
    try:
        with tempfile.TemporaryDirectory(prefix="harness-handover-") as tmp:
            archive = build_archive(run_dir, Path(tmp) / f"{run_dir.name}.tar.gz")
            runs_api.upload_run_archive(token, run_id, archive)
    except BaseException:
        with suppress(APIError):  # the upload's error is the one to tell
            runs_api.delete_run(token, run_id)
        raise
    return RegisteredRun(run_dir, run_id)
