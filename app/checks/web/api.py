"""The rule catalogue: every rule a finding or a refused upload can name."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.checks.domain.findings import Source
from app.checks.domain.rules import Stage
from app.checks.services.rules import RuleCatalogue, RuleView, rule_catalogue, rule_view
from app.web.api_errors import error_response

router = APIRouter(prefix="/api/v1", tags=["rules"])


@router.get("/rules", response_model=RuleCatalogue)
def read_rules(stage: Stage | None = None, source: Source | None = None) -> RuleCatalogue:
    """Every rule: the official checker's (passed through as it names them) and the
    portal's own, from the archive's safeguards to the reproduction margin."""
    return rule_catalogue(stage=stage, source=source)


@router.get("/rules/{rule_id}", response_model=RuleView)
def read_rule(rule_id: str) -> RuleView | JSONResponse:
    rule = rule_view(rule_id)
    if rule is None:
        message = f"no rule {rule_id!r}; GET /api/v1/rules lists them"
        return error_response("not-found", message, 404)
    return rule
