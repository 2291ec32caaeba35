"""The review pages' forms, through real HTTP in the app (the browser walks drive them too)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from app.core.cohorts import Cohort
from app.db.models import Submission
from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.accounts import (
    ACCOUNTS,
    PASSWORD,
    bearer,
    create_accounts,
    create_neutral_members,
    form_token,
)
from tests.support.fakes import RecordingQueue, SetClock
from tests.support.rows import must
from tests.support.submissions import archive_of, finalize_unreviewed, in_dispute, pt, submit


def _sign_in(client: TestClient, key: str, email: str | None = None) -> str:
    """Signs in through the form (as *email*, else the ACCOUNTS *key*); returns the page's
    form token."""
    client.cookies.clear()
    signed = client.post(
        "/login",
        data={"email": email or ACCOUNTS[key][0], "password": PASSWORD,
              "csrf_token": form_token(client)},
        follow_redirects=False,
    )  # fmt: skip
    assert signed.status_code == 303
    return form_token(client, "/")  # a new token once signed in


def _uploaded_and_checked(
    client: TestClient,
    settings: Settings,
    database: Database,
    queue: RecordingQueue,
    archive: Path,
    token: str,
    **fields: str,
) -> str:
    """The archive uploaded by the submitter and checked by the worker's own service."""
    uploaded = client.post(
        "/api/v1/submissions",
        files={"file": (archive.name, archive.read_bytes())},
        data=fields,
        headers=bearer(token),
    )
    assert uploaded.status_code == 201, uploaded.text
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
    return uploaded.json()["id"]  # type: ignore[no-any-return]


@pytest.fixture
def pages(
    settings: Settings, database: Database, good_archive: Path
) -> Iterator[tuple[TestClient, str]]:
    """A confidential submission in peer review; nobody signed in yet. The portal has
    the benchmark's dataset, so reproductions are offered."""
    datasets = settings.data_dir.parent / "datasets"
    datasets.mkdir(parents=True, exist_ok=True)
    (datasets / "cnn_dailymail.jsonl").write_text('{"prompt": "summarise this"}\n')
    settings = settings.model_copy(
        update={"datasets_dir": datasets, "reproduction_allowed_endpoints": ["127.0.0.1:9"]}
    )
    tokens = create_accounts(database)
    queue = RecordingQueue()
    with TestClient(create_app(settings, queue=queue)) as client:
        yield (
            client,
            _uploaded_and_checked(
                client, settings, database, queue, good_archive, tokens["submitter"]
            ),
        )


def test_a_refused_objection_is_shown_again_as_it_was_typed(
    pages: tuple[TestClient, str],
) -> None:
    client, sid = pages
    token = _sign_in(client, "reviewer")
    typed = {
        "type": "no-such-type",
        "title": "Throughput above the hardware's ceiling",
        "rule_cited": "R §9.2",
        "evidence": "first line\nsecond line",
        "csrf_token": token,
    }
    refused = client.post(f"/submissions/{sid}/objections", data=typed)
    assert refused.status_code == 422 and 'id="review-error"' in refused.text
    assert 'value="Throughput above the hardware&#39;s ceiling"' in refused.text
    assert 'value="R §9.2"' in refused.text and "first line\nsecond line</textarea>" in refused.text
    assert '<details class="file-objection" id="file-objection" open>' in refused.text


def test_a_refused_reproduction_keeps_its_fields_but_never_the_key(
    pages: tuple[TestClient, str],
) -> None:
    client, sid = pages
    token = _sign_in(client, "submitter")
    refused = client.post(
        f"/submissions/{sid}/reproductions",
        data={
            "point": "Acme_H200_x8/llama3_1-8b/r64",
            "endpoint_url": "http://127.0.0.1:9",
            "model": "served-name",
            "api_key": "secret-key-value",
            "time_cap_s": "999999",
            "csrf_token": token,
        },
    )
    assert refused.status_code == 422 and "bad-time-cap" in refused.text
    assert 'value="http://127.0.0.1:9"' in refused.text and 'value="served-name"' in refused.text
    assert 'value="999999"' in refused.text and "secret-key-value" not in refused.text
    assert '<option value="Acme_H200_x8/llama3_1-8b/r64" selected>' in refused.text


