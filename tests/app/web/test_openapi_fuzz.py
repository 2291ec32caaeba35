"""Schemathesis over the whole OpenAPI schema: whatever it sends, no server error, and
every answer is what the document says it is.

The portal runs in-process on a real database with the demo results and the review
accounts; every generated request carries the chair's token (every scope but admin), so
the guarded operations are exercised past their authentication too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import response_schema_conformance

from app.main import create_app
from tests.support.accounts import bearer, create_accounts
from tests.support.demo import demo_copy
from tests.support.fakes import RecordingQueue


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: object, value: object) -> bytes:
    """Run events are an opaque body (the schema says binary): send whatever came."""
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module")
def portal_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, str]]:
    with demo_copy("sqlite", tmp_path_factory.mktemp("fuzz") / "data") as (settings, database):
        token = create_accounts(database)["chair"]
        yield create_app(settings, queue=RecordingQueue()), token


# The operations in four shares, each its own test: the test processes share the work
# (one test over them all was the suite's longest).
SHARES = 4


@pytest.mark.exhaustive
@pytest.mark.parametrize("share", range(SHARES))
def test_no_operation_answers_with_a_server_error_or_off_its_schema(
    portal_app: tuple[object, str], share: int
) -> None:
    app, token = portal_app
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    operations = 0
    for index, result in enumerate(schema.get_all_operations()):
        # An operation the schema does not describe properly fails the test here.
        assert isinstance(result, Ok), result.err()
        operations += 1
        if index % SHARES != share:
            continue
        operation = result.ok()

        @hypothesis_settings(
            max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None
        )
        @given(case=operation.as_strategy())
        def exercise(case: schemathesis.Case[Any]) -> None:
            response = case.call(headers=bearer(token))
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )

        try:
            exercise()
        except Exception as exc:  # collect them all, then report every failing operation
            failures.append(f"{operation.label}: {str(exc)[:600]}")
    assert operations >= 30, operations  # the schema really was read
    assert failures == []
