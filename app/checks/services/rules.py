"""The rule catalogue as the API serves it and the ``/rules`` page shows it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.checks.domain.compliance import checker_version
from app.checks.domain.findings import Severity, Source
from app.checks.domain.rules import STAGE_TITLES, Stage, catalogue


class RuleView(BaseModel):
    """A catalogued rule (``RuleView.model_validate(rule)``)."""

    model_config = ConfigDict(from_attributes=True)

    id: str = Field(examples=["path-traversal"])
    title: str
    clause: str = Field(description="the rule-book section, or 'portal' for a safeguard")
    stage: Stage = Field(description="when the rule is applied")
    source: Source = Field(description="official: decided by the official checker")
    severity: Severity | None = Field(
        description="the worst a finding of the rule can be; official rules: as the checker decides"
    )
    explanation: str
    fix: str | None


class StageView(BaseModel):
    stage: Stage
    title: str
    rules: list[RuleView]


class RuleCatalogue(BaseModel):
    checker_version: str = Field(description="the official checker the official rules are from")
    data: list[RuleView]

    def by_stage(self) -> list[StageView]:
        return [
            StageView(stage=stage, title=STAGE_TITLES[stage], rules=rules)
            for stage in Stage
            if (rules := [r for r in self.data if r.stage == stage])
        ]


def rule_catalogue(stage: Stage | None = None, source: Source | None = None) -> RuleCatalogue:
    rules = [
        RuleView.model_validate(rule)
        for rule in catalogue().values()
        if (stage is None or rule.stage == stage) and (source is None or rule.source == source)
    ]
    return RuleCatalogue(checker_version=checker_version(), data=rules)


def rule_view(rule_id: str) -> RuleView | None:
    rule = catalogue().get(rule_id)
    return RuleView.model_validate(rule) if rule is not None else None