def test_no_reproduction_is_offered_on_a_rejected_submission(
    settings: Settings, database: Database, bad_archive: Path
) -> None:
    tokens = create_accounts(database)
    queue = RecordingQueue()
    with TestClient(create_app(settings, queue=queue)) as client:
        sid = _uploaded_and_checked(
            client, settings, database, queue, bad_archive, tokens["submitter"]
        )
        token = _sign_in(client, "submitter")
        page = client.get(f"/submissions/{sid}").text
        assert 'id="repro-endpoint"' not in page
        assert "a rejected submission is not reproduced" in page
        refused = client.post(
            f"/submissions/{sid}/reproductions",
            data={
                "point": "Acme_H200_x8/llama3_1-8b/r64",
                "endpoint_url": "http://127.0.0.1:9",
                "csrf_token": token,
            },  # fmt: skip
        )
        assert refused.status_code == 409 and "not-reproducible" in refused.text


@pytest.fixture
def chair_page(
    settings: Settings, database: Database, good_archive: Path
) -> Iterator[tuple[TestClient, str, str, SetClock]]:
    tokens = create_accounts(database)
    queue = RecordingQueue()
    clock = SetClock(dt.datetime.now(dt.UTC))
    with TestClient(create_app(settings, queue=queue, clock=clock)) as client:
        _uploaded_and_checked(
            client, settings, database, queue, good_archive, tokens["submitter"],
            publication_mode="provisional",
        )  # fmt: skip
        with database.session() as session:
            submission = session.query(Submission).one()
            due = submission.eligible_cohort or submission.target_cohort
        assert due is not None
        clock.to_publication_of(due)
        token = _sign_in(client, "chair")
        yield client, token, due, clock


def test_publishing_from_the_page_shows_the_list_first_then_credits_the_chair(
    chair_page: tuple[TestClient, str, str, SetClock],
) -> None:
    client, token, due, _clock = chair_page
    plan = client.post("/review/publish", data={"cohort": due, "csrf_token": token})
    assert plan.status_code == 200 and 'id="publish-plan"' in plan.text
    assert "sub-0001" in plan.text and "would publish" in plan.text
    assert client.get("/api/v1/cohorts").json()["data"] == []  # nothing published yet

    done = client.post(
        "/review/publish", data={"cohort": due, "confirm": "yes", "csrf_token": token}
    )
    assert done.status_code == 200 and 'id="published"' in done.text
    assert f"Published in cohort {due}: 1 result." in done.text
    assert [c["id"] for c in client.get("/api/v1/cohorts").json()["data"]] == [due]
    sid = re.search(r'href="/submissions/([^"]+)"', done.text.split('id="published"')[1])
    timeline = client.get(f"/submissions/{sid.group(1)}").text  # type: ignore[union-attr]
    events = timeline.split('id="timeline"')[1]
    published = next(line for line in events.split("<li>") if "published" in line)
    assert ACCOUNTS["chair"][0] in published  # credited to the chair, not "system"

    again = client.post(
        "/review/publish", data={"cohort": due, "confirm": "yes", "csrf_token": token}
    )
    assert f"Cohort {due} was already published" in again.text
    assert "publishing it again changes nothing" in again.text


