"""What the archive-reading child does to build a submission's bundle from run archives
in the browser, as the official CLI's ``submissions create`` does (``compose``): the
official builder of the pinned package, then the official checker on what it built,
under the archive-reading budget (the builder extracts each run's archive itself).

The CLI and the browser make the same bundle: the same builder, run on the same
archives; the marker the CLI writes inside ``<submission_id>/`` (``cli_metadata.json``,
which the portal leaves out of a bundle's content digest) names the portal.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

from endpoints_submission_cli.exceptions import SubmissionBuildError
from endpoints_submission_cli.submissions.builder import (
    build_submission_folder,
    create_bundle_archive,
)
from submission_checker.checker import SubmissionChecker

from app.core.fast_yaml import read_official_tools_with_libyaml
from app.core.refusals import Kind, Refused

BUNDLE = "bundle.tar.gz"

read_official_tools_with_libyaml()  # the same values, faster (app.core.fast_yaml)


class ComposeRefused(Refused):
    def __init__(self, message: str) -> None:
        super().__init__("build-refused", message, Kind.INVALID)


def compose(request: dict[str, Any]) -> dict[str, Any]:
    """Build the bundle of *request*'s runs under its ``submission_id``, check it, and
    pack it beside the tree; what the checker refused, if anything."""
    tree = Path(request["tree"])
    tempfile.tempdir = str(tree.parent)  # the builder's own scratch: in this work folder
    archives = [(run_id, Path(path)) for run_id, path in request["archives"]]
    with warnings.catch_warnings():  # the builder warns of differing descriptions
        warnings.simplefilter("ignore")
        try:
            org_dir = build_submission_folder(
                archives, request["division"], request["availability"], tree,
                request["submission_id"],
                target_availability_date=request.get("target_availability_date"),
            )  # fmt: skip
        except SubmissionBuildError as exc:
            raise ComposeRefused(str(exc)) from None
    marker = org_dir / request["submission_id"] / "cli_metadata.json"
    marker.write_text(json.dumps({"command": "create", "composed_by": "endpoints-portal"}))
    report = SubmissionChecker(org_dir / request["submission_id"]).run()
    errors = [f"{r.rule}: {r.message}" for r in report.errors]
    if not errors:
        create_bundle_archive(org_dir, tree.parent / BUNDLE)
    return {"errors": errors}
