"""The OpenAPI document describes every answer of the API, not only its requests."""

from __future__ import annotations

from typing import Any

from app.main import create_app
from app.settings import Settings
from tests.support.fakes import RecordingQueue

# Answers that are files (their media type and a binary schema are declared instead); a
# ledger entry is JSON, but served as the exact bytes its signature covers.
FILES = {
    ("get", "/api/v1/cohorts/{cohort_id}/export"),
    ("get", "/api/v1/cohorts/{cohort_id}/dataset"),
    ("get", "/api/v1/points.{fmt}"),
    ("get", "/api/v1/submissions/{public_id}/archive"),
    ("get", "/api/v1/record/entries/{seq}"),
    ("get", "/api/v1/record/entries/{seq}/signature"),
    ("get", "/api/v1/record/chain.jsonl"),
}


def _spec(settings: Settings) -> dict[str, Any]:
    spec: dict[str, Any] = create_app(settings, queue=RecordingQueue()).openapi()
    return spec


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    resolved: dict[str, Any] = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return resolved


def test_every_successful_answer_has_a_described_schema(settings: Settings) -> None:
    spec = _spec(settings)
    undescribed = []
    operations = 0
    for path, methods in spec["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in methods.items():
            operations += 1
            if (method, path) in FILES:
                continue
            for status, answer in operation["responses"].items():
                if not status.startswith("2") or status == "204":
                    continue
                schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
                described = _resolve(spec, schema)
                if not described.get("properties") and not described.get("anyOf"):
                    undescribed.append(f"{method.upper()} {path} {status}")
    assert operations >= 39
    assert undescribed == []


def test_read_models_name_their_fields_and_the_snapshot_has_its_own_schema(
    settings: Settings,
) -> None:
    schemas = _spec(settings)["components"]["schemas"]
    results = schemas["ResultsPage"]["properties"]
    assert {"curves", "ranking", "sla", "cohort", "benchmarks"} <= set(results)
    point = schemas["ResultPoint"]["properties"]
    assert {"dir", "concurrency", "system_tps", "admissible", "region_name"} <= set(point)
    # Moments are date-times in the document, whatever the wire's exact spelling.
    assert schemas["SubmissionSummary"]["properties"]["uploaded_at"]["format"] == "date-time"
    # The timeline says "from" and "to", as it always did.
    assert {"from", "to"} <= set(schemas["TimelineEntry"]["properties"])


def test_the_document_names_the_bearer_token_and_tags_every_operation(settings: Settings) -> None:
    """Swagger UI's Authorize comes from the bearer scheme; no operation sits under
    'default'."""
    spec = _spec(settings)
    assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert {"bearer": []} in spec["security"] and {} in spec["security"]  # optional
    untagged = [
        f"{method} {path}"
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
        if not operation.get("tags")
    ]
    assert untagged == []


def test_the_chairs_publication_documents_its_conflict(settings: Settings) -> None:
    """Issue 48: /docs listed the publish operation's 409 as "Undocumented"."""
    answers = _spec(settings)["paths"]["/api/v1/cohorts/{cohort_id}/publish"]["post"]["responses"]
    conflict = answers["409"]
    assert "publication time" in conflict["description"]
    assert conflict["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
