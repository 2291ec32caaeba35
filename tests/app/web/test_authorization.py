"""Every state-changing route asks the one authorisation rule.

The routes are found from the app itself (the OpenAPI document and the page routers), so
a route added without an entry here fails the test. Each is sent a valid request, the one
its rightful caller would send, by callers it must refuse: a member of another
(submitting) organisation, a reviewer who is not the assigned one, a token narrower than
its owner's role, and nobody at all. Each answer must be a refusal, and nothing stored
may change: every table is compared row by row before and after.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.main import FEATURES, create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.fakes import RecordingQueue
from tests.support.official_cli import registered_run

LATER = (dt.date.today() + dt.timedelta(days=20)).isoformat()
REFUSED = {401, 403, 404}
# Not acts on anything of anyone else's: signing in and out, and one's own inbox.
# A public address (an IP literal: nothing to resolve) the webhooks may be delivered to.
PUBLIC_HOOK = "https://93.184.216.34/hooks/mlperf"
OWN_ACTS = {"/login", "/logout", "/inbox/read", ("POST", "/api/v1/inbox/read")}


@dataclass
class World:
    client: TestClient
    database: Database
    queue: RecordingQueue
    tokens: dict[str, str]
    sid: str
    point: str  # <system>/<model>/r<N>
    objection: str
    recount: str
    archive: bytes
    run: str  # a measured run of Acme's (the official Submission API's)
    composed: str  # a submission of Acme's composed from it, awaiting its bundle
    view: str  # a view of the results Acme's submitter saved
    webhook: str  # a webhook Acme's submitter subscribed
    fraud: str  # a fraud report Cumulus's reviewer filed against Acme's submission


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, good_archive: Path, rival_archive: Path
) -> Iterator[World]:
    """Acme's confidential submission in review, its assigned reviewer (Cumulus), an
    objection filed and a re-count queued; Borealis has submitted too (so it sees Acme's
    results, rules §11.9), and Dune's reviewer is on the committee but not assigned."""
    data = tmp_path_factory.mktemp("authz") / "data"
    data.mkdir()
    datasets = data / "datasets"
    datasets.mkdir()
    (datasets / "cnn_dailymail.jsonl").write_text('{"prompt": "summarise this"}\n')
    settings = Settings(
        data_dir=data, reproduction_allowed_endpoints=["127.0.0.1:*"], demo_data=False
    )
    upgrade(settings.effective_database_url)
    database = Database(settings.effective_database_url)
    tokens = create_accounts(database)
    queue = RecordingQueue()
    with TestClient(create_app(settings, queue=queue)) as client:
        sids = []
        for who, archive in (("submitter", good_archive), ("rival", rival_archive)):
            upload = client.post(
                "/api/v1/submissions",
                files={"file": ("b.tar.gz", archive.read_bytes())},
                headers=bearer(tokens[who]),
            )
            assert upload.status_code == 201, upload.text
            with database.session() as session:
                run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
            sids.append(upload.json()["id"])
        sid = sids[0]
        chair, owner = bearer(tokens["chair"]), bearer(tokens["submitter"])
        assigned = client.post(
            f"/api/v1/submissions/{sid}/reviewer",
            json={"email": ACCOUNTS["reviewer"][0]},
            headers=chair,
        )
        assert assigned.status_code == 200, assigned.text
        curve = client.get(f"/api/v1/submissions/{sid}", headers=chair).json()["curves"][0]
        point = f"{curve['system_dir']}/{curve['benchmark_model']}/r64"
        objection = client.post(
            f"/api/v1/submissions/{sid}/objections",
            json={"type": "reproducibility", "title": "Too fast", "rule_cited": "§11.4",
                  "evidence": "our run", "point": point},
            headers=bearer(tokens["reviewer"]),
        )  # fmt: skip
        assert objection.status_code == 201, objection.text
        events = client.put(
            f"/api/v1/submissions/{sid}/points/{point}/events",
            content=b'{"event_type": "test_started", "timestamp_ns": 0}\n',
            headers=owner,
        )
        assert events.status_code == 201, events.text
        folder = BundleFactory(submission_id="authz").run_folders(data.parent / "runs")[0]
        run = registered_run(database, settings, ACCOUNTS["submitter"][0], folder)
        composed = client.post(
            "/submission-api/submissions",
            json={"division": "standardized", "scenario": "cop", "availability": "available",
                  "run_ids": [run]},
            headers=owner,
        )  # fmt: skip
        assert composed.status_code == 201, composed.text
        view = client.post(
            "/api/v1/saved-views", json={"name": "mine", "query": "x=ttft"}, headers=owner
        )
        assert view.status_code == 201, view.text
        hook = client.post("/api/v1/webhooks", json={"url": PUBLIC_HOOK}, headers=owner)
        assert hook.status_code == 201, hook.text
        audits = client.post("/api/v1/audit-rounds", json={"quarter": "2026-Q4"}, headers=chair)
        assert audits.status_code == 201, audits.text
        fraud = client.post(
            f"/api/v1/submissions/{sid}/fraud-reports",
            json={"allegation": "Staged hardware", "evidence": "the photos"},
            headers=bearer(tokens["reviewer"]),
        )
        assert fraud.status_code == 201, fraud.text
        yield World(
            client, database, queue, tokens, sid, point, objection.json()["id"],
            events.json()["retokenizations"][0], good_archive.read_bytes(), run,
            composed.json()["id"], view.json()["id"], hook.json()["id"], fraud.json()["id"],
        )  # fmt: skip
    database.dispose()


