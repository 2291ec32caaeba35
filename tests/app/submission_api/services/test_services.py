"""The Submission API's services on a real database: signed URLs that work once and
expire, runs that expire unless pinned or in a live submission, a record that only loses
runs, and the checks' rules for a bundle composed from runs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from app.accounts.services.accounts import principal_of_user, user_by_email
from app.core.lifecycle import CorrectionState
from app.core.refusals import Refused
from app.db.models import ApiSubmission, MeasuredRun, StoredFile
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.measurements.services.registry import (
    RunRefused,
    delete_run,
    expire_runs,
    pin,
)
from app.pipeline import run_checks
from app.review.services.corrections import corrections_of
from app.settings import Settings
from app.submission_api.services.bundles import take_bundle
from app.submission_api.services.records import (
    RecordRefused,
    SubmissionCreate,
    create_record,
    record_view,
    restore_run,
    update_record,
)
from app.submission_api.services.transfers import (
    TransferRefused,
    check_download,
    claim_upload,
    download_url,
    upload_url,
)
from app.submissions.services.storage import receive_local
from tests.support.accounts import ACCOUNTS, create_accounts
from tests.support.corrections import add_docs
from tests.support.fakes import RecordingQueue
from tests.support.official_cli import registered_run
from tests.support.submissions import finalize_unreviewed

NOW = dt.datetime(2026, 12, 7, 18, 0, tzinfo=dt.UTC)


@dataclass
class Org:
    database: Database
    settings: Settings
    queue: RecordingQueue
    runs: list[str]
    folders: list[Path]

    def who(self, key: str = "submitter"):  # type: ignore[no-untyped-def]
        with self.database.session() as session:
            user = user_by_email(session, ACCOUNTS[key][0])
            assert user is not None
            return principal_of_user(user)


@pytest.fixture
def org(database: Database, settings: Settings, tmp_path: Path) -> Iterator[Org]:
    create_accounts(database)
    factory = BundleFactory(system=SystemSpec(name="Acme API"), submission_id="api")
    folders = factory.run_folders(tmp_path / "runs")
    runs = [registered_run(database, settings, ACCOUNTS["submitter"][0], f, NOW) for f in folders]
    yield Org(database, settings, RecordingQueue(), runs, folders)


def _url_parts(url: str) -> tuple[str, str, str]:
    path, _, query = url.partition("?")
    params = dict(pair.split("=") for pair in query.split("&"))
    return path.rsplit("/", 1)[1], params["expires"], params["signature"]


def test_an_upload_url_works_once_and_not_after_it_expires(org: Org) -> None:
    with org.database.session() as session:
        signed = upload_url(session=session, settings=org.settings, queue=org.queue,
                            subject="run", subject_id=org.runs[0], now=NOW)  # fmt: skip
        session.commit()
        grant, expires, signature = _url_parts(signed.url)
        later = NOW + dt.timedelta(seconds=org.settings.signed_upload_s + 1)
        with pytest.raises(TransferRefused, match="expired"):
            claim_upload(session=session, settings=org.settings, grant_id=grant,
                         expires=expires, signature=signature, now=later)  # fmt: skip
        with pytest.raises(TransferRefused, match="signature"):
            claim_upload(session=session, settings=org.settings, grant_id=grant,
                         expires=str(int(expires) + 60), signature=signature, now=NOW)  # fmt: skip
        claim_upload(session=session, settings=org.settings, grant_id=grant, expires=expires,
                     signature=signature, now=NOW)  # fmt: skip
        with pytest.raises(TransferRefused, match="used already"):
            claim_upload(session=session, settings=org.settings, grant_id=grant,
                         expires=expires, signature=signature, now=NOW)  # fmt: skip


def test_a_download_url_names_one_object_for_a_short_while(org: Org) -> None:
    sha = "ab" * 32
    signed = download_url(org.settings, sha, "x.tar.gz", NOW)
    *_, last = signed.url.split("/")
    expires = last.split("expires=")[1].split("&")[0]
    signature = last.split("signature=")[1]
    check_download(org.settings, sha, "x.tar.gz", expires, signature, NOW)
    with pytest.raises(TransferRefused):  # another object under the same signature
        check_download(org.settings, "cd" * 32, "x.tar.gz", expires, signature, NOW)
    with pytest.raises(TransferRefused, match="expired"):
        check_download(org.settings, sha, "x.tar.gz", expires, signature,
                       NOW + dt.timedelta(seconds=org.settings.signed_download_s + 1))  # fmt: skip


def _compose(org: Org, **overrides: object) -> str:
    body = SubmissionCreate(
        **{"division": "standardized", "scenario": "cop", "availability": "available",
           "run_ids": org.runs, **overrides}  # type: ignore[arg-type]
    )  # fmt: skip
    with org.database.session() as session:
        record = create_record(session=session, settings=org.settings, who=org.who(), body=body,
                               now=NOW)  # fmt: skip
        session.commit()
        return record.public_id


def test_runs_expire_unless_pinned_or_in_a_live_submission(org: Org) -> None:
    record = _compose(org, run_ids=org.runs[:1])
    with org.database.session() as session:
        runs = {r.public_id: r for r in session.scalars(select(MeasuredRun))}
        pin(runs[org.runs[1]])
        session.commit()
        later = NOW + dt.timedelta(days=org.settings.run_expiry_days + 1)
        gone = expire_runs(session, org.settings, later)
        session.commit()
        kept = set(session.scalars(select(MeasuredRun.public_id)))
    assert set(gone) == set(org.runs[2:])
    assert kept == set(org.runs[:2])  # in a live submission, and pinned
    with org.database.session() as session:
        run = session.scalar(select(MeasuredRun).where(MeasuredRun.public_id == org.runs[0]))
        with pytest.raises(RunRefused, match="part of a live submission"):
            delete_run(session, org.settings, run)  # type: ignore[arg-type]
        # The archives of the expired runs went with them; the kept ones' stayed.
        assert len(session.scalars(select(StoredFile)).all()) == 2
    assert record


def test_runs_are_only_removed_and_a_target_date_is_the_chairs_to_move(org: Org) -> None:
    sid = _compose(org, embargo_date=NOW + dt.timedelta(days=20))
    with org.database.session() as session:
        record = session.scalar(select(ApiSubmission).where(ApiSubmission.public_id == sid))
        assert record is not None
        with pytest.raises(Refused, match="cannot be added"):
            update_record(session=session, settings=org.settings, who=org.who(), record=record,
                          run_ids=[*org.runs, "f" * 32], target_availability_date=None,
                          embargo_date=None, now=NOW)  # fmt: skip
        with pytest.raises(RecordRefused, match="extension of a Preview window"):
            update_record(session=session, settings=org.settings, who=org.who(), record=record,
                          run_ids=None, target_availability_date=dt.date(2027, 3, 1),
                          embargo_date=None, now=NOW)  # fmt: skip
        update_record(session=session, settings=org.settings, who=org.who(), record=record,
                      run_ids=org.runs[1:], target_availability_date=None,
                      embargo_date=NOW + dt.timedelta(days=30), now=NOW)  # fmt: skip
        view = record_view(session, org.settings, record, NOW)
        assert view.run_ids == org.runs[1:] and view.status == "COMPLIANCE_CHECKING"
        # Before any bundle, the CLI's undo puts the run back.
        restore_run(session=session, who=org.who(), record=record, run_id=org.runs[0])
        assert record_view(session, org.settings, record, NOW).run_ids == org.runs


def test_a_bundle_not_built_from_the_registered_runs_is_a_finding(org: Org, tmp_path: Path) -> None:
    """Registered as Serviced from these runs, sent another system's bundle: both of the
    portal's rules for a bundle composed from runs say so, and the checks reject it."""
    sid = _compose(org, division="serviced")
    other = BundleFactory(
        system=SystemSpec(name="Acme other", peak_tps_per_user=170.0), submission_id=sid
    )
    archive = other.archive(tmp_path / "other.tar.gz")
    with org.database.session() as session:
        record = session.scalar(select(ApiSubmission).where(ApiSubmission.public_id == sid))
        assert record is not None
        received = receive_local(archive, org.settings.tmp_dir, org.settings.max_upload_bytes)
        take_bundle(session=session, settings=org.settings, queue=org.queue, record=record,
                    received=received, now=NOW)  # fmt: skip
        session.commit()
        job = org.queue.sent[-1][0]
        run_checks(session=session, settings=org.settings, job_id=job)
        assert record.submission is not None and record.submission.state == "rejected"
        errors = {
            f.rule for f in record.submission.check_runs[-1].findings if f.severity == "error"
        }
    assert {"bundle-runs", "bundle-declarations"} <= errors


