"""Encryption at rest for secrets users hand the portal (endpoint API keys)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

from app.keys import secret_key
from app.settings import Settings


def encrypt(settings: Settings, secret: str) -> str:
    return Fernet(secret_key(settings)).encrypt(secret.encode()).decode()


def decrypt(settings: Settings, token: str) -> str | None:
    """The secret, or None when it cannot be read (the portal's key changed)."""
    try:
        return Fernet(secret_key(settings)).decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None
