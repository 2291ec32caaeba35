"""Encryption at rest for secrets users hand the portal (endpoint API keys)."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from app.settings import Settings


def _key(settings: Settings) -> bytes:
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


def encrypt(settings: Settings, secret: str) -> str:
    return Fernet(_key(settings)).encrypt(secret.encode()).decode()


def decrypt(settings: Settings, token: str) -> str | None:
    """The secret, or None when it cannot be read (the portal's key changed)."""
    try:
        return Fernet(_key(settings)).decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None