def test_a_past_cohort_or_an_early_release_is_refused_with_the_reason(
    chair_page: tuple[TestClient, str, str, SetClock],
) -> None:
    client, token, _due, _clock = chair_page
    # A later cohort can be looked at (what it would publish), never released early.
    ahead = client.post("/review/publish", data={"cohort": "2099-01-C0", "csrf_token": token})
    assert ahead.status_code == 200 and 'data-publishable="false"' in ahead.text
    early = client.post(
        "/review/publish", data={"cohort": "2099-01-C0", "confirm": "yes", "csrf_token": token}
    )
    assert early.status_code == 409 and 'id="publish-error"' in early.text
    assert "not before" in early.text
    past = client.post("/review/publish", data={"cohort": "2020-01-C0", "csrf_token": token})
    assert past.status_code == 409 and 'id="publish-error"' in past.text
    assert client.get("/api/v1/cohorts").json()["data"] == []


def _plans(page: str) -> dict[str, str]:
    """The cohorts the queue page lines up, each with its box's markup."""
    boxes = page.split('class="alert alert-info publish-plan"')[1:]
    return {re.search(r'data-cohort="([^"]+)"', box).group(1): box.split("</div>\n</div>")[0]  # type: ignore[union-attr]
            for box in boxes}  # fmt: skip


def test_the_chair_sees_what_the_next_cohorts_will_publish_before_their_time(
    chair_page: tuple[TestClient, str, str, SetClock],
) -> None:
    """Issue 48 #13: the queue page lists what is lined up: the cohort due now while it is
    not released, and the next one as it would be released at its time; a release waits
    for its time."""
    client, token, due, clock = chair_page
    cohort = Cohort.parse(due)
    assert cohort is not None
    when = cohort.publication_at(ZoneInfo("America/Los_Angeles"))
    clock.now = when - dt.timedelta(hours=1)
    page = client.get("/review").text
    now_due = str(cohort.previous())
    assert list(_plans(page)) == [now_due, due]
    # The queue says what each submission submits, when it is due, and its delay in words.
    row = page.split('id="review-queue"')[1].split("</tr>")[1]
    assert re.search(r'<td class="systems">[^<—]+</td>', row), row
    assert f'<td class="due">{due}</td>' in row and "<td>none</td>" in row
    assert f'id="publish-cohort" value="{now_due}"' in page  # the one to publish first
    assert 'data-publishable="true"' in _plans(page)[now_due]  # its time has come
    ahead = _plans(page)[due]
    assert 'data-publishable="false"' in ahead and "as things stand it would publish" in ahead
    assert "sub-0001" in ahead and "confirm-publish-form" not in ahead and "publish-later" in ahead
    planned = client.get(f"/api/v1/cohorts/{due}/plan")  # the chair's session
    assert planned.status_code == 200, planned.text
    assert planned.json()["publishable_now"] is False
    assert [e["bundle"] for e in planned.json()["entries"]] == ["sub-0001"]
    assert client.get("/api/v1/cohorts").json()["data"] == []  # nothing was published
    # The cohort due now is released; then the next one's time comes, with its button.
    client.post("/review/publish", data={"cohort": now_due, "confirm": "yes", "csrf_token": token})
    assert list(_plans(client.get("/review").text)) == [due]
    clock.now = when
    page = client.get("/review").text
    assert list(_plans(page)) == [due, str(cohort.next())]
    assert "confirm-publish-form" in _plans(page)[due]
    client.post("/review/publish", data={"cohort": due, "confirm": "yes", "csrf_token": token})
    assert list(_plans(client.get("/review").text)) == [str(cohort.next())]


def test_page_forms_hold_the_apis_length_limits(
    pages: tuple[TestClient, str], database: Database
) -> None:
    """A 1,000-character title or a 60,000-character comment is refused on the page as
    it is on the API (app.core.text_limits), and nothing is stored."""
    from sqlalchemy import func, select

    from app.db.models import Objection

    client, sid = pages
    token = _sign_in(client, "reviewer")
    for typed in (
        {"title": "t" * 1000, "evidence": "e"},
        {"title": "t", "evidence": "e" * 60_000},
    ):
        form = {"type": "reproducibility", "rule_cited": "§11.4", "csrf_token": token, **typed}
        refused = client.post(f"/submissions/{sid}/objections", data=form)
        assert refused.status_code == 422, refused.status_code
        assert "at most" in refused.text
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(Objection)) == 0


