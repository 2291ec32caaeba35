"""Roles and what they may do (rules §4.4, §11): the vocabulary of permissions."""

from __future__ import annotations

import enum


class Role(enum.StrEnum):
    SUBMITTER = "submitter"
    REVIEWER = "reviewer"  # a review-committee member
    CHAIR = "chair"
    ADMIN = "admin"


class Scope(enum.StrEnum):
    SUBMIT = "submit"  # upload bundles and artifacts, follow one's own submissions
    REVIEW = "review"  # see confidential results, file and answer objections
    PUBLISH = "publish"  # the chair's decisions and cohort publication
    ADMIN = "admin"  # accounts and tokens


ROLE_SCOPES: dict[Role, frozenset[Scope]] = {
    Role.SUBMITTER: frozenset({Scope.SUBMIT}),
    Role.REVIEWER: frozenset({Scope.SUBMIT, Scope.REVIEW}),
    Role.CHAIR: frozenset({Scope.SUBMIT, Scope.REVIEW, Scope.PUBLISH}),
    Role.ADMIN: frozenset(Scope),
}


class PermissionDenied(Exception):
    pass


def scopes_for(role: Role, requested: list[str] | None = None) -> frozenset[Scope]:
    """The scopes a token of a *role* user gets: what it asks for, within what the role has."""
    allowed = ROLE_SCOPES[role]
    if requested is None:
        return allowed
    scopes = frozenset(Scope(s) for s in requested)
    extra = scopes - allowed
    if extra:
        names = ", ".join(sorted(s.value for s in extra))
        raise PermissionDenied(f"a {role.value} cannot hold a token with scope {names}")
    return scopes
