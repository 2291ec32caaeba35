"""The declarative base, the column types every table shares, and the clock rows are
stamped with."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

from sqlalchemy import (
    DateTime,
    MetaData,
    TypeDecorator,
)
from sqlalchemy import Enum as SQLEnum
from sqlalchemy.orm import DeclarativeBase


def enum_of(values: type[enum.StrEnum], length: int) -> SQLEnum:
    """A column of one of the domain's enums: stored as its value in a VARCHAR of the
    length it always had (no native type, no schema change); a value outside the enum is
    refused before it reaches the database, and rows read back as members."""
    return SQLEnum(
        values,
        native_enum=False,
        create_constraint=False,
        length=length,
        validate_strings=True,
        values_callable=lambda members: [m.value for m in members],
    )


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Aware UTC datetimes on every backend (SQLite drops the zone otherwise)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