def test_a_confidential_submission_is_badged_confidential_not_provisional(
    pages: tuple[TestClient, str],
) -> None:
    client, sid = pages
    _sign_in(client, "submitter")
    page = client.get(f"/submissions/{sid}").text
    assert '<span class="status status-confidential">confidential</span>' in page
    assert "status-provisional" not in page


def test_the_page_offers_an_objection_by_the_clock_the_service_decides_by(
    settings: Settings, database: Database, good_archive: Path
) -> None:
    """The form is offered while the service would take it, at the portal's "now" (the
    clock the app was built with), not at the host's wall clock."""
    from app.settings import review_clock

    tokens = create_accounts(database)
    queue = RecordingQueue()
    clock = SetClock(dt.datetime.now(dt.UTC))
    with TestClient(create_app(settings, queue=queue, clock=clock)) as client:
        sid = _uploaded_and_checked(
            client, settings, database, queue, good_archive, tokens["submitter"]
        )
        with database.session() as session:
            eligible = session.query(Submission).one().review_eligible_at
        assert eligible is not None
        token = _sign_in(client, "reviewer")
        assert 'id="file-objection"' in client.get(f"/submissions/{sid}").text
        # Week 4: peer review is over and Week 6 has not come; the wall clock is still in
        # Week 1 or before.
        clock.now = review_clock(settings).peer_review_closes(eligible) + dt.timedelta(days=1)
        assert 'id="file-objection"' not in client.get(f"/submissions/{sid}").text
        filed = client.post(
            f"/submissions/{sid}/objections",
            data={"type": "suspect", "title": "late", "rule_cited": "R §4.1",
                  "evidence": "seen in Week 4", "csrf_token": token},
        )  # fmt: skip
        assert filed.status_code == 409 and "window-closed" in filed.text
        by_api = client.post(
            f"/api/v1/submissions/{sid}/objections",
            json={"type": "suspect", "title": "late", "rule_cited": "R §4.1",
                  "evidence": "seen in Week 4"},
            headers=bearer(tokens["reviewer"]),
        )  # fmt: skip
        assert by_api.status_code == 409 and "window-closed" in by_api.text


def test_the_chair_reclassifies_from_the_page_and_a_refusal_keeps_the_fields(
    pages: tuple[TestClient, str],
) -> None:
    client, sid = pages
    token = _sign_in(client, "chair")
    page = client.get(f"/submissions/{sid}").text
    assert 'id="reclassify-fields"' in page and '<option value="reclassify"' in page
    typed = {"action": "reclassify", "reason": "no third party ships it", "csrf_token": token,
             "availability": "Preview", "target_availability_date": "2031-01-01"}  # fmt: skip
    refused = client.post(f"/submissions/{sid}/decisions", data=typed)
    assert refused.status_code == 422 and "past its window" in refused.text
    assert '<option value="Preview" selected>' in refused.text
    assert 'value="2031-01-01"' in refused.text
    garbled = client.post(f"/submissions/{sid}/decisions",
                          data={**typed, "target_availability_date": "soon"})  # fmt: skip
    assert garbled.status_code == 422 and "&#39;soon&#39; is not a date" in garbled.text
    done = client.post(f"/submissions/{sid}/decisions",
                       data={**typed, "availability": "RDI", "target_availability_date": ""},
                       follow_redirects=True)  # fmt: skip
    assert done.status_code == 200 and "reclassified to RDI" in done.text
    # Only the chair is offered it.
    _sign_in(client, "submitter")
    assert 'id="reclassify-fields"' not in client.get(f"/submissions/{sid}").text


