"""The server the archive-reading children are forked from (architecture, decision 18).

``python -m app.submissions.domain.fork_server FD PATH`` is started once by a process
that has archives read (``app.submissions.services.reading``), with one end of a Unix
sequenced-packet socket pair as *FD* and its import path (JSON) as *PATH*. It imports
the readers once and reads no archive itself; for each request it forks a child
(``app.submissions.domain.reader.serve_one``) that starts as a clean process with the
readers already imported: no interpreter's start and imports per archive.

A request is one message: the child's request (JSON), with two descriptors, the write
end of the pipe the child answers on and a socket of the request's own. On that socket
the server sends the child's process id (a signed 32-bit integer) once it is forked, and
its exit code (negative: the signal that ended it) once it is reaped; a byte ``k`` sent
the other way kills the child, if it has not been reaped yet (its id is not anyone
else's until then). The server ends when the requesting process closes its end.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import sys
import traceback

from app.submissions.domain.reader import serve_one

MAX_REQUEST = 256 * 1024
_INT = struct.Struct("i")
KILL = b"k"


def send_int(sock: socket.socket, value: int) -> None:
    sock.sendall(_INT.pack(value))


def recv_int(sock: socket.socket) -> int | None:
    """The next integer on *sock*; None when it closed first."""
    data = b""
    while len(data) < _INT.size:
        chunk = sock.recv(_INT.size - len(data))
        if not chunk:
            return None
        data += chunk
    value: int = _INT.unpack(data)[0]
    return value


class _Server:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.children: dict[int, socket.socket] = {}  # not yet reaped: their status sockets
        self.listening: dict[socket.socket, int] = {}  # status sockets that may ask for a kill
        self.wake_r, self.wake_w = os.pipe()
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select through the pipe
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the requesting process decides

    def run(self) -> None:
        while True:
            watched: list[socket.socket | int] = [self.control, self.wake_r, *self.listening]
            try:
                readable = select.select(watched, [], [])[0]
            except InterruptedError:
                continue
            if self.wake_r in readable:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self.wake_r, 512):
                        pass
            self._reap()
            for sock in readable:
                if sock is self.control:
                    if not self._take_request():
                        return  # the requesting process is gone
                elif sock in self.listening:
                    self._kill_on_request(sock)

    def _take_request(self) -> bool:
        message, fds, _flags, _addr = socket.recv_fds(self.control, MAX_REQUEST, 2)
        if not message:
            return False
        if len(fds) != 2:  # not a request of ours: nothing to answer on
            for fd in fds:
                os.close(fd)
            return True
        answer_fd, status_fd = fds
        status = socket.socket(fileno=status_fd)
        pid = os.fork()
        if pid == 0:  # the child: never back into this loop
            code = 1
            try:
                self._leave_server(status)
                serve_one(message, answer_fd)
                code = 0
            except BaseException:  # noqa: BLE001 - its last words, to the log
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(answer_fd)
        self.children[pid] = status
        self.listening[status] = pid
        with contextlib.suppress(OSError):
            send_int(status, pid)
        return True

    def _leave_server(self, status: socket.socket) -> None:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        for fd in (self.wake_r, self.wake_w):
            os.close(fd)
        self.control.close()
        status.close()
        for other in self.children.values():
            other.close()

    def _kill_on_request(self, sock: socket.socket) -> None:
        try:
            asked = sock.recv(1)
        except OSError:
            asked = b""
        pid = self.listening[sock]
        if asked == KILL and pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not asked:  # the requester stopped listening: its child is only reaped
            del self.listening[sock]

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            sock = self.children.pop(pid, None)
            if sock is None:
                continue
            self.listening.pop(sock, None)
            with contextlib.suppress(OSError):
                send_int(sock, os.waitstatus_to_exitcode(status))
            sock.close()


if __name__ == "__main__":
    # The requesting process's import path: a reader of its own is found as it finds it.
    sys.path[:] = json.loads(sys.argv[2])
    _Server(socket.socket(fileno=int(sys.argv[1]))).run()
