"""What a publication keeps of each curve: a versioned schema of its own.

A publication is immutable (architecture, decision 11): what a released cohort showed is
read back years later, by code that has changed since. So the record is not any page's
view but this schema, with its version stored beside each curve; a change of shape is a
new version, and the reader keeps reading the old ones.

Version 1 is the shape publications had before the schema was written down, so every
stored record is valid version 1. Version 2 adds each point's reporting basis (what its
point.yaml declares of the steady state); a version-1 record reads as one without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from app.core.accuracy import PointAccuracy
from app.core.finish import FinishReasons
from app.core.per_user import per_user
from app.core.regions import Offline
from app.core.run_summary import NewerSummaryFields
from app.core.views import AS_STORED, Metric, left_out_if_none
from app.publishing.domain.repeatability import Repeatability
from app.publishing.domain.standing import reporting_basis

SNAPSHOT_VERSION = 2
KNOWN_VERSIONS = (1, 2)


class Percentiles(BaseModel):
    """A point's tail, in milliseconds, as its run summary reports it: by percentile
    ("50", "90", "95", "99"). P90 is the official one (rules §1.1); the others are for
    reading, never charted as the result."""

    model_config = ConfigDict(frozen=True)

    ttft_ms: dict[str, Metric] = Field(default_factory=dict)
    tpot_ms: dict[str, Metric] = Field(default_factory=dict)
    latency_ms: dict[str, Metric] = Field(default_factory=dict, description="issue to completion")


class FrozenRecount(BaseModel):
    """The re-count a publication shows for a point, frozen with it: goodput reads this
    request log, over this window, whatever is re-counted later (a later re-count is a
    new version, from the next publication on)."""

    model_config = ConfigDict(frozen=True)

    request_log: int = Field(description="the stored request record goodput reads")
    window: str = Field(description="steady_state or total: the window goodput covers")
    duration_ms: float | None = Field(description="that window's duration")
    output_tokens: int | None = Field(description="the re-counted output tokens")


class EngagedPart(BaseModel):
    """The part of the system a point ran on, where its ``nodes_used`` engages fewer nodes
    than the system provisions (rules §4.5.3): the point's power denominator, accelerators
    and the cost at a price are this part's, not the whole system's."""

    model_config = ConfigDict(frozen=True)

    share: float = Field(description="nodes engaged / nodes provisioned")
    accelerators: int | None = Field(description="the accelerators of the engaged nodes")
    power_kw: float | None = Field(description="the point's power denominator (§4.5.3)")


class ReportingBasisView(BaseModel):
    """What a point's numbers rest on, as its point.yaml declares it (rules §2.3–2.4):
    the coverage status and the detector's verdict are stored; whether that makes the
    steady-state window the official basis, and the words for it, are derived."""

    model_config = ConfigDict(frozen=True)

    status: str | None = None
    verdict: str | None = None

    @computed_field(description="the steady-state window is the official basis (§2.2)")  # type: ignore[prop-decorator]
    @property
    def steady(self) -> bool:
        basis = reporting_basis(self.status, self.verdict)
        return basis is not None and basis.steady

    @computed_field(description="the basis in words: steady state, low confidence, ...")  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        basis = reporting_basis(self.status, self.verdict)
        return basis.label if basis is not None else "whole run"


class PublishedPoint(BaseModel):
    """An operating point as published: what buyers chart, rank and export, rounded to
    three decimals; a metric the bundle did not measure is left out."""

    model_config = ConfigDict(frozen=True)

    dir: str = Field(description="the point's folder in the bundle, e.g. r64")
    concurrency: int
    offline: Offline = Offline.NONE
    system_tps: Metric
    region: str | None = left_out_if_none("the concurrency region, rules §1.4")
    tps_per_user: Metric | None = left_out_if_none("1000 / TPOT P90")
    tpot_p90_ms: Metric | None = left_out_if_none()
    ttft_p90_ms: Metric | None = left_out_if_none()
    e2e_avg_interactivity: Metric | None = left_out_if_none("agentic benchmarks' per-user metric")
    per_user: Metric | None = left_out_if_none(
        "the figure per user the curve is drawn and filtered on: tps_per_user, or "
        "e2e_avg_interactivity on an agentic benchmark (derived: not stored in the record)"
    )
    system_tps_per_kw: Metric | None = left_out_if_none("per provisioned kW")
    accuracy: str | None = left_out_if_none("the accuracy gate: passed or failed")
    percentiles: Percentiles | None = left_out_if_none("P50/P90/P95/P99 where the summary has them")
    recount: FrozenRecount | None = left_out_if_none(
        "the re-count published with the point (goodput's request record), if it had one"
    )
    engaged: EngagedPart | None = left_out_if_none(
        "the part of the system the point ran on, when nodes_used engages fewer nodes than "
        "it has (§4.5.3); left out when the point ran on the whole system"
    )
    finish_reasons: FinishReasons | None = left_out_if_none(
        "how the responses ended, where the summary says (newer clients)"
    )
    summary_fields: NewerSummaryFields | None = left_out_if_none(
        "input_sequence_lengths, early_stopping_percentiles and run_config, where the "
        "summary has them (newer clients)"
    )
    accuracy_detail: PointAccuracy | None = left_out_if_none(
        "each entry of the point's accuracy file and each thresholded metric as the gate "
        "compared it, where the point carries accuracy"
    )
    repeatability: Repeatability | None = left_out_if_none(
        "the submitted run and the portal's reproductions of the point, as published: their "
        "spread (derived, not an MLPerf figure)"
    )
    reporting_basis: ReportingBasisView | None = left_out_if_none(
        "the steady state the point declares (point.yaml): left out where it declares none "
        "(an Offline or agentic run: the whole run, rules §2.4)"
    )

    @property
    def cut_short(self) -> str | None:
        """The note the point carries where its answers were cut short (app.core.finish)."""
        return self.finish_reasons.cut_short if self.finish_reasons else None


class OfflineCeiling(BaseModel):
    system_tps: float
    concurrency: int


class InvalidatedPoint(BaseModel):
    """A point the chair invalidated: it stays in the archive, tagged, with the reason
    (rules §11.7)."""

    dir: str
    concurrency: int
    reason: str | None


class CurveSnapshot(BaseModel):
    """One curve of a publication (schema version 1)."""

    system: str = Field(description="the system's display name")
    system_dir: str = Field(description="the system's folder in the bundle")
    benchmark_model: str
    dataset: str | None
    is_agentic: bool
    x_metric: str = Field(description="tps_per_user, or e2e_avg_interactivity (agentic)")
    c_max: int | None
    c_min: int | None
    regions: dict[str, list[int]] | None
    # A Sequence (read-only, covariant): a view of the curve may carry richer points.
    points: Sequence[PublishedPoint] = Field(description="the active points")
    step_line: list[list[float]] = Field(description="the official step curve, [x, y] corners")
    frontier: list[list[float]] = Field(description="the Pareto-optimal points, [x, y]")
    offline_ceiling: OfflineCeiling | None
    elected_offline: str | None = Field(description="the point elected as Offline, if any")
    invalidated_points: list[InvalidatedPoint] = []

    @model_validator(mode="after")
    def _per_user_on_every_point(self) -> Self:
        # Derived from the curve's kind, so never stored: every reader of a record gets
        # it, whenever the record was written.
        for p in self.points:
            figure = per_user(p, self.is_agentic)
            if p.per_user != figure:
                # Set on the point as it is being read, before anyone holds it: a copy of
                # each of a large record's points took seconds.
                p.__dict__["per_user"] = figure
                p.__pydantic_fields_set__.add("per_user")
        return self

    def stored(self) -> dict[str, Any]:
        """The document written into the publication: no derived figure."""
        derived: Any = {"per_user": True, "reporting_basis": {"steady": True, "label": True}}
        return self.model_dump(mode="json", exclude={"points": {"__all__": derived}})


def read_snapshot(version: int, data: dict[str, Any]) -> CurveSnapshot:
    """A stored curve, whatever version it was written in."""
    _known(version)
    return CurveSnapshot.model_validate(data)


def read_stored_snapshot(version: int, text: str) -> CurveSnapshot:
    """A stored curve from its JSON text as the database keeps it (read straight into
    the model, no dictionaries between)."""
    _known(version)
    return CurveSnapshot.model_validate_json(text, context=AS_STORED)


def _known(version: int) -> None:
    if version not in KNOWN_VERSIONS:
        raise ValueError(f"publication snapshot version {version} is not known to this portal")
