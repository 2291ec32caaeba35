from __future__ import annotations

from pydantic import Field
from starlette.datastructures import QueryParams

from app.core.params import UrlParams


class Asked(UrlParams):
    benchmark: str | None = None
    limit: str | None = Field(None, description="a whole number")
    status: list[str] | None = None


def test_an_address_gives_every_value_of_a_repeatable_parameter_and_the_last_of_others() -> None:
    address = QueryParams("status=verified&status=unverified&limit=3&limit=9&x=1")
    asked = Asked.of(address)
    assert asked.status == ["verified", "unverified"]
    # The value Starlette (and so FastAPI, for the API) reads for a parameter given twice.
    assert asked.limit == address["limit"] == "9"
    assert asked.benchmark is None


def test_an_empty_parameter_is_told_from_an_absent_one() -> None:
    # A workload suggests the SLA limits the buyer left out, not the ones they emptied.
    asked = Asked.of(QueryParams("limit=&benchmark=%20llama%20"))
    assert asked.limit == ""
    assert asked.given("limit") is None
    assert asked.given("benchmark") == "llama"
    assert Asked.of(QueryParams("")).limit is None


def test_a_plain_mapping_reads_as_an_address() -> None:
    asked = Asked.of({"status": "verified", "limit": "2"})
    assert asked.status == ["verified"]
    assert asked.limit == "2"


def test_without_takes_parameters_out_and_leaves_the_asked_ones_alone() -> None:
    asked = Asked.of(QueryParams("limit=x&benchmark=b"))
    kept = asked.without({"limit", "not-a-parameter"})
    assert kept.limit is None
    assert kept.benchmark == "b"
    assert asked.limit == "x"
