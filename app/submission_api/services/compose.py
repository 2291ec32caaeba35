"""A submission composed from runs in the browser, as the official CLI composes it: the
runs' archives built into a bundle by the official builder and checked by the official
checker (in the budgeted child, ``app.submission_api.domain.composer``); only a bundle
the checker passes is registered, and it then enters the same intake and checks as one
the CLI uploads."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.refusals import Kind, Refused
from app.db.models import ApiSubmission
from app.jobs.queue import JobQueue
from app.settings import Settings
from app.storage import archive_key, artifact_store
from app.submission_api.domain.composer import BUNDLE
from app.submission_api.services.bundles import take_bundle
from app.submission_api.services.records import SubmissionCreate, active_runs, create_record
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.services.reading import work_in_child
from app.submissions.services.storage import receive_local

COMPOSER = "app.submission_api.domain.composer:compose"


class CheckerRefused(Refused):
    """The official checker refused the bundle built from the chosen runs (as the CLI
    stops before registering anything); ``errors`` are its words."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(
            "checker-refused",
            f"the official checker refused the bundle built from these runs ({len(errors)} "
            "error(s)); nothing was registered",
            Kind.INVALID,
        )
        self.errors = errors


def compose_submission(
    *, session: Session, settings: Settings, queue: JobQueue, who: Principal,
    body: SubmissionCreate, now: dt.datetime,
) -> ApiSubmission:  # fmt: skip
    """Register the submission, build and check its bundle, and take it; raises (and the
    caller rolls back) when the runs do not build a bundle the checker passes."""
    record = create_record(session=session, settings=settings, who=who, body=body, now=now)
    store = artifact_store(settings)
    archives = [
        [run.public_id, str(store.local_path(archive_key(run.archive.sha256)))]
        for run in active_runs(record)
        if run.archive is not None
    ]
    request = {
        "archives": archives,
        "division": record.division,
        "availability": record.availability,
        "submission_id": record.public_id,
        "target_availability_date": (
            record.target_availability_date.isoformat() if record.target_availability_date else None
        ),  # fmt: skip
    }
    try:
        built = work_in_child(settings, COMPOSER, request)
    except ArchiveRejected as exc:
        raise Refused(exc.code, exc.message, exc.kind) from exc
    try:
        if built.facts["errors"]:
            raise CheckerRefused(built.facts["errors"])
        received = receive_local(built.work / BUNDLE, settings.tmp_dir, settings.max_upload_bytes)
    finally:
        built.discard()
    take_bundle(session=session, settings=settings, queue=queue, record=record,
                received=received, now=now)  # fmt: skip
    return record
