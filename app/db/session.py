"""Engine and session factories."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker


def _json_dumps(value: object) -> str:
    return orjson.dumps(value).decode()


# orjson reads and writes JSON columns several times faster than the standard library.
_JSON = {"json_serializer": _json_dumps, "json_deserializer": orjson.loads}


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, **_JSON
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            # WAL lets the web process read while the worker writes.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, **_JSON)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


class Database:
    """One engine and session factory per process, built from a URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = make_session_factory(self.engine)

    def session(self) -> Session:
        return self.sessions()

    def dispose(self) -> None:
        self.engine.dispose()
