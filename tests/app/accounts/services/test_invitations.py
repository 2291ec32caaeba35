"""Accounts a newcomer can get: invitations (single use, expiring, replaced by a newer
one) and requests that reach the chairs, on a real database."""

from __future__ import annotations

import datetime as dt
from email import message_from_string

import pytest
from sqlalchemy import select

from app.accounts.services.accounts import (
    AccountError,
    authenticate,
    new_organisation,
    organisation_for,
    user_by_email,
)
from app.accounts.services.invitations import (
    INVITATION_LIFETIME,
    OrganisationChoice,
    accept,
    decline,
    invitation_for,
    invite,
    open_invitations,
    open_requests,
    request_account,
    revoke,
)
from app.core.authorization import ROLE_SCOPES, Role, Scope
from app.db.models import Invitation, Notification, User
from app.db.session import Database
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, create_accounts

NOW = dt.datetime(2026, 12, 4, 9, 0, tzinfo=dt.UTC)
CHAIR = ROLE_SCOPES[Role.CHAIR]
PASSWORD = "a long new password"


def _chair(session) -> User:  # type: ignore[no-untyped-def]
    found = user_by_email(session, ACCOUNTS["chair"][0])
    assert found is not None
    return found


def _invite(session, settings: Settings, email: str = "new@fjord.example", **kw):  # type: ignore[no-untyped-def]
    options = {"role": Role.SUBMITTER, "organization": "Fjord Labs", "at": NOW, **kw}
    return invite(session=session, settings=settings, scopes=CHAIR, inviter=_chair(session),
                  email=email, **options)  # fmt: skip


def test_an_invited_person_sets_a_password_once_and_joins_their_organisation(
    database: Database, settings: Settings
) -> None:
    create_accounts(database)
    with database.session() as session:
        invited = _invite(session, settings, email=" New@Fjord.example ")
        session.commit()
        secret = invited.link.rsplit("/", 1)[1]
        assert invited.link.startswith("/join/") and not invited.emailed
        stored = session.scalar(select(Invitation))
        assert stored is not None and secret not in stored.token_hash  # only its hash
        assert invitation_for(session, secret, NOW).email == "new@fjord.example"
        with pytest.raises(AccountError, match="the two passwords differ"):
            accept(session=session, secret=secret, password=PASSWORD, repeated="other", at=NOW)
        with pytest.raises(AccountError, match="at least 12"):
            accept(session=session, secret=secret, password="short", repeated="short", at=NOW)
        session.rollback()
        user = accept(session=session, secret=secret, password=PASSWORD, repeated=PASSWORD,
                      display_name="  Ada   Newcomer ", at=NOW)  # fmt: skip
        session.commit()
        assert user.organization is not None
        assert (user.role, user.organization.name, user.display_name) == (
            Role.SUBMITTER, "Fjord Labs", "Ada Newcomer",
        )  # fmt: skip
        assert authenticate(session=session, email="new@fjord.example", password=PASSWORD)
        # Single use.
        with pytest.raises(AccountError, match="used already") as used:
            accept(session=session, secret=secret, password=PASSWORD, repeated=PASSWORD, at=NOW)
        assert used.value.code == "invitation-used"
        # The address has an account now: no second invitation.
        with pytest.raises(AccountError, match="has an account already"):
            _invite(session, settings)


def test_links_expire_are_replaced_and_can_be_withdrawn(
    database: Database, settings: Settings
) -> None:
    create_accounts(database)
    with database.session() as session:
        first = _invite(session, settings)
        later = NOW + dt.timedelta(hours=1)
        # The first invitation made Fjord Labs: the second joins it, as the chair says.
        second = _invite(session, settings, at=later, join_organization="Fjord_Labs")
        session.commit()
        old, new = (i.link.rsplit("/", 1)[1] for i in (first, second))
        with pytest.raises(AccountError, match="replaced by a newer one"):
            invitation_for(session, old, later)
        assert invitation_for(session, new, later).id == second.invitation.id
        past = later + INVITATION_LIFETIME
        with pytest.raises(AccountError, match="has expired"):
            invitation_for(session, new, past)
        assert open_invitations(session, past) == []
        revoke(session, second.invitation.id, later)
        with pytest.raises(AccountError, match="withdrawn"):
            invitation_for(session, new, later)
        with pytest.raises(AccountError, match="not valid"):
            invitation_for(session, "not-a-secret", later)


@pytest.mark.parametrize(
    ("scopes", "role", "message"),
    [
        (CHAIR, Role.CHAIR, "only an administrator may invite someone as chair"),
        (CHAIR, Role.ADMIN, "only an administrator may invite someone as admin"),
        (ROLE_SCOPES[Role.REVIEWER], Role.SUBMITTER, "only the chair or an administrator"),
        (frozenset({Scope.SUBMIT}), Role.SUBMITTER, "only the chair or an administrator"),
    ],
)
def test_who_may_invite_whom(
    database: Database, settings: Settings, scopes: frozenset[Scope], role: Role, message: str
) -> None:
    create_accounts(database)
    with database.session() as session:
        with pytest.raises(AccountError, match=message):
            invite(session=session, settings=settings, scopes=scopes, inviter=None,
                   email="x@y.example", role=role, organization="Y")  # fmt: skip
        made = invite(session=session, settings=settings, scopes=frozenset(Scope), inviter=None,
                      email="chair2@mlcommons.example", role=Role.CHAIR)  # fmt: skip
        assert made.invitation.organization is None  # a chair acts for no organisation


