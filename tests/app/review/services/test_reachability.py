"""A Standardized client-over-network result's endpoint (rules §11.10) over the real
services: its contact from the bundle, the 90 days after publication it must stay
reachable, and the chair's checks, a failed one within the window telling the chair and
the submitting organisation that the result is not Available."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from app.accounts.services.accounts import principal_of_user
from app.core.refusals import Refused
from app.db.models import Notification, Submission
from app.db.session import Database
from app.review.services.reachability import endpoint_views, record_reachability
from app.settings import Settings
from tests.support.rows import must
from tests.support.submissions import pt, user


def test_the_chair_records_checks_and_a_failure_in_the_window_breaks_available(
    database: Database, settings: Settings, published: int
) -> None:
    with database.session() as session:
        sub = must(session.get(Submission, published))
        assert endpoint_views(session, settings, sub) == []  # client on premises: nothing owed
        sub.scenario = "CoN"  # as chosen at upload
        [endpoint] = endpoint_views(session, settings, sub)
        # Published in 2026-12-C0 (2026-12-02): reachable until 90 days on.
        assert endpoint.contact == "mlperf@example.org"
        assert endpoint.reachable_until == dt.date(2027, 3, 2) and endpoint.problem is None
        chair = principal_of_user(user(session, "chair"))

        def check(on: dt.date, reachable: bool = False, who=chair, system=endpoint.system_dir):  # type: ignore[no-untyped-def]
            record_reachability(session=session, settings=settings, submission=sub, who=who,
                                system_dir=system, reachable=reachable, detail="curl timed out",
                                checked_on=on, at=pt(2027, 3, 10))  # fmt: skip

        with pytest.raises(Refused, match="only the chair"):
            check(dt.date(2027, 1, 5), who=principal_of_user(user(session, "reviewer")))
        with pytest.raises(Refused, match="no Standardized client-over-network system"):
            check(dt.date(2027, 1, 5), system="elsewhere")
        with pytest.raises(Refused, match="once it has happened"):
            check(dt.date(2027, 3, 11))
        check(dt.date(2027, 3, 5))  # after the window: owes nothing
        assert endpoint_views(session, settings, sub)[0].problem is None
        check(dt.date(2027, 1, 5))
        [endpoint] = endpoint_views(session, settings, sub)
        assert "unreachable on 2027-01-05" in (endpoint.problem or "")
        assert "the result is not Available" in (endpoint.problem or "")
        told = session.scalars(select(Notification.subject).where(
            Notification.user_id == user(session, "submitter").id)).all()  # fmt: skip
        assert any(s.startswith("Endpoint unreachable") for s in told)
