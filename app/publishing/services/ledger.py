"""Appending to the record's ledger (app.publishing.domain.ledger), in the transaction
that changes the record: a version written, a result's record removed, a cohort released,
the signing key rotated. An entry holds what changed as the public saw it (each curve
with its result id, organisation, system, benchmark, status and tags, every point's
figures), the SHA-256 of the bundle archive and of each re-count record it rests on, and
the digest of the entry before it; the chain starts with a genesis entry that holds what
the record had before it had a ledger."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.core.lifecycle import RecordStatus
from app.core.times import utc_text
from app.core.views import Timestamp
from app.db.models import (
    CohortRelease,
    Publication,
    PublishedCurve,
    RecordEntry,
    RequestLogRow,
    Submission,
    utcnow,
)
from app.publishing.domain import ledger
from app.publishing.domain.snapshot import CurveSnapshot, read_snapshot
from app.publishing.domain.standing import SystemIdentity, tags_of
from app.publishing.services.signing import (
    LedgerKey,
    ledger_key,
    register_key,
    retire_key,
    rotated_key,
)
from app.settings import Settings

_LOCK = 50_050  # PostgreSQL: one appender at a time, so the chain never forks
_LEFT = frozenset({RecordStatus.WITHDRAWN, RecordStatus.INVALIDATED, RecordStatus.REMOVED})


def head(session: Session) -> RecordEntry | None:
    return session.scalar(select(RecordEntry).order_by(RecordEntry.seq.desc()).limit(1))


def _append(
    session: Session,
    key: LedgerKey,
    *,
    kind: str,
    subject: str,
    at: dt.datetime,
    summary: str,
    change: dict[str, Any],
    signed_by: LedgerKey | None = None,
) -> RecordEntry:
    last = head(session)
    signer = signed_by or key
    document = {
        "schema": ledger.ENTRY_SCHEMA,
        "seq": (last.seq if last else 0) + 1,
        "previous": last.digest if last else None,
        "key_id": signer.key_id,
        "kind": kind,
        "subject": subject,
        "at": utc_text(at),
        "summary": summary,
        "change": change,
    }
    body = ledger.canonical(document)
    register_key(session, signer, at)
    entry = RecordEntry(
        seq=document["seq"], kind=kind, subject=subject, at=at, key_id=signer.key_id,
        digest=ledger.sha256_hex(body), body=body, signature=signer.sign(body),
    )  # fmt: skip
    session.add(entry)
    session.flush()
    return entry


def _ready(session: Session, settings: Settings, at: dt.datetime) -> LedgerKey:
    """The key for the next entry, once the chain has what must come before it: its
    genesis, and the record of a key file replaced since the last entry."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
    key = ledger_key(settings)
    last = head(session)
    if last is None:
        _append(session, key, kind=ledger.GENESIS, subject="genesis", at=at,
                summary="The ledger starts: what the public record held before it.",
                change=_genesis(session))  # fmt: skip
    elif last.key_id != key.key_id and _rotated_to(last) != key.key_id:
        _append(session, key, kind=ledger.KEY_CHANGE, subject=f"key/{key.key_id}", at=at,
                summary=f"The signing key file was replaced: {last.key_id} by {key.key_id} "
                "(not vouched for by the key it replaces).",
                change={"previous_key_id": last.key_id, "new_key_id": key.key_id,
                        "public_key_pem": key.public_pem, "vouched": False})  # fmt: skip
        retire_key(session, last.key_id, at)
    return key


def _rotated_to(entry: RecordEntry) -> str | None:
    if entry.kind != ledger.KEY_ROTATION:
        return None
    return str(ledger.read_entry(entry.body)["change"]["new_key_id"])


# --- what an entry says of a version -----------------------------------------------------


def _recount_digests(session: Session, logs: set[int]) -> dict[int, str]:
    if not logs:
        return {}
    rows = session.execute(
        select(RequestLogRow.id, RequestLogRow.data).where(RequestLogRow.id.in_(logs))
    )
    return {log_id: ledger.sha256_hex(data) for log_id, data in rows}


def curve_document(
    curve: PublishedCurve, snapshot: CurveSnapshot, status: str, recounts: dict[int, str]
) -> dict[str, Any]:
    """A published curve (its *snapshot* read) as an entry holds it."""
    return {
        "result_id": curve.result_id,
        "organization": curve.organization,
        "system": curve.system_name,
        "system_dir": snapshot.system_dir,
        "benchmark": curve.benchmark_model,
        "dataset": curve.dataset,
        "division": curve.division,
        "availability": curve.availability,
        "scenario": curve.scenario,
        "available_by": curve.available_by.isoformat() if curve.available_by else None,
        "status": status,
        "tags": tags_of(
            status=status,
            availability=curve.availability,
            available_by=curve.available_by,
            power_estimated=curve.power_estimated,
            superseded_by=None,
        ),  # fmt: skip
        "accelerator_model": curve.accelerator_model,
        "accelerator_count": curve.accelerator_count,
        "provisioned_power_kw": curve.provisioned_power_kw,
        "points": [p.model_dump(mode="json", exclude_none=True) for p in snapshot.points],
        "invalidated_points": [p.model_dump(mode="json") for p in snapshot.invalidated_points],
        "recount_records": [
            {
                "point": p.dir,
                "request_log": p.recount.request_log,
                "sha256": recounts.get(p.recount.request_log),
            }  # fmt: skip
            for p in snapshot.points
            if p.recount is not None
        ],
    }


