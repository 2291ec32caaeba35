"""The portal's secret key: encrypts what users hand the portal (endpoint API keys, webhook
secrets) at rest and signs the browser forms' CSRF tokens. ``ENDPOINTS_PORTAL_SECRET_KEY``,
else a key file made once in the data directory (web and worker processes of one
deployment must share it)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from app.settings import Settings


def secret_key(settings: Settings) -> bytes:
    if settings.secret_key:
        return settings.secret_key.encode()
    path: Path = settings.data_dir / "secret.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Created private and exclusively: two processes racing cannot both write one.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_bytes().strip()
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
    return path.read_bytes().strip()


def derived_key(settings: Settings, purpose: str) -> bytes:
    """A key for one *purpose* (signing), never the encryption key itself."""
    return hashlib.sha256(
        b"endpoints-portal:" + purpose.encode() + b":" + secret_key(settings)
    ).digest()


def encrypt(settings: Settings, secret: str) -> str:
    """A secret a user handed the portal, as it is kept at rest."""
    return Fernet(secret_key(settings)).encrypt(secret.encode()).decode()


def decrypt(settings: Settings, token: str) -> str | None:
    """The secret, or None when it cannot be read (the portal's key changed)."""
    try:
        return Fernet(secret_key(settings)).decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None
