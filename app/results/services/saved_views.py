"""Saved views (issue 49): a signed-in user names a view of the results (its address's
query, checked by the one results-query parser) and shares it by its link, which anyone
may open; only its owner deletes it."""

from __future__ import annotations

import datetime as dt
import secrets
import unicodedata
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.authorization import may_change_saved_view
from app.core.refusals import Kind, Refused
from app.db.models import SavedView
from app.results.services.query import ResultsParams, explorer_pairs, parse_results_query
from app.results.services.results import shown_curves, visible_view

MOST_VIEWS = 200  # per user
NAME_CHARACTERS = 100
QUERY_CHARACTERS = 4000


class SavedViewOut(BaseModel):
    id: str = Field(description="the view's id: its link is /views/{id}")
    name: str
    query: str = Field(description="the explorer's query, as its address holds it")
    link: str = Field(description="where anyone given it opens the view")
    created_at: dt.datetime


def _out(view: SavedView) -> SavedViewOut:
    return SavedViewOut(
        id=view.public_id,
        name=view.name,
        query=view.query,
        link=f"/views/{view.public_id}",
        created_at=view.created_at,
    )


def _name(raw: str) -> str:
    name = " ".join(raw.split())
    if not name:
        raise Refused("bad-view", "a view needs a name", Kind.INVALID, field="name")
    if len(name) > NAME_CHARACTERS:
        raise Refused(
            "bad-view", f"a view's name has at most {NAME_CHARACTERS} characters",
            Kind.INVALID, field="name",
        )  # fmt: skip
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise Refused("bad-view", "a view's name has no control characters", Kind.INVALID,
                      field="name")  # fmt: skip
    return name


def _query(session: Session, raw: str) -> str:
    """The explorer's parameters of *raw*, checked as the explorer checks them, in a
    canonical order; anything else in it is dropped."""
    if len(raw) > QUERY_CHARACTERS:
        raise Refused("bad-view", f"a view's query has at most {QUERY_CHARACTERS} characters",
                      Kind.INVALID, field="query")  # fmt: skip
    pairs = explorer_pairs(parse_qsl(raw.lstrip("?")))
    given: dict[str, list[str]] = {}
    for key, value in pairs:
        given.setdefault(key, []).append(value)
    # Refused by name as the explorer refuses it: the parameters, then what the record
    # holds (a benchmark, a dataset, a disclosed value none has).
    q = parse_results_query(session, ResultsParams.of(given))
    shown_curves(visible_view(session, q.cohort or None), q)
    return urlencode(sorted(pairs, key=lambda pair: pair[0]))


def save_view(session: Session, who: Principal, name: str, query: str) -> SavedViewOut:
    held = session.scalar(
        select(func.count()).select_from(SavedView).where(SavedView.user_id == who.user_id)
    )
    if (held or 0) >= MOST_VIEWS:
        raise Refused("too-many-views", f"you have {MOST_VIEWS} saved views: delete one first",
                      Kind.CONFLICT)  # fmt: skip
    view = SavedView(
        public_id=secrets.token_urlsafe(9),
        user_id=who.user_id,
        name=_name(name),
        query=_query(session, query),
    )
    session.add(view)
    session.flush()
    return _out(view)


def my_views(session: Session, who: Principal) -> list[SavedViewOut]:
    views = session.scalars(
        select(SavedView).where(SavedView.user_id == who.user_id).order_by(SavedView.id.desc())
    )
    return [_out(v) for v in views]


def _found(session: Session, view_id: str) -> SavedView:
    view = session.scalar(select(SavedView).where(SavedView.public_id == view_id))
    if view is None:
        raise Refused("no-such-view", f"no saved view {view_id!r}", Kind.NOT_FOUND)
    return view


def opened_view(session: Session, view_id: str) -> SavedViewOut:
    """A saved view as anyone given its link opens it."""
    return _out(_found(session, view_id))


def delete_view(session: Session, who: Principal, view_id: str) -> None:
    view = _found(session, view_id)
    refusal = may_change_saved_view(view.user_id, who.user_id)
    if refusal is not None:
        raise refusal.refused()
    session.delete(view)
    session.flush()