def version_document(session: Session, publication: Publication) -> dict[str, Any]:
    """A version of a result's record as an entry holds it."""
    status = RecordStatus(publication.status).value
    read = [(c, read_snapshot(c.snapshot_version, c.data)) for c in publication.curves]
    logs = {p.recount.request_log for _c, snap in read for p in snap.points if p.recount}
    recounts = _recount_digests(session, logs)
    submission = publication.submission
    return {
        "submission": submission.public_id,
        "organization": submission.organization.name,
        "cohort": publication.cohort,
        "status": status,
        "reason": publication.description,
        "bundle_sha256": submission.archive.sha256 if submission.archive else None,
        "results": [curve_document(c, snap, status, recounts) for c, snap in read],
    }


def _facts(publication: Publication) -> ledger.VersionFacts:
    curves = publication.curves
    return ledger.VersionFacts(
        status=RecordStatus(publication.status).value,
        classes=tuple((c.division, c.availability, c.scenario) for c in curves),
        available_by=tuple(c.available_by.isoformat() if c.available_by else None for c in curves),
        invalidated_points=sum(len(c.data.get("invalidated_points") or []) for c in curves),
    )


def seal_version(
    session: Session, settings: Settings, publication: Publication, before: Publication | None
) -> RecordEntry:
    """The entry for a version just written (*before*: the version it follows)."""
    key = _ready(session, settings, publication.published_at)
    kind = ledger.change_kind(_facts(before) if before else None, _facts(publication))
    document = version_document(session, publication)
    submission = publication.submission
    ids = ", ".join(sorted(c.result_id for c in publication.curves if c.result_id)) or "no id"
    why = f". {publication.description}" if publication.description else ""
    was = RecordStatus(before.status).value if before else None
    entry = _append(
        session, key, kind=kind, subject=f"{kind}/{submission.public_id}",
        at=publication.published_at,
        summary=f"{submission.organization.name} ({ids}): {kind}, {document['status']} "
        f"in {publication.cohort}{why}",
        change={**document, "previous_status": was},
    )  # fmt: skip
    if document["status"] == "verified" and (before is None or before.status != "verified"):
        _seal_supersession(session, key, publication)
    return entry


def _identity(curve: PublishedCurve) -> SystemIdentity:
    return SystemIdentity.of(curve.organization, curve.system_name, curve.benchmark_model,
                             curve.dataset, curve.division, curve.scenario)  # fmt: skip


def _seal_supersession(session: Session, key: LedgerKey, publication: Publication) -> None:
    """A result finalized now supersedes the current results of the same system that
    came before it (rules §11.8): one entry naming them."""
    mine = {_identity(c) for c in publication.curves}
    rows = session.execute(
        select(PublishedCurve, Publication.submission_id, Publication.status)
        .join(Publication, Publication.id == PublishedCurve.publication_id)
        .where(
            Publication.in_record(),
            Publication.submission_id != publication.submission_id,
            Publication.cohort <= publication.cohort,
            PublishedCurve.benchmark_model.in_({c.benchmark_model for c in publication.curves}),
        )
        .order_by(Publication.submission_id, Publication.cohort, Publication.id)
    ).all()
    latest: dict[int, list[tuple[PublishedCurve, RecordStatus]]] = {}
    for curve, submission_id, status in rows:
        latest.setdefault(submission_id, [])
        if (
            latest[submission_id]
            and latest[submission_id][0][0].publication_id != curve.publication_id
        ):
            latest[submission_id] = []  # a newer version of that result
        latest[submission_id].append((curve, RecordStatus(status)))
    gone = [
        {
            "result_id": c.result_id,
            "organization": c.organization,
            "system": c.system_name,
            "benchmark": c.benchmark_model,
        }  # fmt: skip
        for versions in latest.values()
        for c, status in versions
        if status not in _LEFT and _identity(c) in mine
    ]
    if not gone:
        return
    ids = sorted(c.result_id for c in publication.curves if c.result_id)
    subject = f"supersession/{publication.submission.public_id}"
    _append(
        session, key, kind=ledger.SUPERSESSION, subject=subject,
        at=publication.published_at,
        summary=f"{', '.join(ids)} supersede(s) {', '.join(str(g['result_id']) for g in gone)} "
        "(rules §11.8).",
        change={"by": ids, "cohort": publication.cohort, "superseded": gone},
    )  # fmt: skip