def _snapshot(database: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (a token's last use aside: reading it is a use)."""
    tables = {}
    with database.session() as session:
        for table in Base.metadata.sorted_tables:
            columns = [c for c in table.columns if c.name != "last_used_at"]
            rows = session.execute(select(*columns)).all()
            tables[table.name] = sorted(tuple(map(repr, r)) for r in rows)
    return tables


def _paths(world: World, template: str) -> str:
    system, model, point = world.point.split("/")
    return (
        template.replace("{public_id}", world.sid)
        .replace("{system}", system)
        .replace("{model}", model)
        .replace("{point}", point)
        .replace("{objection_id}", world.objection)
        .replace("{rid}", world.recount)
        .replace("{slug}", "acme-corp")
        .replace("{cohort_id}", "2026-12-C0")
        .replace("{run_id}", world.run)
        .replace("{submission_id}", world.composed)
        .replace("{view_id}", world.view)
        .replace("{webhook_id}", world.webhook)
        .replace("{report_id}", world.fraud)
        .replace("{step}", "ruling")  # a dispute's step: the chair's ruling
        .replace("{digest}", "0" * 64)
        .replace("{quarter}", "2026-Q4")  # the world's audit round
        .replace("{audit_id}", "0" * 32)
        .replace("{act}", "tally")  # an audit round's act: the chair's tally
        .replace("{correction_id}", "0" * 32)
        .replace("{nomination_id}", "0" * 32)
    )


def _api_requests(world: World) -> dict[tuple[str, str], dict[str, Any]]:
    """The request each state-changing API route's rightful caller would send."""
    return {
        ("POST", "/api/v1/saved-views"): {"json": {"name": "theirs", "query": "x=ttft"}},
        ("DELETE", "/api/v1/saved-views/{view_id}"): {},
        ("POST", "/api/v1/webhooks"): {"json": {"url": PUBLIC_HOOK}},
        ("POST", "/api/v1/webhooks/{webhook_id}/resume"): {},
        ("DELETE", "/api/v1/webhooks/{webhook_id}"): {},
        ("PATCH", "/api/v1/organizations/{slug}"): {"json": {"committee_appointed": True}},
        ("POST", "/api/v1/cohorts/{cohort_id}/publish"): {},
        ("POST", "/api/v1/submissions/{public_id}/objections"): {
            "json": {
                "type": "reproducibility",
                "title": "t",
                "rule_cited": "§11.4",
                "evidence": "e",
            }  # fmt: skip
        },
        ("POST", "/api/v1/objections/{objection_id}/actions"): {
            "json": {"action": "resolve", "body": "settled"}
        },
        ("POST", "/api/v1/submissions/{public_id}/reviewer"): {
            "json": {"email": ACCOUNTS["reviewer2"][0]}
        },
        ("POST", "/api/v1/submissions/{public_id}/review-complete"): {"json": {"notes": "ok"}},
        ("PUT", "/api/v1/submissions/{public_id}/embargo"): {"json": {"embargo_date": LATER}},
        ("POST", "/api/v1/submissions/{public_id}/preview-extension"): {
            "json": {"new_date": LATER, "reason": "the parts ship late"}
        },
        ("POST", "/api/v1/submissions/{public_id}/preview-extension/decision"): {
            "json": {"grant": True}
        },
        ("POST", "/api/v1/submissions/{public_id}/points/{system}/{model}/{point}/state"): {
            "json": {"state": "withdrawn", "reason": "faulty"}
        },
        ("POST", "/api/v1/submissions/{public_id}/decisions"): {
            "json": {"action": "reject", "reason": "x"}
        },
        ("POST", "/api/v1/submissions/{public_id}/withdraw"): {"json": {"reason": "x"}},
        ("POST", "/api/v1/submissions/{public_id}/fraud-reports"): {
            "json": {"allegation": "a", "evidence": "e"}
        },
        ("POST", "/api/v1/fraud-reports/{report_id}/screenings"): {
            "json": {"finding": "substantiated", "note": "n"}
        },
        ("POST", "/api/v1/fraud-reports/{report_id}/decision"): {
            "json": {"outcome": "invalid", "reason": "r"}
        },
        # A dispute (none here: the world's review is in Week 1): refused by the one
        # rule before the dispute's own refusal, for whoever has no standing.
        ("POST", "/api/v1/submissions/{public_id}/dispute/{step}"): {
            "json": {"ruling": "dismiss", "reason": "r"}
        },
        # Audits (rules §11.12): the chairs run the round, the committee nominates and
        # ranks (a submitting organisation's member has no seat).
        ("POST", "/api/v1/audit-rounds"): {"json": {"quarter": "2027-Q3"}},
        ("POST", "/api/v1/audit-rounds/{quarter}/{act}"): {"json": {}},
        ("POST", "/api/v1/audits/{audit_id}/{act}"): {"json": {"outcome": "passed", "reason": "r"}},
        ("POST", "/api/v1/audit-nominations/{nomination_id}/{act}"): {
            "json": {"finding": "substantiated", "note": "n"}
        },
        ("POST", "/api/v1/submissions/{public_id}/endpoints/checks"): {
            "json": {
                "system_dir": "s",
                "reachable": False,
                "detail": "d",
                "checked_on": "2026-12-01",
            }  # fmt: skip
        },
        # A corrected bundle (rules §11.7): the submitting organisation's alone; the
        # chair's verdict on one.
        ("POST", "/api/v1/submissions/{public_id}/corrections"): {
            "files": {"file": ("c.tar.gz", world.archive)},
            "data": {"reason": "a typo"},
        },
        ("POST", "/api/v1/submissions/{public_id}/corrections/{correction_id}/decision"): {
            "json": {"approve": True}
        },
        ("PUT", "/api/v1/submissions/{public_id}/points/{system}/{model}/{point}/events"): {
            "content": b'{"event_type": "test_started", "timestamp_ns": 1}\n'
        },
        ("POST", "/api/v1/submissions/{public_id}/retokenizations"): {"json": {}},
        ("POST", "/api/v1/retokenizations/{rid}/cancel"): {},
        ("POST", "/api/v1/submissions/{public_id}/reproductions"): {
            "json": {
                "point": world.point,
                "endpoint_url": "http://127.0.0.1:9",
                "requested_by": ACCOUNTS["chair"][0],
            }  # fmt: skip
        },
        ("POST", "/api/v1/submissions/{public_id}/checks"): {},
        # Someone else's exact archive: refused, whoever sends it (issue: upload door).
        ("POST", "/api/v1/submissions"): {"files": {"file": ("b.tar.gz", world.archive)}},
        # The official Submission API: another organisation's run or submission is not
        # there for anyone else (404).
        ("POST", "/submission-api/runs"): {"json": _run_body(world)},
        ("DELETE", "/submission-api/runs/{run_id}"): {},
        ("PATCH", "/submission-api/runs/{run_id}/pin"): {},
        ("PATCH", "/submission-api/runs/{run_id}/unpin"): {},
        ("DELETE", "/submission-api/runs/{run_id}/archive"): {},
        ("POST", "/submission-api/submissions"): {
            "json": {
                "division": "standardized",
                "scenario": "cop",
                "availability": "available",
                "run_ids": [world.run],
            }  # fmt: skip
        },
        ("PATCH", "/submission-api/submissions/{submission_id}"): {"json": {"run_ids": []}},
        ("DELETE", "/submission-api/submissions/{submission_id}"): {},
        ("DELETE", "/submission-api/submissions/{submission_id}/runs/{run_id}"): {},
        ("POST", "/submission-api/submissions/{submission_id}/runs/{run_id}"): {},
    }


def _run_body(world: World) -> dict[str, Any]:
    """A run registration's body, as the CLI sends it (the world's run's own record)."""
    got = world.client.get(
        f"/submission-api/runs/{world.run}", headers=bearer(world.tokens["submitter"])
    ).json()
    fields = ("benchmark_version", "started_at", "finished_at", "system_info", "config",
              "result_summary", "point_config")  # fmt: skip
    return {name: got[name] for name in fields}


def _page_forms(world: World) -> dict[str, dict[str, Any]]:
    """The fields each page form's rightful user would post (the token is added)."""
    return {
        "/submissions/{public_id}/objections": {
            "data": {
                "type": "reproducibility",
                "title": "t",
                "rule_cited": "§11.4",
                "evidence": "e",
            }  # fmt: skip
        },
        "/objections/{objection_id}/actions": {"data": {"action": "resolve", "body": "done"}},
        "/submissions/{public_id}/review-complete": {"data": {"notes": "ok"}},
        "/submissions/{public_id}/decisions": {"data": {"action": "reject", "reason": "x"}},
        "/submissions/{public_id}/embargo": {"data": {"embargo_date": LATER}},
        "/submissions/{public_id}/preview-extension": {
            "data": {"new_date": LATER, "reason": "the parts ship late"}
        },
        "/submissions/{public_id}/preview-extension/decision": {"data": {"decision": "grant"}},
        "/submissions/{public_id}/reviewer": {"data": {"email": ACCOUNTS["reviewer2"][0]}},
        "/submissions/{public_id}/points/state": {
            "data": {"point": world.point, "state": "withdrawn", "reason": "faulty"}
        },
        "/submissions/{public_id}/withdraw": {"data": {"reason": "x"}},
        "/submissions/{public_id}/fraud-reports": {"data": {"allegation": "a", "evidence": "e"}},
        "/fraud-reports/{report_id}/screenings": {
            "data": {"finding": "substantiated", "note": "n"}
        },
        "/fraud-reports/{report_id}/decision": {"data": {"outcome": "invalid", "reason": "r"}},
        "/submissions/{public_id}/dispute/{step}": {"data": {"ruling": "dismiss", "reason": "r"}},
        "/review/audits": {"data": {"act": "tally", "quarter": "2026-Q4"}},
        "/submissions/{public_id}/endpoints/checks": {
            "data": {"system_dir": "s", "detail": "d", "checked_on": "2026-12-01"}
        },
        "/review/publish": {"data": {"cohort": "2026-12-C0", "confirm": "yes"}},
        "/submissions/{public_id}/corrections": {
            "files": {"file": ("c.tar.gz", world.archive)},
            "data": {"reason": "a typo"},
        },
        "/submissions/{public_id}/corrections/{correction_id}/decision": {
            "data": {"verdict": "approve"}
        },
        "/submissions/{public_id}/retokenizations": {"data": {}},
        "/retokenizations/{rid}/cancel": {"data": {}},
        "/submissions/{public_id}/reproductions": {
            "data": {"point": world.point, "endpoint_url": "http://127.0.0.1:9"}
        },
        "/upload": {"files": {"file": ("b.tar.gz", world.archive)}},
        "/views": {"data": {"name": "theirs", "query": "x=ttft"}},
        "/views/{view_id}/delete": {"data": {}},
        "/webhooks": {"data": {"url": PUBLIC_HOOK}},
        "/webhooks/{webhook_id}/resume": {"data": {}},
        "/webhooks/{webhook_id}/delete": {"data": {}},
        "/runs/compose": {
            "data": {
                "run_ids": world.run,
                "division": "standardized",
                "scenario": "cop",
                "availability": "available",
            }  # fmt: skip
        },
    }


def _narrow_token(world: World, key: str, scopes: list[str]) -> str:
    from app.accounts.services.accounts import issue_token, user_by_email

    with world.database.session() as session:
        user = user_by_email(session, ACCOUNTS[key][0])
        assert user is not None
        plaintext = issue_token(session=session, user=user, name="narrow", scopes=scopes)[1]
        session.commit()
    return plaintext


# Who may take which act, as the rules say (app.core.authorization): these pairs are
# not refusals, and are left out.
ALLOWED = {
    ("unassigned reviewer", "/submissions/{public_id}/objections"),
    # Any member reports suspected fraud, at any time (rules §11.5).
    ("another organisation", "/submissions/{public_id}/fraud-reports"),
    ("unassigned reviewer", "/submissions/{public_id}/fraud-reports"),
    # A member registers runs for its own organisation, whichever it is.
    ("another organisation", "/submission-api/runs"),
    ("unassigned reviewer", "/submission-api/runs"),
    # The committee sees every submission in review: the same bytes again name it.
    ("unassigned reviewer", "/submissions"),
    ("unassigned reviewer", "/upload"),
    # Anyone signed in keeps views of the results of their own (only the owner deletes one).
    ("another organisation", "/saved-views"),
    ("unassigned reviewer", "/saved-views"),
    ("narrower token", "/saved-views"),
    ("another organisation", "/views"),
    ("unassigned reviewer", "/views"),
    # ... and subscribes webhooks of their own (only the owner sees, resumes or deletes one).
    ("another organisation", "/webhooks"),
    ("unassigned reviewer", "/webhooks"),
    ("narrower token", "/webhooks"),
}


def test_every_state_changing_api_route_refuses_the_wrong_caller(world: World) -> None:
    spec = world.client.get("/openapi.json").json()
    routes = {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method in operations
        if method.upper() in ("POST", "PUT", "PATCH", "DELETE")
    }
    requests = _api_requests(world)
    assert routes - OWN_ACTS - set(requests) == set(), "add the new route's request here"
    callers = {
        "another organisation": bearer(world.tokens["rival"]),
        "unassigned reviewer": bearer(world.tokens["reviewer2"]),
        "narrower token": bearer(_narrow_token(world, "chair", ["submit"])),
        "nobody": {},
    }
    for (method, template), request in sorted(requests.items()):
        for caller, headers in callers.items():
            if (caller, template.removeprefix("/api/v1")) in ALLOWED:
                continue
            before, sent = _snapshot(world.database), len(world.queue.sent)
            answer = world.client.request(
                method, _paths(world, template), headers=headers, **request
            )
            expected = REFUSED | ({409} if template == "/api/v1/submissions" else set())
            where = f"{method} {template} as {caller}: {answer.status_code} {answer.text[:200]}"
            assert answer.status_code in expected, where
            assert answer.json()["error"]["message"], where
            assert _snapshot(world.database) == before, where
            assert len(world.queue.sent) == sent, where


def _signed_in(world: World, key: str | None) -> TestClient:
    client = TestClient(world.client.app)
    if key is not None:
        signed = client.post(
            "/login",
            data={
                "email": ACCOUNTS[key][0],
                "password": PASSWORD,
                "csrf_token": form_token(client),
            },  # fmt: skip
            follow_redirects=False,
        )
        assert signed.status_code == 303
    return client


def test_every_page_form_refuses_the_wrong_caller(world: World) -> None:
    posted = {
        route.path
        for feature in FEATURES
        if feature.__name__.endswith("pages")  # .pages, .correction_pages
        for route in feature.router.routes
        if isinstance(route, APIRoute)
        and (route.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"}
    }
    forms = _page_forms(world)
    assert posted - OWN_ACTS - set(forms) == set(), "add the new form's fields here"
    callers = {
        "another organisation": _signed_in(world, "rival"),
        "unassigned reviewer": _signed_in(world, "reviewer2"),
        "nobody": _signed_in(world, None),
    }
    for template, form in sorted(forms.items()):
        for caller, client in callers.items():
            if (caller, template) in ALLOWED:
                continue
            token = form_token(client)
            fields = {**form.get("data", {}), "csrf_token": token}
            before, sent = _snapshot(world.database), len(world.queue.sent)
            answer = client.post(
                _paths(world, template),
                data=fields,
                files=form.get("files"),
                follow_redirects=False,
            )
            expected = REFUSED | ({409} if template == "/upload" else set())
            where = f"POST {template} as {caller}: {answer.status_code}"
            to_sign_in = answer.headers.get("location", "").startswith("/login?")
            refused = answer.status_code in expected or (answer.status_code == 303 and to_sign_in)
            assert refused, where + " " + answer.text[:300]
            assert _snapshot(world.database) == before, where
            assert len(world.queue.sent) == sent, where


def test_the_rightful_callers_are_let_through(world: World) -> None:
    """The same rule lets the submitter, the assigned reviewer and the chair act (and the
    unassigned reviewer file an objection: the committee's right)."""
    client, sid = world.client, world.sid
    reviewer2 = bearer(world.tokens["reviewer2"])
    filed = client.post(
        f"/api/v1/submissions/{sid}/objections",
        json={
            "type": "reproducibility",
            "title": "Also",
            "rule_cited": "§11.4",
            "evidence": "ours too",
        },  # fmt: skip
        headers=reviewer2,
    )
    assert filed.status_code == 201, filed.text
    reviewer = bearer(world.tokens["reviewer"])
    asked = client.post(
        f"/api/v1/submissions/{sid}/reproductions",
        json={
            "point": world.point,
            "endpoint_url": "http://127.0.0.1:9",
            "requested_by": ACCOUNTS["chair"][0],
        },  # fmt: skip
        headers=reviewer,
    )
    assert asked.status_code == 202, asked.text
    # requested_by is the caller, whatever the body says.
    assert asked.json()["requested_by"] == ACCOUNTS["reviewer"][0]
    owner = bearer(world.tokens["submitter"])
    recount = client.post(f"/api/v1/submissions/{sid}/retokenizations", json={}, headers=owner)
    assert recount.status_code == 202, recount.text
    timeline = client.get(f"/api/v1/submissions/{sid}/timeline", headers=owner).json()["data"]
    acts = [e["action"] for e in timeline]
    assert "reproduction requested" in acts and "re-count requested" in acts


def test_a_narrowed_token_acts_only_within_its_scopes(world: World) -> None:
    """The chair's token without 'publish' no longer decides, and says the token is the
    limit; the assigned reviewer's without 'review' neither reviews nor sees the
    confidential submission."""
    before = _snapshot(world.database)
    chair = bearer(_narrow_token(world, "chair", ["submit", "review"]))
    decided = world.client.post(
        f"/api/v1/submissions/{world.sid}/decisions",
        json={"action": "reject", "reason": "x"},
        headers=chair,
    )
    assert decided.status_code == 403 and "token's scopes" in decided.json()["error"]["message"]
    reviewer = bearer(_narrow_token(world, "reviewer", ["submit"]))
    for path, body in (
        ("/review-complete", {"notes": "x"}),
        ("/objections", {"type": "reproducibility", "title": "t", "rule_cited": "§11.4",
                         "evidence": "e"}),
    ):  # fmt: skip
        answer = world.client.post(
            f"/api/v1/submissions/{world.sid}{path}", json=body, headers=reviewer
        )
        assert answer.status_code in REFUSED, (path, answer.text)
    assert _snapshot(world.database) == {
        **before,
        "api_tokens": _snapshot(world.database)["api_tokens"],  # the two issued here
    }


def test_a_reproduction_request_cannot_smuggle_a_header(world: World) -> None:
    owner = bearer(world.tokens["submitter"])
    before = _snapshot(world.database)
    for field, value in (
        ("api_key", "k\r\nX-Injected: yes"),
        ("api_key", "k\r\nContent-Length: 0\r\n\r\nGET /admin HTTP/1.1\r\nHost: x"),
        ("model", "m\nX-Injected: yes"),
        ("endpoint_url", "http://127.0.0.1:9/v1\r\nX-Injected: yes"),
        ("endpoint_url", "http://[::1"),
    ):
        body = {"point": world.point, "endpoint_url": "http://127.0.0.1:9", field: value}
        answer = world.client.post(
            f"/api/v1/submissions/{world.sid}/reproductions", json=body, headers=owner
        )
        assert answer.status_code == 422, (field, value, answer.text)
        assert answer.json()["error"]["field"] == field
    assert _snapshot(world.database) == before


def test_anonymous_visitors_see_no_requester_endpoint_or_wording(world: World) -> None:
    """A reproduction record shows the public only what the rules publish: once the
    result is public, its numbers and verdict; never who asked or where the load went."""
    # A reproduction of this test's own: the module's tests may run in other processes.
    asked = world.client.post(
        f"/api/v1/submissions/{world.sid}/reproductions",
        json={"point": world.point, "endpoint_url": "http://127.0.0.1:9"},
        headers=bearer(world.tokens["reviewer"]),
    )
    assert asked.status_code == 202, asked.text
    listed = world.client.get(
        f"/api/v1/submissions/{world.sid}/reproductions",
        headers=bearer(world.tokens["submitter"]),
    ).json()["data"]
    assert listed and listed[0]["endpoint_url"] and listed[0]["requested_by"]
    peer = world.client.get(
        f"/api/v1/submissions/{world.sid}/reproductions", headers=bearer(world.tokens["rival"])
    ).json()["data"]
    assert peer and all(r["endpoint_url"] is None and r["requested_by"] is None for r in peer)
    assert world.client.get(f"/api/v1/submissions/{world.sid}/reproductions").status_code == 404
    page = world.client.get(f"/submissions/{world.sid}")
    assert page.status_code == 404 and ACCOUNTS["reviewer"][0] not in page.text
    assert not re.search(r"127\.0\.0\.1:9", page.text)


def test_another_organisations_exact_archive_reveals_nothing_of_it(world: World) -> None:
    answer = world.client.post(
        "/api/v1/submissions",
        files={"file": ("copy.tar.gz", world.archive)},
        headers=bearer(world.tokens["rival"]),
    )
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "archive-stored-already"
    for secret in (world.sid, "Acme", "sub-0001", "/submissions/"):
        assert secret not in answer.text and secret not in str(answer.headers)
    # Its own organisation is sent to the submission it already has.
    again = world.client.post(
        "/api/v1/submissions",
        files={"file": ("again.tar.gz", world.archive)},
        headers=bearer(world.tokens["submitter"]),
    )
    assert again.status_code == 200 and again.json()["id"] == world.sid


def _outsider(world: World) -> str:
    """A member of an organisation that neither submitted nor sits on the committee."""
    from app.accounts.services.accounts import create_user, issue_token
    from app.core.authorization import Role
    from app.db.models import User

    with world.database.session() as session:
        user = session.scalar(select(User).where(User.email == "buyer@elsewhere.example"))
        if user is None:
            user = create_user(session=session, email="buyer@elsewhere.example",
                               password=PASSWORD, role=Role.SUBMITTER,
                               organization="Elsewhere Inc")  # fmt: skip
        token = issue_token(session=session, user=user, name="tests")[1]
        session.commit()
    return token


def _get_routes(world: World) -> list[str]:
    """Every GET route the app serves, API and pages, with its path filled in."""
    spec = world.client.get("/openapi.json").json()
    api = [path for path, operations in spec["paths"].items() if "get" in operations]
    pages = [
        route.path
        for feature in FEATURES
        if feature.__name__.endswith(".pages")
        for route in feature.router.routes
        if isinstance(route, APIRoute) and "GET" in (route.methods or set())
    ]
    return sorted({_paths(world, template) for template in api + pages})


def test_no_read_route_shows_anything_private_to_an_outsider(world: World) -> None:
    """Acme's submission is in confidential review: to nobody, and to a member of an
    organisation with no standing in it, every GET route (found from the app, so a new
    one is walked too) answers without the review's words, the people in it, or a
    redirect to anywhere but the sign-in page."""
    private = [
        "Too fast",  # the objection's title and evidence
        "our run",
        ACCOUNTS["submitter"][0],
        ACCOUNTS["reviewer"][0],
        ACCOUNTS["chair"][0],
    ]
    # The markers are real: the review's own members read them on these routes.
    review = world.client.get(
        f"/api/v1/submissions/{world.sid}/objections", headers=bearer(world.tokens["chair"])
    )
    assert "Too fast" in review.text and "our run" in review.text
    callers = {"an outsider": bearer(_outsider(world)), "nobody": {}}
    routes = _get_routes(world)
    assert f"/api/v1/submissions/{world.sid}" in routes and "/results" in routes
    for path in routes:
        for caller, headers in callers.items():
            answer = world.client.get(path, headers=headers, follow_redirects=False)
            where = f"GET {path} as {caller}: {answer.status_code}"
            assert answer.status_code < 500, where + " " + answer.text[:300]
            if 300 <= answer.status_code < 400:
                location = answer.headers["location"]
                # A saved view's link opens the public explorer at the view's address.
                opens_a_view = path.startswith("/views/") and location.startswith("/results?")
                assert location.startswith("/login") or opens_a_view, where
            shown = answer.text + " ".join(f"{k}: {v}" for k, v in answer.headers.items())
            leaked = [marker for marker in private if marker in shown]
            assert not leaked, f"{where} shows {leaked}"
            if path.startswith(f"/api/v1/submissions/{world.sid}") or path.startswith(
                f"/submissions/{world.sid}"
            ):
                assert answer.status_code in REFUSED | {303}, where
    # The outsider's listing of submissions holds none of Acme's.
    listed = world.client.get("/api/v1/submissions", headers=callers["an outsider"])
    assert world.sid not in listed.text