def test_a_fraud_report_is_filed_screened_and_decided_from_the_page(
    pages: tuple[TestClient, str], database: Database
) -> None:
    client, sid = pages
    create_neutral_members(database)
    token = _sign_in(client, "reviewer")
    typed = {"allegation": "Staged hardware", "evidence": " ", "csrf_token": token}
    refused = client.post(f"/submissions/{sid}/fraud-reports", data=typed)
    assert refused.status_code == 422 and 'id="fraud-error"' in refused.text
    assert "needs its evidence" in refused.text and 'value="Staged hardware"' in refused.text
    filed = client.post(f"/submissions/{sid}/fraud-reports", follow_redirects=True,
                        data={**typed, "evidence": "the photo is a render"})  # fmt: skip
    assert filed.status_code == 200 and "the photo is a render" in filed.text
    rid = re.search(r'id="fraud-([0-9a-f]{32})"', filed.text)
    assert rid is not None
    # The accused organisation sees nothing of it.
    _sign_in(client, "submitter")
    assert "Staged hardware" not in client.get(f"/submissions/{sid}").text
    for n in (1, 2):
        token = _sign_in(client, "", f"neutral{n}@mlcommons.example")
        screened = client.post(f"/fraud-reports/{rid[1]}/screenings", follow_redirects=True,
                               data={"finding": "unsubstantiated", "note": "invoices match",
                                     "csrf_token": token})  # fmt: skip
        assert screened.status_code == 200 and "invoices match" in screened.text
    token = _sign_in(client, "chair")
    page = client.get(f"/submissions/{sid}").text
    assert f'action="/fraud-reports/{rid[1]}/decision"' in page
    decided = client.post(f"/fraud-reports/{rid[1]}/decision", follow_redirects=True,
                          data={"outcome": "invalid", "reason": "the render is the vendor's",
                                "csrf_token": token})  # fmt: skip
    assert decided.status_code == 200 and "decided: invalid" in decided.text
    assert "Decided by chair@mlcommons.example: the render is the vendor&#39;s" in decided.text


def test_a_dispute_is_certified_stated_and_ruled_from_the_page(
    settings: Settings, database: Database, tmp_path: Path
) -> None:
    create_accounts(database)
    create_neutral_members(database)
    sid = in_dispute(database, settings, archive_of(tmp_path, "disputed"))
    clock = SetClock(pt(2027, 1, 12, 9))
    with TestClient(create_app(settings, queue=RecordingQueue(), clock=clock)) as client:
        with database.session() as session:
            sub = must(session.get(Submission, sid)).public_id
        token = _sign_in(client, "chair")
        page = client.get(f"/submissions/{sub}").text
        assert 'id="dispute-certification"' in page and "neutral1@mlcommons.example" in page
        none = client.post(f"/submissions/{sub}/dispute/certification", data={"csrf_token": token})
        assert none.status_code == 422 and "name the panel" in none.text
        panel = {"panel": ["neutral1@mlcommons.example"], "csrf_token": token}
        client.post(f"/submissions/{sub}/dispute/certification", data=panel)
        token = _sign_in(client, "submitter")
        page = client.get(f"/submissions/{sub}").text
        assert "panel neutral1@mlcommons.example" in page and 'id="dispute-statements"' in page
        stated = client.post(f"/submissions/{sub}/dispute/statements", follow_redirects=True,
                             data={"body": "640 s, see the log", "csrf_token": token})  # fmt: skip
        assert (
            "the submitter&#39;s statement" in stated.text and "640 s, see the log" in stated.text
        )
        assert 'id="dispute-recommendation"' not in stated.text
        token = _sign_in(client, "", "neutral1@mlcommons.example")
        client.post(f"/submissions/{sub}/dispute/recommendation",
                    data={"recommendation": "dismiss", "body": "long enough",
                          "csrf_token": token})  # fmt: skip
        token = _sign_in(client, "chair")
        ruled = client.post(f"/submissions/{sub}/dispute/ruling", follow_redirects=True,
                            data={"ruling": "dismiss", "reason": "the log holds",
                                  "csrf_token": token})  # fmt: skip
        assert "The chair's ruling: <strong>dismiss</strong>: the log holds" in ruled.text
        assert client.post(f"/submissions/{sub}/dispute/nonsense",
                           data={"csrf_token": token}).status_code == 404  # fmt: skip


