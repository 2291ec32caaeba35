"""The embedded broker without its polling interval: a sent job wakes the workers at once.

kombu's SQLAlchemy transport (the embedded default's broker, on a SQLite file) finds new
messages by polling, a query every second, so a job waited half a second on average
before a worker saw it: half of an upload's time to its verdict. Here the transport keeps
the table and the polling, as the fallback, and adds a bell: each consuming process binds
a Unix datagram socket in a folder of the broker's own, and each process that stores a
message rings every socket there. A consumer that finds no message waits on its socket
instead of sleeping, so it takes a job the moment it is stored. A bell that cannot ring
(a folder not made, a socket gone) costs only the wait it would have saved.

Redis, the deployments' broker, blocks on its lists and needs none of this.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import socket
import stat
import tempfile
from pathlib import Path
from time import monotonic
from typing import Any

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import sqlalchemy as sqla
from kombu.transport.virtual import Empty

ALIAS = "portal-sqla"
TRANSPORT_ALIASES[ALIAS] = f"{__name__}:WakefulTransport"


def wakeful(broker_url: str) -> str:
    """*broker_url* with this transport in place of kombu's own SQLAlchemy one."""
    return ALIAS + broker_url[len("sqla") :] if broker_url.startswith("sqla+") else broker_url


class Bell:
    """The sockets of one broker's consumers, in a private folder named after the broker
    (a short path: a socket's path is limited to 107 bytes)."""

    def __init__(self, broker: str) -> None:
        digest = hashlib.sha256(broker.encode()).hexdigest()[:16]
        self.folder = Path(tempfile.gettempdir()) / f"portal-bell-{os.getuid()}-{digest}"
        self._socket: socket.socket | None = None
        self._path: Path | None = None

    def _ready_folder(self) -> bool:
        with contextlib.suppress(FileExistsError):
            self.folder.mkdir(mode=0o700)
        # Only a folder of this user's, that no one else may write to, is trusted.
        info = self.folder.lstat()
        return (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        )

    def ring(self) -> None:
        """Wake every consumer waiting on this broker."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.setblocking(False)
            for name in names:
                path = self.folder / name
                try:
                    sender.sendto(b"!", str(path))
                except (ConnectionRefusedError, FileNotFoundError):
                    path.unlink(missing_ok=True)  # its process is gone
                except OSError:
                    pass  # full: it has been rung already

    def wait(self, seconds: float) -> None:
        """Until rung, or *seconds* (a consumer's fallback to polling)."""
        listener = self._listen()
        if listener is None:
            select.select([], [], [], seconds)
            return
        if select.select([listener], [], [], seconds)[0]:
            with contextlib.suppress(BlockingIOError):
                while listener.recv(64):
                    pass

    def _listen(self) -> socket.socket | None:
        if self._socket is not None:
            return self._socket
        try:
            if not self._ready_folder():
                return None
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            path = self.folder / f"{os.getpid()}-{id(self):x}"
            path.unlink(missing_ok=True)
            listener.bind(str(path))
        except OSError:
            return None
        listener.setblocking(False)
        self._socket, self._path = listener, path
        return listener

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._path is not None:
            self._path.unlink(missing_ok=True)
            self._path = None


# kombu is untyped: its classes are subclassed as they are.
class WakefulChannel(sqla.Channel):
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super()._put(queue, payload, **kwargs)  # type: ignore[no-untyped-call]
        self.connection.bell.ring()


class WakefulTransport(sqla.Transport):
    Channel = WakefulChannel

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)  # type: ignore[no-untyped-call]
        self.bell = Bell(client.hostname or "")

    def drain_events(self, connection: Any, timeout: float | None = None) -> None:  # type: ignore[override]
        """kombu's loop, waiting on the bell where it would sleep."""
        started = monotonic()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)  # type: ignore[union-attr]
                return
            except Empty:
                waited = monotonic() - started
                if timeout is not None and waited >= timeout:
                    raise TimeoutError() from None
                pause = self.polling_interval or 1.0
                if timeout is not None:
                    pause = min(pause, timeout - waited)
                self.bell.wait(pause)

    def close_connection(self, connection: Any) -> None:
        self.bell.close()
        super().close_connection(connection)  # type: ignore[no-untyped-call]
