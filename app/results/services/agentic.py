"""The agentic benchmarks run identical traffic (rules §3), so one system's (or one
organisation's) curves for the different models compare on one chart, x = e2e
interactivity."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.publishing.domain.snapshot import PublishedPoint
from app.results.services.compare import Chart, chart_curve, x_title
from app.results.services.results import STATUSES, QueryProblem, visible_curves


class ModelCurve(BaseModel):
    benchmark: str
    system: str
    status: str
    result_id: str | None
    submission: str
    points: list[PublishedPoint]
    step_line: list[list[float]]


class AgenticModels(BaseModel):
    organization: str
    system: str | None = Field(description="null: every system of the organisation")
    cohort: str | None = Field(description="null: the current results")
    curves: list[ModelCurve] = Field(description="by system, then model")

    def chart(self) -> Chart:
        who = self.system or self.organization
        return Chart(
            title=f"{who} · agentic models on identical traffic",
            x_title=x_title(True),
            curves=[
                chart_curve(
                    f"{c.benchmark} · {c.system} ({c.status})",
                    c.status,
                    c.step_line,
                    c.points,
                    "e2e_avg_interactivity",
                )
                for c in self.curves
            ],
        )


def agentic_models(
    session: Session, organization: str, system: str | None, cohort: str | None
) -> AgenticModels:
    def same(a: str, b: str) -> bool:
        return a.strip().lower() == b.strip().lower()

    found = [
        c
        for c in visible_curves(session, cohort)
        if c.is_agentic
        and c.status in STATUSES
        and same(c.organization, organization)
        and (system is None or same(c.system_name, system))
    ]
    if not found:
        who = f"{system!r} of {organization!r}" if system else repr(organization)
        raise QueryProblem(
            "system" if system else "organization", f"{who} published no agentic curve"
        )
    found.sort(key=lambda c: (c.system_name.lower(), c.benchmark_model))
    return AgenticModels(
        organization=found[0].organization,
        system=found[0].system_name if system else None,
        cohort=cohort,
        curves=[
            ModelCurve(
                benchmark=c.benchmark_model,
                system=c.system_name,
                status=c.status,
                result_id=c.result_id,
                submission=c.submission,
                points=c.snapshot.points,
                step_line=c.snapshot.step_line,
            )
            for c in found
        ],
    )
