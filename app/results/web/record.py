"""The record's ledger and its keys, for anyone to check (issue 50): each entry's
canonical bytes and detached Ed25519 signature, the whole chain as JSON lines, and the
public keys at their well-known addresses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query
from fastapi.responses import Response, StreamingResponse

from app.core.views import Listing
from app.publishing.domain.ledger import ALGORITHM, encode_signature
from app.publishing.services.ledger import EntryView, entries_after, entry_numbered
from app.publishing.services.signing import ledger_key, signing_keys
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(tags=["record"])

PEM = "application/x-pem-file"
_PAGE = 500
_LARGEST = 2**31 - 1  # an entry's number is a database integer
Seq = Annotated[int, Path(ge=1, le=_LARGEST, description="the entry's number, from 1")]


@router.get("/.well-known/release-signing-key.pem", response_class=Response,
            responses={200: {"content": {PEM: {}}}})  # fmt: skip
def current_signing_key(settings: SettingsDep) -> Response:
    """The public key that signs the ledger's next entry (PEM, SubjectPublicKeyInfo)."""
    return Response(ledger_key(settings).public_pem, media_type=PEM)


@router.get("/.well-known/release-signing-keys.json")
def every_signing_key(session: SessionDep, settings: SettingsDep) -> dict[str, object]:
    """Every key that has signed the ledger, each with its id (an entry's ``key_id``),
    when it first signed and when it was retired."""
    current = ledger_key(settings)
    keys = [
        {
            "key_id": k.key_id,
            "algorithm": k.algorithm,
            "public_key_pem": k.public_pem,
            "first_used_at": k.first_used_at.isoformat(),
            "retired_at": k.retired_at.isoformat() if k.retired_at else None,
            "current": k.key_id == current.key_id,
        }  # fmt: skip
        for k in signing_keys(session)
    ]
    if current.key_id not in {k["key_id"] for k in keys}:  # made, not yet used
        keys.append({"key_id": current.key_id, "algorithm": ALGORITHM,
                     "public_key_pem": current.public_pem, "first_used_at": None,
                     "retired_at": None, "current": True})  # fmt: skip
    return {"keys": keys}


@router.get("/api/v1/record/entries", response_model=Listing[EntryView])
def list_entries(
    session: SessionDep,
    after: int = Query(0, ge=0, le=_LARGEST, description="list the entries after this number"),
    limit: int = Query(100, ge=1, le=_PAGE),
) -> Listing[EntryView]:
    """The ledger's entries in order: every change to the public record, signed."""
    return Listing(data=[EntryView.of(e) for e in entries_after(session, after, limit)])


def _signed(session: SessionDep, seq: int) -> tuple[bytes, bytes]:
    """Entry *seq*'s bytes and signature; 404 where the ledger has none."""
    entry = entry_numbered(session, seq)
    if entry is None:
        raise HTTPException(404, detail=f"the ledger has no entry {seq}")
    return entry.body, entry.signature


@router.get("/api/v1/record/entries/{seq}", response_class=Response,
            responses={200: {"content": {"application/json": {}}}})  # fmt: skip
def read_entry(seq: Seq, session: SessionDep) -> Response:
    """Entry *seq* exactly as signed: canonical JSON (RFC 8785). Verify it with the key it
    names: ``openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in entry.json
    -sigfile entry.sig``."""
    return Response(_signed(session, seq)[0], media_type="application/json")


@router.get("/api/v1/record/entries/{seq}/signature", response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}}}})  # fmt: skip
def read_signature(seq: Seq, session: SessionDep) -> Response:
    """Entry *seq*'s detached Ed25519 signature: 64 raw bytes."""
    return Response(_signed(session, seq)[1], media_type="application/octet-stream")


@router.get("/api/v1/record/chain.jsonl", response_class=StreamingResponse,
            responses={200: {"content": {"application/jsonl": {}}}})  # fmt: skip
def read_chain(session: SessionDep) -> StreamingResponse:
    """The whole ledger, one entry a line: ``{"seq", "entry" (its canonical text),
    "signature" (base64)}``; ``endpoints-portal verify --chain`` checks it."""
    entries = entries_after(session, 0, 10**9)

    def lines() -> Iterator[bytes]:
        for e in entries:
            line = {
                "seq": e.seq,
                "entry": e.body.decode(),
                "signature": encode_signature(e.signature),
            }
            yield json.dumps(line).encode() + b"\n"

    return StreamingResponse(lines(), media_type="application/jsonl")
