"""The record's ledger (issue 50): every change to the public record is an entry, canonical
JSON (RFC 8785) signed with the portal's Ed25519 key, each naming the digest of the one
before it. Anyone holding the public keys can check an entry with ``openssl`` alone and
the chain with :func:`verify_chain`: an entry changed, dropped or reordered breaks it.

Pure: the encoding, the kinds of change, and verification (which ``endpoints-portal
verify`` runs offline, on a downloaded chain or dataset).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ENTRY_SCHEMA = "endpoints-portal/record-entry/1"
MANIFEST_SCHEMA = "endpoints-portal/dataset-manifest/1"
ALGORITHM = "Ed25519"

# The kinds of change an entry records (the README lists them with their meaning).
GENESIS = "genesis"  # the chain's start: what the record held before it had a ledger
RELEASE = "release"  # a cohort released by the chair
PUBLICATION = "publication"  # a result's first public version
STATUS_CHANGE = "status-change"  # e.g. provisional to verified
RECLASSIFICATION = "reclassification"  # its division, availability or scenario
PREVIEW_EXTENSION = "preview-extension"  # a Preview's committed date moved
POINT_INVALIDATION = "point-invalidation"  # the chair invalidated a point
CORRECTION = "correction"  # any other new version (a re-count, a reproduction)
WITHDRAWAL = "withdrawal"
INVALIDATION = "invalidation"
PREVIEW_EXPIRY = "preview-expiry"  # removed at the end of its window (rules §11.10)
REMOVAL = "removal"  # rejected, or withdrawn before finalization: no record is kept
SUPERSESSION = "supersession"  # a newer finalized result of the same system
KEY_ROTATION = "key-rotation"  # the signing key changed: signed by the key it replaces
KEY_CHANGE = "key-change"  # the key file was replaced without a rotation: signed by the new

LEAVING = {"withdrawn": WITHDRAWAL, "invalidated": INVALIDATION, "removed": PREVIEW_EXPIRY}
# The kinds of entry that each record one new version of a result's record.
VERSION_KINDS = frozenset({
    PUBLICATION, STATUS_CHANGE, RECLASSIFICATION, PREVIEW_EXTENSION, POINT_INVALIDATION,
    CORRECTION, *LEAVING.values(),
})  # fmt: skip


_SAFE = 2**53 - 1  # I-JSON (RFC 7493): the integers every JSON reader holds exactly


def _i_json(value: Any) -> Any:
    """*value* with each integer beyond I-JSON's range as its decimal string (a run's
    64-bit seeds): RFC 8785 refuses them as numbers, and a reader would round them."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if -_SAFE <= value <= _SAFE else str(value)
    if isinstance(value, Mapping):
        return {k: _i_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_i_json(v) for v in value]
    return value


