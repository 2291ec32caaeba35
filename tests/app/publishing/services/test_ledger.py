"""The record's ledger over the real services: every change to the public record is a
signed entry chained to the one before, checkable with openssl alone (issue 50)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import select

from app.db.models import Publication, RecordEntry, Submission
from app.db.session import Database
from app.publishing.domain.ledger import (
    SignedEntry,
    read_entry,
    read_keys,
    verify_chain,
)
from app.publishing.services.ledger import rotate_key
from app.publishing.services.signing import ledger_key, signing_keys
from app.review.services.decisions import decide
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.rows import must
from tests.support.services import require
from tests.support.submissions import pt, release_then_invalidate, submit

pytestmark = pytest.mark.postgresql


def _chain(database: Database) -> list[RecordEntry]:
    with database.session() as session:
        return list(session.scalars(select(RecordEntry).order_by(RecordEntry.seq)))


def _keys(database: Database) -> dict[str, Ed25519PublicKey]:
    with database.session() as session:
        return dict(
            read_keys(
                {
                    "keys": [
                        {"key_id": k.key_id, "public_key_pem": k.public_pem}
                        for k in signing_keys(session)
                    ]
                }  # fmt: skip
            )
        )


def test_each_change_to_the_record_is_a_signed_entry_chained_to_the_last(
    database: Database, settings: Settings, good_archive: Path
) -> None:
    release_then_invalidate(database, settings, good_archive)
    chain = _chain(database)
    kinds = [e.kind for e in chain]
    assert kinds[0] == "genesis"
    assert kinds.count("release") == 2 and kinds[-1] == "invalidation"
    assert "publication" in kinds and kinds.index("publication") < kinds.index("release")
    problems, last = verify_chain([SignedEntry(e.body, e.signature) for e in chain],
                                  _keys(database))  # fmt: skip
    assert problems == [] and last is not None and last["seq"] == len(chain)
    # A release names what its cohort gained: the result, its id and every point.
    release = read_entry(next(e for e in chain if e.subject == "release/2026-12-C1").body)
    [version] = release["change"]["versions"]
    [curve] = version["results"]
    assert curve["status"] == "verified" and curve["result_id"]
    assert {"system_tps", "concurrency", "dir"} <= set(curve["points"][0])
    assert len(version["bundle_sha256"]) == 64
    # The invalidation keeps the result's id and says why.
    invalidated = read_entry(chain[-1].body)["change"]
    assert invalidated["status"] == "invalidated" and invalidated["reason"] == "tokens miscounted"
    assert invalidated["results"][0]["result_id"] == curve["result_id"]
    assert "Invalidated" in invalidated["results"][0]["tags"]


def test_a_changed_dropped_or_reordered_entry_breaks_the_chain(
    database: Database, settings: Settings, good_archive: Path
) -> None:
    release_then_invalidate(database, settings, good_archive)
    signed = [SignedEntry(e.body, e.signature) for e in _chain(database)]
    keys = _keys(database)
    release = next(n for n, e in enumerate(signed) if b'"kind":"release"' in e.body)
    body = signed[release].body
    at = body.index(b'"system_tps":') + len(b'"system_tps":')
    digit = body[at : at + 1]
    changed = body[:at] + (b"9" if digit != b"9" else b"8") + body[at + 1 :]
    tampered = [*signed[:release], SignedEntry(changed, signed[release].signature),
                *signed[release + 1 :]]  # fmt: skip
    problems, _ = verify_chain(tampered, keys)
    assert any("signature does not hold" in p for p in problems)
    assert any("names" in p for p in problems)  # and the next entry's link no longer fits
    dropped, _ = verify_chain(signed[:release] + signed[release + 1 :], keys)
    assert any("numbered" in p for p in dropped)
    swapped = [*signed[:release], signed[release + 1], signed[release], *signed[release + 2 :]]
    assert verify_chain(swapped, keys)[0]


def test_an_entry_verifies_with_openssl_alone(
    database: Database, settings: Settings, good_archive: Path, tmp_path: Path
) -> None:
    require(shutil.which("openssl") is not None, "the openssl command")
    release_then_invalidate(database, settings, good_archive)
    entry = _chain(database)[-1]
    (tmp_path / "key.pem").write_text(ledger_key(settings).public_pem)
    (tmp_path / "entry.json").write_bytes(entry.body)
    (tmp_path / "entry.sig").write_bytes(entry.signature)
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "key.pem", "-rawin",
               "-in", "entry.json", "-sigfile", "entry.sig"]  # fmt: skip
    ok = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "Signature Verified Successfully" in ok.stdout, ok
    (tmp_path / "entry.json").write_bytes(entry.body.replace(b"invalidat", b"Invalidat", 1))
    bad = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert bad.returncode != 0


def test_a_rotation_is_signed_by_the_key_it_retires(
    database: Database, settings: Settings, good_archive: Path
) -> None:
    release_then_invalidate(database, settings, good_archive)
    old = ledger_key(settings).key_id
    with database.session() as session:
        rotation = rotate_key(session, settings, pt(2027, 1, 9))
        session.commit()
    new = ledger_key(settings).key_id
    assert new != old and rotation.key_id == old
    assert read_entry(rotation.body)["change"]["new_key_id"] == new
    # The next change is signed by the new key, and the chain holds across the rotation.
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2027-01-C1",
                       at=pt(2027, 1, 20, 8))  # fmt: skip
        session.commit()
    chain = _chain(database)
    assert chain[-1].seq == rotation.seq + 1 and chain[-1].key_id == new
    keys = _keys(database)
    assert set(keys) == {old, new}
    problems, _ = verify_chain([SignedEntry(e.body, e.signature) for e in chain], keys)
    assert problems == []
    with database.session() as session:
        retired = {k.key_id: k.retired_at for k in signing_keys(session)}
    assert retired[old] is not None and retired[new] is None


def test_a_key_file_replaced_without_rotation_is_recorded_unvouched(
    database: Database, settings: Settings, good_archive: Path, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    sid = submit(database, settings, good_archive, mode="provisional")
    with database.session() as session:
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
    supplied = tmp_path / "operator.pem"
    supplied.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )  # fmt: skip
    )
    operator = settings.model_copy(update={"release_signing_key_file": supplied})
    with database.session() as session:
        decide(session=session, settings=operator, submission=must(session.get(Submission, sid)),
               action="reject", actor="chair", reason="fails §6.2", at=pt(2026, 12, 3))  # fmt: skip
        session.commit()
        assert session.scalars(select(Publication.removed_at)).all()
    chain = _chain(database)
    assert [e.kind for e in chain[-2:]] == ["key-change", "removal"]
    change = read_entry(chain[-2].body)["change"]
    assert change["vouched"] is False and change["new_key_id"] == ledger_key(operator).key_id
    problems, _ = verify_chain([SignedEntry(e.body, e.signature) for e in chain], _keys(database))
    assert problems == []
    # The operator's key is the operator's to rotate.
    with database.session() as session, pytest.raises(Exception, match="operator"):
        rotate_key(session, operator)


def test_integers_beyond_json_s_safe_range_are_kept_as_strings() -> None:
    from app.publishing.domain.ledger import canonical

    body = canonical({"seed": 10487924139932647040, "n": 3, "x": 0.5, "ok": True})
    assert json.loads(body) == {"n": 3, "ok": True, "seed": "10487924139932647040", "x": 0.5}
