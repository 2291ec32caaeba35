"""Stand-ins for what a test controls: the job queue's sends, and the clock."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.datastructures import State


@dataclass
class RecordingQueue:
    """A JobQueue that records what was sent, for tests of the sending rules."""

    sent: list[tuple[int, str]] = field(default_factory=list)
    delays: dict[int, float] = field(default_factory=dict)  # job id: the last delay asked

    def send(self, job_id: int, kind: str, delay_s: float = 0.0) -> None:
        self.sent.append((job_id, kind))
        self.delays[job_id] = delay_s


@dataclass
class SetClock:
    """The app's and the services' "now" in tests that act at set times (the CLI's --now)."""

    now: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.now

    def to_publication_of(self, cohort_id: str) -> None:
        """Move to the cohort's publication time (Wednesday 08:00 Pacific)."""
        from zoneinfo import ZoneInfo

        from app.core.cohorts import Cohort

        cohort = Cohort.parse(cohort_id)
        assert cohort is not None, cohort_id
        self.now = max(self.now, cohort.publication_at(ZoneInfo("America/Los_Angeles")))


def state_of(client: TestClient) -> State:
    """The state of the portal *client* talks to: the queue and clock it was built with."""
    app = client.app
    assert isinstance(app, FastAPI)
    return app.state
