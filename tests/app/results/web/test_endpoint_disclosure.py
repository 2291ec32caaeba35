"""One result's report: a client-over-network result's endpoint and contact are among
its public disclosures (rules §11.10), as text; a result that discloses no endpoint
names none."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from app.db.models import Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.submissions import finalize_unreviewed, pt, submit

ENDPOINT = "https://api.example.org/v1"


def _served(root: Path) -> None:
    for path in root.glob("results/*/*/r*/system_desc.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "endpoint_url": ENDPOINT}))


def test_a_results_endpoint_and_its_contact_are_on_its_report(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    ids = {}
    for name, edits in (("served", (_served,)), ("premises", ())):
        factory = BundleFactory(system=SystemSpec(name=f"Acme {name}"), submission_id=name)
        ids[name] = submit(database, settings,
                           factory.archive(tmp_path / f"{name}.tar.gz", edits=edits))  # fmt: skip
    with database.session() as session:
        for sid in ids.values():
            finalize_unreviewed(session, settings, session.get(Submission, sid), pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
        public = {name: must(session.get(Submission, sid)).public_id for name, sid in ids.items()}
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        curves = client.get("/api/v1/results", params={"limit": "all"}).json()["curves"]
        for name, public_id in public.items():
            [curve] = [c for c in curves if c["submission"] == public_id]
            system = client.get(f"/api/v1/results/{curve['result_id']}").json()["cards"]["System"]
            if name == "served":
                assert system["Endpoint"] == ENDPOINT
                assert system["Endpoint contact"] == "mlperf@example.org"
            else:
                assert "Endpoint" not in system and "Endpoint contact" not in system
