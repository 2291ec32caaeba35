"""``endpoints-portal verify``: check what the portal published, anywhere, years later:
a cohort's dataset (its signed manifest, and every file against the manifest) and the
record's ledger (every signature, every link), with the portal's public keys. Nothing of
a portal's database is needed; ``--portal`` fetches the keys and the chain over HTTP."""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

import click
import httpx

from app.core.digests import stream_digest
from app.publishing.domain.ledger import (
    MANIFEST_SCHEMA,
    SignedEntry,
    decode_signature,
    key_id_of,
    load_public_pem,
    read_entry,
    read_keys,
    signature_holds,
    verify_chain,
    verify_files,
)
from harness.cli.kit import Failed, Failure, emit_json, json_option

Keys = dict[str, Any]
MANIFEST = "manifest.json"


def _tar_files(path: Path) -> Iterator[tuple[str, IO[bytes] | None]]:
    """A dataset archive's members, by their path in it: read in place, never extracted;
    a link or a path out of the dataset is named as such (it cannot be a file of ours)."""
    with tarfile.open(path, "r:*") as tar:
        for member in tar:
            if member.isdir():
                continue
            name = member.name
            bad = PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts
            yield name, None if bad or not member.isfile() else tar.extractfile(member)


def _dir_files(path: Path) -> Iterator[tuple[str, IO[bytes] | None]]:
    for item in sorted(path.rglob("*")):
        name = item.relative_to(path).as_posix()
        if item.is_symlink():
            yield name, None
        elif item.is_file():
            with item.open("rb") as stream:
                yield name, stream


def _dataset(path: Path) -> tuple[bytes, bytes, dict[str, str], list[str]]:
    """The manifest, its signature, every other file's SHA-256 by its path from the
    dataset's root (the folder holding ``manifest.json``), and what is not a plain file."""
    files, odd = {}, []
    manifest = signature = None
    for name, stream in _tar_files(path) if path.is_file() else _dir_files(path):
        if stream is None:
            odd.append(f"{name}: not a plain file inside the dataset")
            continue
        parts = PurePosixPath(name).parts
        inner = "/".join(parts[1:]) if path.is_file() and len(parts) > 1 else name
        if inner == MANIFEST:
            manifest = stream.read()
        elif inner == MANIFEST + ".sig":
            signature = stream.read()
        else:
            files[inner] = stream_digest(stream)
    if manifest is None or signature is None:
        raise Failure(f"{path}: no {MANIFEST} and {MANIFEST}.sig at the dataset's root")
    return manifest, signature, files, odd


def _keys(keys_file: Path | None, key_pem: Path | None, portal: str | None) -> Keys:
    if key_pem is not None:
        key = load_public_pem(key_pem.read_text())
        return {key_id_of(key): key}
    if keys_file is not None:
        document = json.loads(keys_file.read_text())
    elif portal is not None:
        document = _fetch(portal, "/.well-known/release-signing-keys.json").json()
    else:
        raise Failure("say whose keys to check with: --keys FILE, --key PEM or --portal URL")
    try:
        return read_keys(document)
    except (KeyError, ValueError) as exc:
        raise Failure(f"the keys list cannot be used: {exc}") from exc


def _fetch(portal: str, path: str) -> httpx.Response:
    try:
        answer = httpx.get(portal.rstrip("/") + path, timeout=60.0, follow_redirects=False)
        answer.raise_for_status()
    except httpx.HTTPError as exc:
        raise Failure(f"{portal}{path}: {exc}") from exc
    return answer


def _chain(chain_file: Path | None, portal: str | None) -> list[SignedEntry]:
    if chain_file is not None:
        text = chain_file.read_text()
    elif portal is not None:
        text = _fetch(portal, "/api/v1/record/chain.jsonl").text
    else:
        return []
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                item = json.loads(line)
                entries.append(
                    SignedEntry(item["entry"].encode(), decode_signature(item["signature"]))
                )
            except (ValueError, KeyError) as exc:
                raise Failure(f"chain line {number}: not an entry ({exc})") from exc
    return entries


def check_dataset(path: Path, keys: Keys) -> tuple[list[str], dict[str, Any]]:
    manifest, signature, files, problems = _dataset(path)
    document = read_entry(manifest)
    if document.get("schema") != MANIFEST_SCHEMA:
        problems.append(f"{MANIFEST}: not a dataset manifest ({document.get('schema')!r})")
    key = keys.get(str(document.get("key_id")))
    if key is None:
        problems.append(f"{MANIFEST}: signed by key {document.get('key_id')!r}, not in the keys")
    elif not signature_holds(key, manifest, signature):
        problems.append(f"{MANIFEST}: the signature does not hold (the manifest was changed)")
    return problems + verify_files(document, files), document


@click.command("verify", short_help="check a dataset and the record's ledger")
@click.argument("dataset", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--keys",
    "keys_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="the portal's keys list (/.well-known/release-signing-keys.json)",
)
@click.option(
    "--key",
    "key_pem",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="one public key (PEM), e.g. /.well-known/release-signing-key.pem",
)
@click.option(
    "--chain",
    "chain_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="the ledger as JSON lines (/api/v1/record/chain.jsonl)",
)
@click.option("--portal", metavar="URL", help="fetch the keys (and, without --chain, the ledger)")
@json_option
def verify(
    dataset: Path | None,
    keys_file: Path | None,
    key_pem: Path | None,
    chain_file: Path | None,
    portal: str | None,
    as_json: bool,
) -> None:
    """Check DATASET (a cohort's dataset, as downloaded or unpacked): its manifest's
    signature, and every file against the SHA-256 the manifest lists. With --chain or
    --portal, check the ledger too: every entry signed by the key it names, each naming
    the one before it, and the dataset's release among them. Exit 0 when all holds, 1 when
    something does not (each named), 2 when nothing could be checked."""  # fmt: skip
    keys = _keys(keys_file, key_pem, portal)
    chain = _chain(chain_file, portal)
    if dataset is None and not chain:
        raise Failure("nothing to check: give a DATASET, --chain FILE or --portal URL")
    problems: list[str] = []
    report: dict[str, Any] = {}
    if chain:
        found, last = verify_chain(chain, keys)
        problems += [f"ledger: {p}" for p in found]
        report["ledger"] = {"entries": len(chain), "head": last and last.get("seq")}
    if dataset is not None:
        found, manifest = check_dataset(dataset, keys)
        problems += found
        report["dataset"] = {
            "cohort": manifest.get("cohort"),
            "files": len(manifest.get("files", [])),
        }
        release = manifest.get("release_entry") or {}
        if chain and release:
            digests = {hashlib.sha256(e.body).hexdigest() for e in chain}
            if release.get("digest") not in digests:
                problems.append("the dataset's release entry is not in the ledger")
    report["problems"] = problems
    if as_json:
        emit_json(report)
    else:
        for what, facts in report.items():
            if what != "problems":
                click.echo(f"{what}: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    if problems:
        raise Failed(f"{len(problems)} problem(s) found", hints=problems)
    if not as_json:
        click.echo("verified: every signature and digest holds")
