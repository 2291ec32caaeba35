"""The agentic benchmarks run identical traffic (rules §3), so one system's (or one
organisation's) curves for the different models compare on one chart, x = e2e
interactivity."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.per_user import per_user_title
from app.publishing.domain.snapshot import PublishedPoint
from app.results.domain.colours import system_key
from app.results.services.compare import Chart, chart_curve
from app.results.services.public import (
    QueryProblem,
    checked_cohort,
    checked_name,
    checked_statuses,
    footnotes,
    public_curves,
    result_names,
)


class ModelCurve(BaseModel):
    benchmark: str
    system: str
    status: str
    peer_review_pending: bool = Field(description="a provisional result: preliminary")
    availability: str | None = Field(description="Available, Preview or RDI")
    result_name: str = Field(description="as the rules name the result")
    tags: list[str] = Field(description="the rules' tags")
    result_id: str | None
    submission: str
    points: list[PublishedPoint]
    step_line: list[list[float]]


class AgenticModels(BaseModel):
    organization: str
    system: str | None = Field(description="null: every system of the organisation")
    cohort: str | None = Field(description="null: the current results")
    statuses: list[str] = Field(description="the statuses shown (default as the results)")
    curves: list[ModelCurve] = Field(description="by system, then model")
    footnotes: list[str]

    def chart(self) -> Chart:
        who = self.system or self.organization
        return Chart(
            title=f"{who} · agentic models on identical traffic",
            x_title=per_user_title(True),
            curves=[
                chart_curve(
                    f"{c.benchmark} · {c.system} ({c.status}"
                    + (" · peer review pending)" if c.peer_review_pending else ")"),
                    c.status,
                    c.step_line,
                    c.points,
                    c.availability,
                    c.tags,
                )
                for c in self.curves
            ],
            caption=f"{result_names(self.curves)} · agentic models · {who} · "
            + (f"cohort {self.cohort}" if self.cohort else "the current results")
            + f" · {', '.join(self.statuses)}",
            footnotes=self.footnotes,
            # Each model is its own line: a system's first in the system's own colour (as
            # every chart draws it), its other models in the next free ones.
        ).coloured(self._colour_keys())

    def _colour_keys(self) -> list[str]:
        keys, seen = [], set()
        for c in self.curves:
            key = system_key(self.organization, c.system)
            keys.append(key if key not in seen else f"{key}\x00{c.benchmark}")
            seen.add(key)
        return keys


def agentic_models(
    session: Session,
    organization: str,
    system: str | None,
    cohort: str | None,
    statuses: Sequence[str] = (),
) -> AgenticModels:
    """From the public record (app.results.services.public), with its defaults: the
    current results, verified and provisional unless unverified is asked for."""
    organization = checked_name("organization", organization) or ""
    system = checked_name("system", system)
    cohort = checked_cohort(session, cohort)
    chosen = checked_statuses(statuses)

    def same(a: str, b: str) -> bool:
        return a.strip().lower() == b.strip().lower()

    found = [
        c
        for c in public_curves(session, cohort, chosen)
        if c.is_agentic
        and same(c.organization, organization)
        and (system is None or same(c.system, system))
    ]
    if not found:
        who = f"{system!r} of {organization!r}" if system else repr(organization)
        raise QueryProblem(
            "system" if system else "organization", f"{who} published no agentic curve"
        )
    found.sort(key=lambda c: (c.system.lower(), c.benchmark_model))
    return AgenticModels(
        organization=found[0].organization,
        system=found[0].system if system else None,
        cohort=cohort,
        statuses=list(chosen),
        curves=[
            ModelCurve(
                benchmark=c.benchmark_model,
                system=c.system,
                status=c.status,
                peer_review_pending=c.peer_review_pending,
                availability=c.availability,
                result_name=c.result_name,
                tags=c.tags,
                result_id=c.result_id,
                submission=c.submission,
                points=c.points,
                step_line=c.step_line,
            )
            for c in found
        ],
        footnotes=footnotes(found),
    )