def seal_removal(
    session: Session,
    settings: Settings,
    submission: Submission,
    versions: list[Publication],
    at: dt.datetime,
    why: str,
) -> RecordEntry:
    """The entry for a result whose record was removed (rejected, or withdrawn before
    finalization: rules §11.7): the *versions* no view shows any more."""
    key = _ready(session, settings, at)
    return _append(
        session, key, kind=ledger.REMOVAL, subject=f"removal/{submission.public_id}", at=at,
        summary=f"{submission.organization.name}: the public record of {submission.public_id} "
        f"was removed ({why}).",
        change={"submission": submission.public_id, "reason": why,
                "versions": [{"cohort": v.cohort, "status": RecordStatus(v.status).value,
                              "result_ids": sorted(c.result_id for c in v.curves if c.result_id)}
                             for v in versions]},
    )  # fmt: skip


def seal_release(session: Session, settings: Settings, release: CohortRelease) -> RecordEntry:
    """The entry for a cohort's release: every version its record gained."""
    key = _ready(session, settings, release.published_at)
    versions = session.scalars(
        select(Publication)
        .where(Publication.cohort == release.cohort, Publication.in_record())
        .order_by(Publication.id)
    ).all()
    return _append(
        session, key, kind=ledger.RELEASE, subject=f"release/{release.cohort}",
        at=release.published_at,
        summary=f"Cohort {release.cohort} released by {release.published_by}: "
        f"{len(versions)} version(s) of results joined its record.",
        change={"cohort": release.cohort, "released_by": release.published_by,
                "versions": [version_document(session, v) for v in versions]},
    )  # fmt: skip


def rotate_key(session: Session, settings: Settings, at: dt.datetime | None = None) -> RecordEntry:
    """Replace the portal's signing key, recorded in the chain by an entry the old key
    signs: whoever trusts the old key can trust the new one."""
    at = at or utcnow()
    _ready(session, settings, at)
    old, new = rotated_key(settings)
    entry = _append(
        session, new, kind=ledger.KEY_ROTATION, subject=f"key/{new.key_id}", at=at,
        summary=f"The signing key {old.key_id} is retired; {new.key_id} signs from the next entry.",
        change={"previous_key_id": old.key_id, "new_key_id": new.key_id,
                "public_key_pem": new.public_pem, "vouched": True},
        signed_by=old,
    )  # fmt: skip
    register_key(session, new, at)
    retire_key(session, old.key_id, at)
    return entry


def _genesis(session: Session) -> dict[str, Any]:
    versions = session.execute(
        select(
            Publication.cohort,
            Publication.status,
            Submission.public_id,
            PublishedCurve.result_id,
            PublishedCurve.data,
        )  # fmt: skip
        .join(Submission, Submission.id == Publication.submission_id)
        .join(PublishedCurve, PublishedCurve.publication_id == Publication.id)
        .where(Publication.in_record())
        .order_by(Publication.id, PublishedCurve.id)
    ).all()
    releases = session.execute(
        select(CohortRelease.cohort, CohortRelease.published_at).order_by(CohortRelease.cohort)
    ).all()
    return {
        "releases": [{"cohort": c, "at": utc_text(at)} for c, at in releases],
        "curves": [
            {
                "submission": public_id,
                "cohort": cohort,
                "status": RecordStatus(status).value,
                "result_id": result_id,
                "sha256": ledger.sha256_hex(ledger.canonical(data)),
            }  # fmt: skip
            for cohort, status, public_id, result_id, data in versions
        ],
    }


# --- reading the chain --------------------------------------------------------------------


class EntryView(BaseModel):
    """An entry of the ledger, listed: its bytes and signature are at its links."""

    seq: int
    kind: str = Field(description="what changed: release, withdrawal, invalidation, …")
    subject: str = Field(description="release/<cohort>, or <kind>/<submission>")
    at: Timestamp = Field(description="when the change was made")
    summary: str
    key_id: str = Field(
        description="the key that signed it (/.well-known/release-signing-keys.json)"
    )
    digest: str = Field(description="SHA-256 of its canonical bytes: the next entry names it")
    previous: str | None = Field(description="the digest of the entry before it")
    links: dict[str, str]

    @classmethod
    def of(cls, entry: RecordEntry) -> EntryView:
        document = ledger.read_entry(entry.body)
        base = f"/api/v1/record/entries/{entry.seq}"
        return cls(
            seq=entry.seq, kind=entry.kind, subject=entry.subject, at=entry.at,
            summary=document["summary"], key_id=entry.key_id, digest=entry.digest,
            previous=document["previous"], links={"entry": base, "signature": f"{base}/signature"},
        )  # fmt: skip


def entries_after(session: Session, after: int, limit: int) -> list[RecordEntry]:
    """Up to *limit* entries after number *after*, in order."""
    return list(
        session.scalars(
            select(RecordEntry)
            .where(RecordEntry.seq > after)
            .order_by(RecordEntry.seq)
            .limit(limit)
        )
    )


def entry_numbered(session: Session, seq: int) -> RecordEntry | None:
    return session.get(RecordEntry, seq)


def entries_about(session: Session, subjects: set[str]) -> dict[str, RecordEntry]:
    """The latest entry about each of *subjects* (release/<cohort>, <kind>/<submission>)."""
    found: dict[str, RecordEntry] = {}
    if subjects:
        rows = session.scalars(
            select(RecordEntry).where(RecordEntry.subject.in_(subjects)).order_by(RecordEntry.seq)
        )
        for entry in rows:
            found[entry.subject] = entry
    return found
