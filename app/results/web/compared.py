"""The submissions a comparison names, as the caller may see them (page and API alike)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.security import visible_submission
from app.db.models import Submission
from app.results.services.compare import MOST
from app.results.services.results import QueryProblem


def compared_submissions(
    session: Session, who: Principal | None, ids: list[str]
) -> list[Submission]:
    """Each named submission, or 404 for one the caller may not see (rules §11.9)."""
    if len(ids) > MOST:
        raise QueryProblem("submission", f"compare at most {MOST} submissions, not {len(ids)}")
    return [visible_submission(session, who, public_id) for public_id in ids]
