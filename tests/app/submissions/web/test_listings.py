"""One visibility rule for every listing (issue 44): the submissions page, the
submissions API and the organisations API show each caller exactly what the rule for
one submission (``access_to``) lets it see, enumerated over a world of submissions in
every standing that matters to rules §11.9."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.accounts.services.accounts import create_user, issue_token, principal_for_token
from app.core.authorization import Role
from app.db.models import Organization, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.pipeline import run_checks
from app.review.services.releases import publish_cohort
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.visibility import access_to
from tests.support.accounts import PASSWORD, bearer, create_accounts
from tests.support.bundles import broken
from tests.support.fakes import RecordingQueue
from tests.support.services import migrated_sqlite
from tests.support.submissions import accept, archive_of, pt, submit

CALLERS = ("nobody", "submitter", "rival", "outsider", "reviewer", "chair")


@dataclass
class World:
    client: TestClient
    database: Database
    tokens: dict[str, str]
    names: dict[str, str]  # public id: what the test calls it


def _rejected(database: Database, settings: Settings, archive: Path, uploader: str | None) -> int:
    queue = RecordingQueue()
    sid, _ = accept(database, settings, queue, archive, uploader=uploader)
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
        assert session.get(Submission, sid).state == "rejected"  # type: ignore[union-attr]
    return sid


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp_path = tmp_path_factory.mktemp("listings")
    settings = Settings(data_dir=tmp_path / "data", database_url=None, redis_url=None,
                        storage_cache_dir=tmp_path / "cache")  # fmt: skip
    migrated_sqlite(settings.data_dir)
    database = Database(settings.effective_database_url)
    tokens = create_accounts(database)
    with database.session() as session:  # Eris: an organisation whose one upload failed
        eris = create_user(session=session, email="sub@eris.example", password=PASSWORD,
                           role=Role.SUBMITTER, organization="Eris Labs")  # fmt: skip
        tokens["outsider"] = issue_token(session=session, user=eris, name="t")[1]
        session.commit()
    eris_bundle = BundleFactory(
        system=SystemSpec(name="Eris X", org="Eris Labs"), submission_id="eris-1"
    ).archive(tmp_path / "eris.tar.gz", edits=broken("wrong-seed"))
    rival = BundleFactory(
        system=SystemSpec(name="Borealis Y", org="Borealis AI"), submission_id="bor-1"
    ).archive(tmp_path / "rival.tar.gz")
    ids = {
        "acme in review": submit(database, settings, archive_of(tmp_path, "a")),
        "acme awaiting": submit(database, settings, archive_of(tmp_path, "b"), mode="provisional"),
        "acme published": submit(database, settings, archive_of(tmp_path, "c"), mode="provisional"),
        "acme rejected": _rejected(database, settings, BundleFactory(submission_id="bad").archive(
            tmp_path / "bad.tar.gz", edits=broken("wrong-seed")), "submitter"),
        "borealis in review": submit(database, settings, rival, uploader="rival"),
        "eris rejected": _rejected(database, settings, eris_bundle, None),
    }  # fmt: skip
    with database.session() as session:
        # Only "acme published" is due in this cohort; "acme awaiting" is embargoed past it.
        awaiting = session.get(Submission, ids["acme awaiting"])
        assert awaiting is not None
        awaiting.embargo_date = pt(2027, 1, 20).date()
        session.commit()
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 8))  # fmt: skip
        session.commit()
        names = {session.get(Submission, i).public_id: k for k, i in ids.items()}  # type: ignore[union-attr]
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield World(client, database, tokens, names)
    database.dispose()


def _expected(world: World, caller: str) -> set[str]:
    with world.database.session() as session:
        who = None if caller == "nobody" else principal_for_token(session, world.tokens[caller])
        subs = session.scalars(select(Submission)).all()
        return {world.names[s.public_id] for s in subs if access_to(session, who, s) > Access.NONE}


def _headers(world: World, caller: str) -> dict[str, str]:
    return {} if caller == "nobody" else bearer(world.tokens[caller])


@pytest.mark.parametrize("caller", CALLERS)
def test_the_page_and_the_api_list_exactly_what_each_caller_may_see(
    world: World, caller: str
) -> None:
    expected = _expected(world, caller)
    api = world.client.get("/api/v1/submissions?limit=200", headers=_headers(world, caller))
    assert api.status_code == 200
    listed = {world.names[s["id"]] for s in api.json()["data"]}
    assert listed == expected
    assert api.json()["count"] == len(expected)
    page = world.client.get("/submissions", headers=_headers(world, caller)).text
    shown = {world.names[m] for m in re.findall(r"/submissions/([0-9a-f]{32})", page)}
    assert shown == expected


@pytest.mark.parametrize(
    ("caller", "sees"),
    [
        ("nobody", {"acme published"}),
        # Eris uploaded once and was rejected: not a submitting organisation.
        ("outsider", {"acme published", "eris rejected"}),
        # Borealis is in its review weeks: it sees Acme's submission in its review weeks,
        # never a rejected one, nor one waiting for its provisional publication.
        ("rival", {"acme published", "acme in review", "borealis in review"}),
        ("submitter", {"acme in review", "acme awaiting", "acme published", "acme rejected",
                       "borealis in review"}),
        ("reviewer", {"acme in review", "acme awaiting", "acme published", "acme rejected",
                      "borealis in review", "eris rejected"}),
    ],
)  # fmt: skip
def test_what_each_caller_sees(world: World, caller: str, sees: set[str]) -> None:
    """The rule the enumeration holds the listings to, spelled out."""
    assert _expected(world, caller) == sees


def test_organisations_known_only_from_confidential_submissions_are_not_listed(
    world: World,
) -> None:
    def listed(caller: str) -> set[str]:
        answer = world.client.get("/api/v1/organizations", headers=_headers(world, caller))
        assert answer.status_code == 200, answer.text
        return {o["name"] for o in answer.json()["data"]}

    # Acme's published result, Eris's own, and the committee (appointed: the fixtures'
    # reviewers), whose seats are no secret; never Borealis, known only from a
    # confidential submission.
    committee = {"Cumulus Cloud", "Dune Systems"}
    assert listed("outsider") == {"Acme Corp", "Eris Labs", *committee}
    assert listed("rival") == {"Acme Corp", "Borealis AI", *committee}
    with world.database.session() as session:
        everyone = {o.name for o in session.scalars(select(Organization))}
    assert listed("chair") == everyone
