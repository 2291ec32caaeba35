"""The embedded broker wakes its consumers when a job is stored (app/wakeup.py)."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

from kombu.connection import Connection
from kombu.entity import Exchange, Queue

from app.wakeup import Bell, wakeful


def test_only_the_embedded_broker_is_made_wakeful() -> None:
    assert (
        wakeful("sqla+sqlite:////data/broker.sqlite3")
        == "portal-sqla+sqlite:////data/broker.sqlite3"
    )
    assert wakeful("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_a_sent_message_wakes_a_consumer_long_before_its_next_poll(tmp_path: Path) -> None:
    """The consumer polls once an hour here: without the bell it would find the message
    only after that hour, long past the minute it is given."""
    url = wakeful(f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}")
    queue = Queue("portal", Exchange("portal"), routing_key="portal")  # type: ignore[no-untyped-call]
    got: list[object] = []
    waiting = threading.Event()
    with Connection(url) as consumer_side:  # type: ignore[no-untyped-call]
        consumer_side.transport.polling_interval = 3600
        with consumer_side.Consumer(queue, callbacks=[lambda body, message: got.append(body)],
                                    accept=["json"]):  # fmt: skip
            # A first empty wait binds the consumer's socket, as a worker's first poll does.
            try:
                consumer_side.drain_events(timeout=0.01)
            except TimeoutError:
                pass

            def consume() -> None:
                waiting.set()
                consumer_side.drain_events()

            thread = threading.Thread(target=consume, daemon=True)
            thread.start()
            waiting.wait()
            with Connection(url) as sender:  # type: ignore[no-untyped-call]
                sender.Producer().publish({"job": 7}, exchange=queue.exchange,
                                          routing_key="portal", declare=[queue])  # fmt: skip
            thread.join(timeout=60)
            assert not thread.is_alive() and got == [{"job": 7}]


def test_a_gone_consumer_is_forgotten_and_a_stranger_s_folder_is_not_trusted(
    tmp_path: Path,
) -> None:
    bell = Bell(str(tmp_path / "broker.sqlite3"))
    bell.wait(0)  # binds this process's socket
    mine = list(bell.folder.iterdir())
    assert len(mine) == 1
    # A consumer that died left its socket file: the next ring removes it.
    gone = bell.folder / "1-dead"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
        dead.bind(str(gone))
    bell.ring()
    assert not gone.exists() and mine[0].exists()
    bell.close()
    assert not mine[0].exists()
    # A folder others may write to could hold anything: the bell falls back to polling.
    os.chmod(bell.folder, 0o777)
    try:
        stranger = Bell(str(tmp_path / "broker.sqlite3"))
        stranger.wait(0)
        assert list(bell.folder.iterdir()) == []
    finally:
        os.chmod(bell.folder, 0o700)
        bell.folder.rmdir()
