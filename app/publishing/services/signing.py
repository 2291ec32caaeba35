"""The ledger's signing key: an Ed25519 private key in a file the operator supplies
(``ENDPOINTS_PORTAL_RELEASE_SIGNING_KEY_FILE``) or one the portal makes on first use in
``<data_dir>/release-signing/current.pem``. The private half never enters the database or
leaves the portal's data; each public half that signs is kept in ``signing_keys``."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused
from app.db.models import SigningKey
from app.publishing.domain.ledger import ALGORITHM, key_id_of, public_pem
from app.settings import Settings


@dataclass(frozen=True)
class LedgerKey:
    private: Ed25519PrivateKey
    key_id: str
    public_pem: str

    @classmethod
    def of(cls, private: Ed25519PrivateKey) -> LedgerKey:
        public = private.public_key()
        return cls(private, key_id_of(public), public_pem(public))

    def sign(self, body: bytes) -> bytes:
        return self.private.sign(body)


def _made_here(settings: Settings) -> Path:
    return settings.data_dir / "release-signing" / "current.pem"


def _pem(private: Ed25519PrivateKey) -> bytes:
    return private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write_new(path: Path, private: Ed25519PrivateKey) -> bool:
    """Write *private* to *path* unless a file is there (two processes starting together
    cannot both write one); True when this call wrote it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(_pem(private))
    return True


def _read(path: Path) -> LedgerKey:
    private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(private, Ed25519PrivateKey):
        raise ValueError(f"{path}: the ledger's signing key must be an Ed25519 private key")
    return LedgerKey.of(private)


def ledger_key(settings: Settings) -> LedgerKey:
    """The key that signs the next entry."""
    if settings.release_signing_key_file is not None:
        return _read(settings.release_signing_key_file)
    path = _made_here(settings)
    if not path.exists():
        _write_new(path, Ed25519PrivateKey.generate())
    return _read(path)


def rotated_key(settings: Settings) -> tuple[LedgerKey, LedgerKey]:
    """Make a new key in place of the portal's own: (the old key, the new). The old file
    is kept beside it under its key id, so an entry it signed can always be re-checked
    with the key the portal holds. An operator's key file is the operator's to replace."""
    if settings.release_signing_key_file is not None:
        raise Refused(
            "key-supplied",
            "the signing key is the operator's file (ENDPOINTS_PORTAL_RELEASE_SIGNING_KEY_FILE): "
            "put the new key in its place; the next entry records the change",
            Kind.CONFLICT,
        )
    old = ledger_key(settings)
    path = _made_here(settings)
    _write_new(path.with_name(f"{old.key_id}.pem"), old.private)
    new = LedgerKey.of(Ed25519PrivateKey.generate())
    staged = path.with_name(f"{new.key_id}.pem")
    _write_new(staged, new.private)
    os.replace(staged, path)  # atomic: a process reads the old key or the new, never half
    return old, new


def register_key(session: Session, key: LedgerKey, at: dt.datetime) -> None:
    """Keep *key*'s public half among the keys that signed, the first time it signs."""
    if session.get(SigningKey, key.key_id) is None:
        session.add(
            SigningKey(
                key_id=key.key_id, algorithm=ALGORITHM, public_pem=key.public_pem, first_used_at=at
            )  # fmt: skip
        )
        session.flush()


def retire_key(session: Session, key_id: str, at: dt.datetime) -> None:
    row = session.get(SigningKey, key_id)
    if row is not None and row.retired_at is None:
        row.retired_at = at


def signing_keys(session: Session) -> list[SigningKey]:
    """Every key that has signed, oldest first."""
    return list(session.scalars(select(SigningKey).order_by(SigningKey.first_used_at)))