def test_after_finalization_a_rebuilt_bundle_is_a_correction_for_the_chair(
    org: Org, tmp_path: Path
) -> None:
    """The CLI's update after finalization: not a replacement but a correction of the
    non-result content, which waits for its checks and then for the chair (rules §11.7)."""
    sid = _compose(org)
    factory = BundleFactory(system=SystemSpec(name="Acme API"), submission_id=sid)
    first = factory.archive(tmp_path / "first.tar.gz")
    rebuilt = factory.archive(tmp_path / "rebuilt.tar.gz", edits=(add_docs,))
    with org.database.session() as session:
        record = session.scalar(select(ApiSubmission).where(ApiSubmission.public_id == sid))
        assert record is not None

        def send(archive: Path) -> None:
            received = receive_local(archive, org.settings.tmp_dir, org.settings.max_upload_bytes)
            take_bundle(session=session, settings=org.settings, queue=org.queue, record=record,
                        received=received, now=NOW)  # fmt: skip
            session.commit()

        send(first)
        run_checks(session=session, settings=org.settings, job_id=org.queue.sent[-1][0])
        submission = record.submission
        assert submission is not None and submission.state == "passed_checks"
        finalize_unreviewed(session, org.settings, submission, NOW)
        session.commit()
        archive_id = submission.archive_id
        send(rebuilt)
        [correction] = corrections_of(session, submission)
        assert correction.after_finalization and correction.state == CorrectionState.CHECKING
        assert correction.reason == "rebuilt by endpoints-submission-cli"
        assert correction.changed_files == ["docs/calibration.md"]
        assert submission.state == "finalized" and submission.archive_id == archive_id
