"""Building blocks of the typed read models that services return, routes declare as their
``response_model`` and templates render."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    PlainSerializer,
    ValidationInfo,
    WithJsonSchema,
)

# Moments go out as ``datetime.isoformat()`` writes them (``+00:00``, as the API always
# wrote them), and the schema still says they are date-times.
Timestamp = Annotated[
    dt.datetime,
    PlainSerializer(lambda moment: moment.isoformat(), return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]

# What a record read back as it was stored passes as its validation context: its metrics
# were rounded when it was written, and rounding them again on every read of a large
# record took seconds.
AS_STORED = {"as_stored": True}


def _three_decimals(value: float, info: ValidationInfo) -> float:
    if info.context is AS_STORED:
        return value
    return round(value, 3)


# Every API, page and publication shows a point's metrics to the same precision: three
# decimals, whatever the bundle carried.
Metric = Annotated[float, AfterValidator(_three_decimals)]
# The percentiles of a run summary the portal shows beside the official P90 (rules §1.1).
SHOWN_PERCENTILES = ("50", "90", "95", "99")


def _is_none(value: Any) -> bool:
    return value is None


def left_out_if_none(description: str | None = None) -> Any:
    """A field that is left out of the document, rather than written as null, when it has
    no value (a published point carries only what its bundle measured)."""
    return Field(default=None, description=description, exclude_if=_is_none)


Item = TypeVar("Item")


class Listing(BaseModel, Generic[Item]):
    """A list answer: ``{"data": [...]}``."""

    data: list[Item]


class Counted(Listing[Item], Generic[Item]):
    """A page of a longer list, with the whole list's length."""

    count: int = Field(description="how many there are in all")
