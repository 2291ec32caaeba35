"""URL parameters as one pydantic model per query: the API declares it (FastAPI reads
each field as a query parameter and documents it in OpenAPI) and the pages build it from
the address, so both hand the services the same thing to parse.

The fields hold the parameters as typed, text, so that the service refuses a bad value
by name with the words the page shows beside its field; None is a parameter that is not
in the address, "" one that is there and empty."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict


class MultiDict(typing.Protocol):
    def getlist(self, key: Any) -> list[str]: ...

    def __contains__(self, key: object) -> bool: ...


class UrlParams(BaseModel):
    # Frozen: a refused field is dropped by a copy, never by changing the one asked.
    model_config = ConfigDict(frozen=True)

    @classmethod
    def of(cls, params: MultiDict | Mapping[str, Any]) -> Self:
        """The parameters of an address (a multi-dict, as Starlette's ``QueryParams``):
        every value of a repeatable one, the last of any other (as Starlette and FastAPI
        read a parameter given twice, so the page and the API agree)."""
        values: dict[str, Any] = {}
        for name, info in cls.model_fields.items():
            if name not in params:
                continue
            given = _values(params, name)
            values[name] = given if _is_list(info.annotation) else given[-1]
        return cls.model_validate(values)

    def given(self, name: str) -> str | None:
        """A text parameter, stripped; None when it is absent or empty."""
        value = getattr(self, name)
        return (value or "").strip() or None

    def without(self, names: set[str]) -> Self:
        """The same parameters with *names* taken out of the address."""
        return self.model_copy(update=dict.fromkeys(names & set(type(self).model_fields)))


def _values(params: MultiDict | Mapping[str, Any], name: str) -> list[str]:
    if hasattr(params, "getlist"):
        return list(params.getlist(name))
    value = params[name]
    return list(value) if isinstance(value, list | tuple) else [value]


def _is_list(annotation: Any) -> bool:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_is_list(a) for a in typing.get_args(annotation))
    return typing.get_origin(annotation) is list