def test_the_audit_rounds_page_runs_the_chairs_acts_and_refuses_the_rest(
    pages: tuple[TestClient, str],
) -> None:
    client, _sid = pages
    token = _sign_in(client, "chair")
    bad = client.post("/review/audits", data={"act": "open", "quarter": "2027-Q9",
                                              "csrf_token": token})  # fmt: skip
    assert bad.status_code == 422 and "a quarter is written 2027-Q1" in bad.text
    to_open = {"act": "open", "quarter": "2027-Q1", "csrf_token": token}
    opened = client.post("/review/audits", follow_redirects=True, data=to_open)
    assert 'id="round-2027-Q1"' in opened.text and "Roll the die" in opened.text
    assert '<p class="muted">No nominations yet.</p>' in opened.text
    assert 'href="/review/audits" id="audits-link"' in client.get("/review").text
    token = _sign_in(client, "reviewer")
    page = client.get("/review/audits").text
    assert "Nominate" in page and "Roll the die" not in page
    refused = client.post("/review/audits", data={"act": "tally", "quarter": "2027-Q1",
                                                  "csrf_token": token})  # fmt: skip
    assert refused.status_code == 403 and "only the chairs run the audit rounds" in refused.text
    _sign_in(client, "submitter")
    assert client.get("/review/audits").status_code == 403


def test_a_reproducibility_nomination_goes_through_its_screening_on_the_audits_page(
    settings: Settings, database: Database, tmp_path: Path
) -> None:
    """The committee member's case, the neutral members' screenings and the chair's word
    on the slate, each by its form; the slate's ballot offers it only once admitted."""
    create_accounts(database)
    create_neutral_members(database)
    sid = submit(database, settings, archive_of(tmp_path, "audited"))
    with database.session() as session:
        sub = must(session.get(Submission, sid))
        finalize_unreviewed(session, settings, sub, pt(2026, 12, 1))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
        public_id = sub.public_id
        label = f"{sub.curves[0].system.dir_name}/{sub.curves[0].benchmark_model}/r64"
    app = create_app(settings, queue=RecordingQueue(), clock=SetClock(pt(2026, 12, 10)))
    with TestClient(app) as client:

        def act(key: str, **fields: str) -> str:
            token = _sign_in(client, key, f"{key}@mlcommons.example" if "neutral" in key else None)
            done = client.post("/review/audits", data={**fields, "csrf_token": token},
                               follow_redirects=True)  # fmt: skip
            assert done.status_code == 200, done.text
            return done.text

        act("chair", act="open", quarter="2027-Q1")
        page = act("reviewer", act="nominations", quarter="2027-Q1", submission=public_id,
                   reason="r64 ran slower", kind="reproducibility", points=label,
                   reproduction="the harness at c=64", deviation="-14 % system_tps",
                   rule_cited="SR §6.6")  # fmt: skip
        assert '<strong class="state">screening</strong>' in page and "-14 % system_tps" in page
        assert "Cast your organisation" not in page  # nothing on the slate yet
        [nomination] = re.findall(r'id="nomination-([0-9a-f]{32})"', page)
        for n in (1, 2):
            act(f"neutral{n}", act="screenings", nomination=nomination,
                finding="substantiated", note="the runs hold up")  # fmt: skip
        page = act("chair", act="slate", nomination=nomination, admit="yes")
        assert "neutral2@mlcommons.example: substantiated: the runs hold up" in page
        assert 'class="nomination-on-slate"' in page
        _sign_in(client, "reviewer2")
        assert f'<option value="{nomination}">' in client.get("/review/audits").text
