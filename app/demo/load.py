"""Demo results for a new portal, loaded through the real pipeline.

Bundles are built with the official builder, uploaded with ``accept_upload``, checked by
``run_checks`` (the worker's own service, run here with a clock set before each cohort's
cutoff), finalized where the story needs verified results, and published cohort by cohort.
One point of each curve carries run events, which the checks queue for a re-count; the
loader runs those re-counts too, with the demo tokenizer (``app/demo/tokenizer.py``), so
goodput has its per-request records. Nothing is inserted behind the pipeline's back.
Six systems, two single-turn benchmarks and one agentic benchmark, three cohorts, all
three statuses, one dedicated and one elected Offline result.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.findings import Severity
from app.core.lifecycle import PublicationMode
from app.db.models import Reproduction, Submission
from app.db.session import Database
from app.demo.bundles import (
    DEMO_SUPER_PASS_SOURCE,
    DEMO_SUPER_PASSES,
    BundleFactory,
    CurveSpec,
    SystemSpec,
)
from app.demo.tokenizer import DemoTokenCounter
from app.jobs.queue import CHECK_SUBMISSION
from app.pipeline import run_checks
from app.review.services.releases import publish_cohort
from app.review.services.review import finalize
from app.runs.services.retokenization import RETOKENIZE_POINT, run_retokenization
from app.runs.services.super_passes import define_super_pass
from app.settings import Settings
from app.submissions.services.intake import accept_upload
from app.submissions.services.points import point_label
from app.submissions.services.storage import receive_local

log = logging.getLogger(__name__)

COHORTS = ("2026-10-C1", "2026-11-C0", "2026-11-C1")
DEMO_REVIEW_OVERRIDE = (
    "demo data: the portal's demo has no reviewers, so its results are finalized as loaded"
)
# A moment comfortably before each cohort's cutoff (Pacific business days).
CHECKED_AT = {
    "2026-10-C1": dt.datetime(2026, 10, 14, 18, tzinfo=dt.UTC),
    "2026-11-C0": dt.datetime(2026, 10, 28, 18, tzinfo=dt.UTC),
    "2026-11-C1": dt.datetime(2026, 11, 11, 18, tzinfo=dt.UTC),
}
PUBLISHED_AT = {
    "2026-10-C1": dt.datetime(2026, 10, 21, 15, tzinfo=dt.UTC),
    "2026-11-C0": dt.datetime(2026, 11, 4, 16, tzinfo=dt.UTC),
    "2026-11-C1": dt.datetime(2026, 11, 18, 16, tzinfo=dt.UTC),
}

SYSTEMS = {
    "acme": SystemSpec(
        name="Acme H200 x8",
        shortened_name="Acme-H200x8",
        org="Acme Corp",
        accelerator="NVIDIA H200",
        accelerator_tdp_w=700,
        peak_tps_per_user=190,
        saturation_tps=42_000,
    ),
    "borealis": SystemSpec(
        name="Borealis MI355X x8",
        shortened_name="Borealis-MI355X",
        org="Borealis AI",
        accelerator="AMD Instinct MI355X",
        accelerator_tdp_w=1400,
        accelerator_memory="288 GB",
        interconnect="Infinity Fabric",
        peak_tps_per_user=170,
        saturation_tps=61_000,
        ttft_base_ms=55,
        ttft_per_user_ms=0.6,
    ),
    "cumulus": SystemSpec(
        name="Cumulus B200 x8",
        shortened_name="Cumulus-B200x8",
        org="Cumulus Cloud",
        accelerator="NVIDIA B200",
        accelerator_tdp_w=1000,
        framework="TensorRT-LLM 1.0",
        precision="fp8",
        accelerator_memory="180 GB",
        interconnect="NVLink 5",
        peak_tps_per_user=240,
        saturation_tps=78_000,
        ttft_base_ms=26,
        ttft_per_user_ms=0.5,
    ),
    "dune": SystemSpec(
        name="Dune Gaudi 3 x8",
        shortened_name="Dune-Gaudi3",
        org="Dune Systems",
        accelerator="Intel Gaudi 3",
        accelerator_tdp_w=900,
        accelerator_memory="128 GB",
        interconnect="RoCE",
        peak_tps_per_user=150,
        saturation_tps=35_000,
        availability="Preview",
        ttft_base_ms=70,
        ttft_per_user_ms=1.4,
    ),
    "ember": SystemSpec(
        name="Ember GB200 x4",
        shortened_name="Ember-GB200x4",
        org="Ember Compute",
        accelerator="NVIDIA GB200",
        accelerator_tdp_w=1200,
        framework="SGLang 0.5",
        precision="fp8",
        accelerator_memory="186 GB",
        interconnect="NVLink 5",
        accelerators_per_node=4,
        estimated_power=True,  # its TDP from the rules' defaults: "MLC Estimated Power"
        peak_tps_per_user=260,
        saturation_tps=52_000,
        ttft_base_ms=22,
        ttft_per_user_ms=0.45,
    ),
    "fjord": SystemSpec(
        name="Fjord L40S x8",
        shortened_name="Fjord-L40Sx8",
        org="Fjord Labs",
        accelerator="NVIDIA L40S",
        accelerator_tdp_w=350,
        accelerator_memory="48 GB",
        interconnect="PCIe Gen4",
        peak_tps_per_user=120,
        saturation_tps=14_000,
        division="RDI",
        availability="RDI",
        ttft_base_ms=90,
        ttft_per_user_ms=2.0,
    ),
}


@dataclass(frozen=True)
class DemoSubmission:
    system: str
    curves: tuple[CurveSpec, ...]
    cohort: str
    status: str  # what it should end up as: verified, provisional or unverified
    finalize_in: str | None = None  # cohort by which review finishes (verified from then on)
    mode: str = "provisional"  # rules §11.2: shown as "peer review pending" until finalized
    # Reproductions the demo records as finished runs: (point folder, each run's system
    # tok/s as a share of the submitted run's), so the record shows their spread.
    reproduced: tuple[tuple[str, tuple[float, ...]], ...] = ()


DEMO: tuple[DemoSubmission, ...] = (
    DemoSubmission(
        "acme",
        (CurveSpec(), CurveSpec(model="gpt-oss-120b", speed=0.35)),
        "2026-10-C1",
        "verified",
        finalize_in="2026-11-C0",
        reproduced=(("r1024", (0.97, 1.015)), ("r64", (0.99, 1.01, 0.985))),
    ),
    DemoSubmission(
        "borealis",
        (CurveSpec(offline="elected"),),
        "2026-10-C1",
        "verified",
        finalize_in="2026-10-C1",
        mode="confidential",
    ),
    DemoSubmission(
        "cumulus",
        (CurveSpec(), CurveSpec(model="kimi-k3", offline="none", speed=0.5)),
        "2026-11-C0",
        "provisional",
    ),
    DemoSubmission(
        "dune",
        # An older client's summaries: none of the newer fields (finish reasons, input
        # lengths, early-stopping bounds, run_config).
        (CurveSpec(model="gpt-oss-120b", speed=0.3, older_summaries=True),),
        "2026-11-C0",
        "unverified",
    ),
    DemoSubmission(
        "ember",
        # Its busiest points' steady-state windows are short of the §6.2 minimum: low
        # confidence, their whole runs the official basis (rules §2.3).
        (CurveSpec(short_window_from=512), CurveSpec(model="kimi-k3", offline="none", speed=0.6)),
        "2026-11-C1",
        "provisional",
    ),
    # Borealis again, on a newer stack: finalized, it supersedes its first result (rules
    # §11.8), which stays in its history.
    DemoSubmission(
        "borealis",
        (CurveSpec(offline="elected", speed=1.06),),
        "2026-11-C1",
        "verified",
        finalize_in="2026-11-C1",
        mode="confidential",
    ),
    DemoSubmission(
        "fjord",
        # Its two busiest points answer partly by cutting responses at the length limit,
        # and its accuracy slips as it is pushed (still above the threshold).
        (CurveSpec(speed=0.8, cut_short_from=512, accuracy_drift=0.0008),),
        "2026-11-C1",
        "verified",
        finalize_in="2026-11-C1",
        mode="confidential",
    ),
)


# The point of each demo curve whose run events are in the bundle (goodput needs them):
# concurrency 8, in Low Concurrency, where the interactive and agentic workloads look.
EVENTS_AT = 8
# How long after its checks the demo's re-count of a point is said to have finished.
RECOUNT_TAKES = dt.timedelta(minutes=10)


@dataclass
class _HeldQueue:
    """The demo runs every job in-process with its own clock: what the services send is
    held here, to be run next, instead of going to a worker."""

    held: list[tuple[int, str]] = field(default_factory=list)

    def send(self, job_id: int, kind: str, delay_s: float = 0.0) -> None:
        self.held.append((job_id, kind))  # the demo's store is local: no wait to honour

    def take(self) -> list[tuple[int, str]]:
        taken, self.held = self.held, []
        return taken


@cache
def _bundle(item: DemoSubmission, number: int) -> bytes:
    """*item*'s bundle as the CLI packs it; built once per process (the events take a
    second or two, and the tests load the demo many times)."""
    factory = BundleFactory(
        system=SYSTEMS[item.system],
        curves=tuple(replace(curve, events_at=EVENTS_AT) for curve in item.curves),
        submission_id=f"demo-{number:03d}",
        target_cohort=item.cohort,
    )
    with tempfile.TemporaryDirectory() as tmp:
        return factory.archive(Path(tmp) / f"{item.system}.tar.gz").read_bytes()


def _at(at: dt.datetime) -> dt.datetime:
    """A clock stopped at *at* (when the demo's checks are said to have finished)."""
    return at


def is_empty(database: Database) -> bool:
    with database.session() as session:
        return not session.scalar(select(func.count()).select_from(Submission))


def define_demo_super_passes(database: Database, settings: Settings) -> None:
    """Record the demo's benchmark definitions (its super-pass sizes) as an operator would."""
    with database.session() as session:
        for dataset, size in DEMO_SUPER_PASSES.items():
            define_super_pass(
                session,
                settings,
                dataset,
                size,
                DEMO_SUPER_PASS_SOURCE,
                clock=partial(_at, CHECKED_AT[COHORTS[0]]),
            )
        session.commit()


def _record_reproductions(
    session: Session, submission: Submission, item: DemoSubmission, at: dt.datetime
) -> None:
    """The demo's reproductions, recorded as finished runs (the demo has no endpoint to
    run them against, and says so on each), before the record is published."""
    if not item.reproduced:
        return
    curve = next(c for c in submission.curves if c.benchmark_model == "llama3_1-8b")
    for folder, shares in item.reproduced:
        point = next(p for p in curve.points if p.dir_name == folder)
        for n, share in enumerate(shares, start=1):
            session.add(
                Reproduction(
                    submission=submission,
                    point_id=point.id,
                    point_label=point_label(curve, point),
                    endpoint_url="http://demo.invalid",
                    model=curve.benchmark_model,
                    concurrency=point.concurrency,
                    time_cap_s=point.duration_ms / 1000,
                    requested_by="demo",
                    created_at=at,
                    finished_at=at + dt.timedelta(hours=n),
                    system_tps=point.system_tps * share,
                    tps_per_user=(point.tps_per_user or 0) / share or None,
                    n_completed=point.n_samples_completed,
                    n_failed=0,
                    verdict=Severity.INFO,
                    message="a demo reproduction: recorded by the demo loader, not run",
                )
            )
    session.commit()


def load_demo(database: Database, settings: Settings) -> int:
    """Load the demo set; returns the number of submissions uploaded."""
    define_demo_super_passes(database, settings)
    queue = _HeldQueue()
    uploaded: list[tuple[DemoSubmission, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, item in enumerate(DEMO, start=1):
            archive = Path(tmp) / f"{item.system}.tar.gz"
            archive.write_bytes(_bundle(item, number))
            with database.session() as session:
                accepted = accept_upload(
                    session=session,
                    settings=settings,
                    queue=queue,
                    received=receive_local(archive, settings.tmp_dir, settings.max_upload_bytes),
                    filename=archive.name,
                    for_review=item.status != "unverified",
                )
                accepted.submission.publication_mode = PublicationMode(item.mode)
                session.commit()
                job = next(j for j in accepted.submission.jobs if j.kind == CHECK_SUBMISSION)
                queue.take()  # the check job: run here, with the demo's clock
                run_checks(
                    session=session,
                    settings=settings,
                    job_id=job.id,
                    clock=partial(_at, CHECKED_AT[item.cohort]),
                    queue=queue,
                )
                for job_id, kind in queue.take():
                    if kind != RETOKENIZE_POINT:
                        raise AssertionError(f"the demo does not run {kind} jobs")
                    run_retokenization(
                        session=session,
                        settings=settings,
                        job_id=job_id,
                        clock=partial(_at, CHECKED_AT[item.cohort] + RECOUNT_TAKES),
                        counter=DemoTokenCounter(),
                    )
                _record_reproductions(
                    session, accepted.submission, item, CHECKED_AT[item.cohort] + RECOUNT_TAKES
                )
                uploaded.append((item, accepted.submission.id))
    with database.session() as session:
        for cohort in COHORTS:
            for item, submission_id in uploaded:
                if item.finalize_in == cohort:
                    submission = session.get(Submission, submission_id)
                    assert submission is not None
                    if submission.state == "passed_checks":
                        finalize(
                            session=session,
                            settings=settings,
                            submission=submission,
                            at=PUBLISHED_AT[cohort] - dt.timedelta(days=2),
                            # The demo has no reviewers: it says so on each timeline.
                            override=DEMO_REVIEW_OVERRIDE,
                        )
            publish_cohort(
                session=session, settings=settings, cohort_id=cohort, at=PUBLISHED_AT[cohort]
            )
        session.commit()
    log.info("loaded %d demo submissions", len(uploaded))
    return len(uploaded)