@pytest.mark.parametrize(
    ("email", "organization", "message"),
    [
        ("not-an-address", "Fjord Labs", "is not an e-mail address"),
        ("a@b", "Fjord Labs", "is not an e-mail address"),
        ("new@fjord.example", "  ", "the organization is required"),
        ("new@fjord.example", "x" * 201, "at most 200 characters"),
    ],
)
def test_bad_invitations_say_what_is_wrong(
    database: Database, settings: Settings, email: str, organization: str, message: str
) -> None:
    create_accounts(database)
    with database.session() as session:
        with pytest.raises(AccountError, match=message):
            _invite(session, settings, email=email, organization=organization)


def test_a_request_reaches_every_chair_and_an_invitation_answers_it(
    database: Database, settings: Settings
) -> None:
    create_accounts(database)
    with database.session() as session:
        asked = request_account(session=session, email="ops@glacier.example",
                                display_name="Grace", organization="Glacier Inc",
                                message="We will submit in January.", at=NOW)  # fmt: skip
        session.commit()
        (note,) = session.scalars(select(Notification)).all()
        assert note.user_id == _chair(session).id and "Grace" in note.subject
        assert "We will submit in January." in note.body
        assert open_requests(session) == [asked]
        _invite(session, settings, email=asked.email, organization=asked.organization,
                request_id=asked.id)  # fmt: skip
        assert asked.outcome == "invited" and open_requests(session) == []
        other = request_account(session=session, email="x@y.example", display_name="X",
                                organization="Y")  # fmt: skip
        decline(session, other.id)
        assert other.outcome == "declined" and open_requests(session) == []
        with pytest.raises(AccountError, match="the name is required"):
            request_account(session=session, email="x@y.example", display_name=" ",
                            organization="Y")  # fmt: skip


def test_the_link_is_emailed_where_smtp_is_configured(
    database: Database, settings: Settings, smtp: tuple[int, list[str]]
) -> None:
    port, messages = smtp
    create_accounts(database)
    mailing = settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": port,
                                          "public_url": "https://portal.example"})  # fmt: skip
    with database.session() as session:
        invited = _invite(session, mailing)
    assert invited.emailed
    (raw,) = messages
    mail = message_from_string(raw)
    assert mail["To"] == "new@fjord.example"
    assert f"https://portal.example{invited.link}" in mail.get_payload()


def test_an_organisation_that_exists_is_joined_only_when_the_inviter_says_so(
    database: Database, settings: Settings
) -> None:
    """Issue 44: an account request for "Acme Corp." became Acme Corp by its slug, and
    the newcomer read Acme's timeline and archive."""
    create_accounts(database)
    with database.session() as session:
        with pytest.raises(OrganisationChoice) as same:
            _invite(session, settings, email="eve@elsewhere.example", organization="Acme Corp.")
        assert same.value.code == "organisation-exists"
        assert [o.name for o in same.value.candidates] == ["Acme Corp"]
        with pytest.raises(OrganisationChoice) as alike:
            _invite(session, settings, email="eve@elsewhere.example",
                    organization="Acme Corporation")  # fmt: skip
        assert alike.value.code == "organisation-similar"
        assert session.scalar(select(Invitation)) is None
        # A new organisation, confirmed: its own, and no second "Acme Corp" by spelling.
        made = _invite(session, settings, email="eve@elsewhere.example",
                       organization="Acme Corporation", new_organization=True)  # fmt: skip
        assert made.invitation.organization == "Acme Corporation"
        joined = _invite(session, settings, email="ann@acme.example",
                         organization="acme corp", join_organization="Acme_Corp")  # fmt: skip
        session.commit()
        secret = joined.link.rsplit("/", 1)[1]
        user = accept(session=session, secret=secret, password=PASSWORD, repeated=PASSWORD, at=NOW)
        assert user.organization is not None and user.organization.slug == "Acme_Corp"
        stranger = accept(session=session, secret=made.link.rsplit("/", 1)[1],
                          password=PASSWORD, repeated=PASSWORD, at=NOW)  # fmt: skip
        assert stranger.organization is not None
        assert stranger.organization.id != user.organization.id


def test_no_two_organisations_share_a_normalised_name(database: Database) -> None:
    with database.session() as session:
        new_organisation(session, "Glacier Inc")
        with pytest.raises(AccountError) as taken:
            new_organisation(session, "GLACIER inc.")
        assert taken.value.code == "organisation-exists"
        assert organisation_for(session, "glacier, inc").name == "Glacier Inc"
