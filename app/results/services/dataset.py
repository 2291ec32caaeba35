"""A cohort's public results as a dataset in the official layout (issue 50): the bundle
layout the official visualiser reads (``<Org>/<submission_id>/results/<System>/<Model>/
r<N>/…``), only what the rules make public (a finalized result's whole bundle; a
provisional result's result files of the points the record shows, no code or artifacts,
rules §11.9), the one points table as ``points.csv``, and at the root ``manifest.json``:
every result as the record shows it, the SHA-256 of every file, the cohort's release
entry and the ledger's head, signed with the ledger's key (``manifest.json.sig``).

Built once for each state of the ledger and kept in the cache: a later change to the
record (an invalidation) is a new ledger head, and so a new dataset."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import logging
import os
import re
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy.orm import Session

from app.core.digests import stream_digest
from app.core.divisions import Availability
from app.core.paths import OutsideFolder, inside
from app.publishing.domain.ledger import MANIFEST_SCHEMA, canonical
from app.publishing.services.ledger import entries_about, head
from app.publishing.services.signing import ledger_key
from app.results.services.export import cohort_record
from app.results.services.public import (
    QueryProblem,
    VisibleCurve,
    list_cohorts,
    published_archive,
    visible_curves,
)
from app.results.services.query import ResultsQuery
from app.results.services.results import list_benchmarks, query_results
from app.results.services.table import POINT_COLUMNS, csv_text, point_rows, view_context
from app.settings import Settings
from app.storage import StorageError
from app.submissions.domain.visibility import Access, Viewer, access
from app.submissions.services.extracted import archive_folder

log = logging.getLogger(__name__)

CHARTED = ("verified", "provisional")
# A finalized result's whole bundle is public (rules §11.9); of the rest, its results.
WHOLE_BUNDLE = ("cli_metadata.json", "src", "docs")
TABLE_COLUMNS = ("cohort", *(c for c in POINT_COLUMNS if c != "cohort"))


@dataclass(frozen=True)
class Built:
    path: Path
    name: str  # the file name a download is offered under
    # Opened as it was found: a newer state built meanwhile removes this one's file, and
    # an answer already under way reads on from the descriptor.
    file: BinaryIO


def _cache(settings: Settings) -> Path:
    folder = settings.cache_dir / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _kept(
    settings: Settings, stem: str, tag: int, suffix: str, build: Any
) -> tuple[Path, BinaryIO]:
    """The cached file *stem* of ledger state *tag*, built by ``build(path)`` when
    missing, and opened: written aside and moved in whole, so a reader never sees half of
    one and two builders never clash. Older states of the same file are removed (their
    readers hold them open)."""
    folder = _cache(settings)
    name = f"{stem}@{tag}{suffix}"
    target = folder / name
    for _ in range(3):  # a newer state's build may remove this one before it is opened
        try:
            return target, target.open("rb")
        except FileNotFoundError:
            pass
        handle = tempfile.NamedTemporaryFile(dir=folder, suffix=".part", delete=False)
        handle.close()
        staged = Path(handle.name)
        try:
            build(staged)
            os.replace(staged, target)
        finally:
            staged.unlink(missing_ok=True)
        for old in folder.glob(f"{stem}@*{suffix}"):
            if old.name != name:
                old.unlink(missing_ok=True)
    raise RuntimeError(f"{name} was removed as soon as it was built, three times")


def _as_of(session: Session) -> dict[str, Any] | None:
    last = head(session)
    return {"seq": last.seq, "digest": last.digest} if last else None


def cohort_dataset(session: Session, settings: Settings, cohort: str) -> Built:
    """The dataset of released *cohort* as the record stands (cached per ledger head)."""
    as_of = _as_of(session)
    tag = as_of["seq"] if as_of else 0
    name = f"endpoints-{cohort}"

    def build(staged: Path) -> None:
        _write_dataset(session, settings, cohort, as_of, staged)

    path, file = _kept(settings, name, tag, ".tar.gz", build)
    return Built(path, f"{name}.tar.gz", file)


# --- the files -------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text).strip("._") or "organization"


def _folder_of(curve: VisibleCurve, bundle_root: str | None, taken: dict[str, str]) -> str:
    """The result's ``<Org>/<submission_id>`` in the dataset: the bundle's own, else one
    made from the organisation and the portal's id; another result's folder is never
    shared."""
    parts = [p for p in (bundle_root or "").split("/") if p]
    if len(parts) >= 2:
        folder = "/".join(parts[-2:])
    else:
        folder = f"{_slug(curve.organization)}/{parts[-1] if parts else curve.submission}"
    owner = taken.setdefault(folder, curve.submission)
    return folder if owner == curve.submission else f"{folder}-{curve.submission[:8]}"


def _files(root: Path, parts: list[str]) -> Iterator[tuple[str, Path]]:
    """The plain files under *root*/*parts* (a file or a folder), by their path from *root*;
    never a link, nothing outside *root*."""
    try:
        start = inside(root, *parts)
    except OutsideFolder:
        return
    if start.is_symlink():
        return
    if start.is_file():
        yield "/".join(parts), start
        return
    if not start.is_dir():
        return
    for path in sorted(start.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(root).as_posix(), path


def _result_files(curve: VisibleCurve, root: Path, whole: bool) -> Iterator[tuple[str, Path]]:
    """What of one result's bundle the dataset carries: its system's power file and the
    folders of the points the record shows (and, for a finalized result, its code,
    documents and the CLI's metadata)."""
    if whole:
        for top in WHOLE_BUNDLE:
            yield from _files(root, [top])
    system = ["results", curve.system_dir]
    yield from _files(root, [*system, "system_power.json"])
    for point in curve.snapshot.points:
        yield from _files(root, [*system, curve.benchmark_model, point.dir])


def _layout(
    session: Session, settings: Settings, curves: list[VisibleCurve]
) -> tuple[dict[str, Path], dict[int, str], list[str]]:
    """Every file of the dataset's bundle layout (its path: where to read it), each
    curve's folder, and what could not be included (said in the manifest)."""
    files: dict[str, Path] = {}
    folders: dict[int, str] = {}
    missing: list[str] = []
    taken: dict[str, str] = {}
    for curve in curves:
        archive = published_archive(session, curve.submission)
        if archive is None:
            missing.append(f"{curve.submission}: no archive kept")
            continue
        try:
            root = archive_folder(settings, archive.sha256, archive.bundle_root)
        except StorageError as exc:
            log.error("dataset: %s's archive left out: %s", curve.submission, exc)
            missing.append(f"{curve.submission}: its archive could not be read")
            continue
        folder = _folder_of(curve, archive.bundle_root, taken)
        folders[curve.id] = folder
        whole = access(Viewer.PUBLIC, curve.status) >= Access.FULL
        for inner, path in _result_files(curve, root, whole):
            files[f"{folder}/{inner}"] = path
    return files, folders, missing


def cohort_points(session: Session, cohort: str | None) -> list[dict[str, Any]]:
    """Every point of the reviewed results *cohort*'s record shows, as the explorer's CSV
    writes a point (one table): each benchmark and dataset, every availability, superseded
    results too, each row naming the cohort."""
    rows: list[dict[str, Any]] = []
    every = tuple(a.value for a in Availability)
    for benchmark in list_benchmarks(session, cohort):
        for dataset in benchmark.datasets:
            query = ResultsQuery(benchmark=benchmark.id, dataset=dataset.id, cohort=cohort,
                                 statuses=CHARTED, availabilities=every,
                                 include_superseded=True, limit=None)  # fmt: skip
            try:
                result = query_results(session, query)
            except QueryProblem:
                continue
            context = {**view_context(result), "cohort": cohort or result.cohort}
            rows += [{**context, **row} for row in point_rows(result)]
    return rows


def _write_dataset(
    session: Session, settings: Settings, cohort: str, as_of: dict[str, Any] | None, target: Path
) -> None:
    record = cohort_record(session, cohort)
    curves = [c for c in visible_curves(session, cohort) if c.status in CHARTED and c.result_id]
    files, folders, missing = _layout(session, settings, curves)
    by_id = {c.result_id: c for c in curves}
    for result in record["results"]:
        curve = by_id.get(result["result_id"])
        result["path"] = folders.get(curve.id) if curve is not None else None
    table = csv_text(cohort_points(session, cohort), TABLE_COLUMNS).encode()
    listed = [{"path": "points.csv", "sha256": hashlib.sha256(table).hexdigest(),
               "size": len(table)}]  # fmt: skip
    for inner, path in sorted(files.items()):
        listed.append({"path": inner, "sha256": _digest(path), "size": path.stat().st_size})
    release = entries_about(session, {f"release/{cohort}"}).get(f"release/{cohort}")
    key = ledger_key(settings)
    manifest = canonical({
        "schema": MANIFEST_SCHEMA,
        "cohort": cohort,
        "date": record["date"],
        "key_id": key.key_id,
        "release_entry": {"seq": release.seq, "digest": release.digest} if release else None,
        "as_of": as_of,
        "results": record["results"],
        "left_out": missing,
        "files": listed,
    })  # fmt: skip
    root = f"endpoints-{cohort}"
    stamp = int(dt.datetime.fromisoformat(record["date"]).timestamp()) if record["date"] else 0
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        _add(tar, f"{root}/manifest.json", manifest, stamp)
        _add(tar, f"{root}/manifest.json.sig", key.sign(manifest), stamp)
        _add(tar, f"{root}/points.csv", table, stamp)
        for inner, path in sorted(files.items()):
            info = tarfile.TarInfo(f"{root}/{inner}")
            info.size, info.mtime, info.mode = path.stat().st_size, stamp, 0o644
            with path.open("rb") as stream:
                tar.addfile(info, stream)


def _digest(path: Path) -> str:
    with path.open("rb") as stream:
        return stream_digest(stream)


def _add(tar: tarfile.TarFile, name: str, data: bytes, stamp: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), stamp, 0o644
    tar.addfile(info, io.BytesIO(data))


# --- every cohort's points --------------------------------------------------------------------


def every_point(session: Session, settings: Settings, fmt: str) -> Built:
    """Every point of every released cohort's record (a row per cohort that showed it),
    as CSV or Parquet, with result ids, statuses, tags and the cohort."""
    as_of = _as_of(session)
    tag = as_of["seq"] if as_of else 0

    def build(staged: Path) -> None:
        rows = [
            row for c in reversed(list_cohorts(session)) for row in cohort_points(session, c.id)
        ]
        if fmt == "csv":
            staged.write_text(csv_text(rows, TABLE_COLUMNS), encoding="utf-8")
            return
        columns = {name: [_plain(row.get(name)) for row in rows] for name in TABLE_COLUMNS}
        pq.write_table(pa.table(columns), staged)

    path, file = _kept(settings, "points", tag, f".{fmt}", build)
    return Built(path, f"endpoints-points.{fmt}", file)


def _plain(value: Any) -> Any:
    """A cell as Parquet holds it: a list as its text, so a column keeps one type."""
    if isinstance(value, list | tuple | dict):
        return str(value)
    return value