def canonical(document: Mapping[str, Any]) -> bytes:
    """RFC 8785: the one byte string a JSON value signs as (integers beyond I-JSON's
    range written as strings)."""
    return rfc8785.dumps(_i_json(document))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key_id_of(public: Ed25519PublicKey) -> str:
    """A key's id: the start of the SHA-256 of its raw 32 bytes."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_hex(raw)[:16]


def public_pem(public: Ed25519PublicKey) -> str:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def load_public_pem(text: str) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(text.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


@dataclass(frozen=True)
class VersionFacts:
    """What of a version decides the kind of change a newer one is."""

    status: str
    classes: tuple[
        tuple[str | None, str | None, str | None], ...
    ]  # division, availability, scenario
    available_by: tuple[str | None, ...]
    invalidated_points: int


def change_kind(before: VersionFacts | None, after: VersionFacts) -> str:
    """The kind of change from *before* (None: no public version yet) to *after*."""
    if after.status in LEAVING:
        return LEAVING[after.status]
    if before is None:
        return PUBLICATION
    if after.status != before.status:
        return STATUS_CHANGE
    if after.classes != before.classes:
        return RECLASSIFICATION
    if after.available_by != before.available_by:
        return PREVIEW_EXTENSION
    if after.invalidated_points > before.invalidated_points:
        return POINT_INVALIDATION
    return CORRECTION


# --- verification (offline) -------------------------------------------------------------


@dataclass(frozen=True)
class SignedEntry:
    """An entry as served: its canonical bytes and the detached signature."""

    body: bytes
    signature: bytes


def signature_holds(key: Ed25519PublicKey, body: bytes, signature: bytes) -> bool:
    try:
        key.verify(signature, body)
    except InvalidSignature:
        return False
    return True


def read_keys(document: Mapping[str, Any]) -> dict[str, Ed25519PublicKey]:
    """The keys of ``/.well-known/release-signing-keys.json``, by key id (each checked
    against its key, so a list cannot name a key by another's id)."""
    keys = {}
    for item in document.get("keys", []):
        key = load_public_pem(str(item["public_key_pem"]))
        if key_id_of(key) != item["key_id"]:
            raise ValueError(f"key {item['key_id']!r} is not the key its PEM holds")
        keys[str(item["key_id"])] = key
    return keys


def verify_chain(
    entries: Iterable[SignedEntry], keys: Mapping[str, Ed25519PublicKey]
) -> tuple[list[str], dict[str, Any] | None]:
    """What is wrong with a chain read from its start (nothing: an empty list), and its
    last entry. Each entry must be canonical, signed by the key it names, numbered one
    after the last, and name the last one's digest; a key rotation must be signed by the
    key it retires, and the entries after it by the key it names."""
    problems: list[str] = []
    previous: str | None = None
    expected_key: str | None = None
    last: dict[str, Any] | None = None
    for n, entry in enumerate(entries, start=1):
        where = f"entry {n}"
        try:
            document = read_entry(entry.body)
        except ValueError as exc:
            problems.append(f"{where}: not JSON ({exc})")
            break
        if canonical(document) != entry.body:
            problems.append(f"{where}: not in canonical form (RFC 8785)")
        if document.get("schema") != ENTRY_SCHEMA or document.get("seq") != n:
            problems.append(f"{where}: numbered {document.get('seq')!r}, expected {n}")
        if document.get("previous") != previous:
            problems.append(f"{where}: names {document.get('previous')!r} as the entry before "
                            f"it, which is {previous!r}")  # fmt: skip
        key_id = document.get("key_id")
        key = keys.get(str(key_id))
        if key is None:
            problems.append(f"{where}: signed by key {key_id!r}, which the keys list lacks")
        elif not signature_holds(key, entry.body, entry.signature):
            problems.append(f"{where}: the signature does not hold for key {key_id!r}")
        if expected_key is not None and key_id != expected_key:
            if document.get("kind") != KEY_CHANGE:
                problems.append(f"{where}: signed by {key_id!r}; the chain's key is "
                                f"{expected_key!r}")  # fmt: skip
        expected_key = str(key_id)
        if document.get("kind") == KEY_ROTATION:
            expected_key = str(document.get("change", {}).get("new_key_id"))
        previous = sha256_hex(entry.body)
        last = document
    return problems, last


def read_entry(body: bytes) -> dict[str, Any]:
    value = json.loads(body)
    if not isinstance(value, dict):
        raise ValueError("an entry is a JSON object")
    return value


def encode_signature(signature: bytes) -> str:
    return base64.b64encode(signature).decode()


def decode_signature(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def verify_files(manifest: Mapping[str, Any], files: Mapping[str, str]) -> list[str]:
    """What differs between a dataset's files (path: SHA-256) and what its manifest lists."""
    listed = {f["path"]: f["sha256"] for f in manifest.get("files", [])}
    problems = []
    for path, digest in sorted(listed.items()):
        found = files.get(path)
        if found is None:
            problems.append(f"{path}: listed in the manifest, missing from the dataset")
        elif found != digest:
            problems.append(f"{path}: its SHA-256 is not the manifest's (the file was changed)")
    for path in sorted(set(files) - set(listed)):
        problems.append(f"{path}: in the dataset, not listed in the manifest")
    return problems
