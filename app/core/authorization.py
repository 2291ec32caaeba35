"""Who may do what: roles, token scopes, and the one rule every action asks.

A caller is a signed-in user or an API token. Its *scopes* say what kinds of act it may
take (a token carries only the scopes it was issued with, within its owner's role); its
*standing* to a submission says on whose behalf it acts there (the submitting
organisation, the assigned reviewer, another organisation on the review committee, the
chair). :func:`may` answers, for one action, from both at once: every route, page form
and service asks it, and nothing else decides who (rules §4.4, §11). *When* an action is
allowed (the lifecycle) is the review policy's question, asked after this one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.core.refusals import Kind, Refusal


class Role(enum.StrEnum):
    SUBMITTER = "submitter"
    REVIEWER = "reviewer"  # a review-committee member
    CHAIR = "chair"
    # Chosen from the committee every three months (rules §4.4): the chair's powers, so
    # the chairs share the process's work (decisions, the audit slate).
    CO_CHAIR = "co-chair"
    # A neutral member (rules §4.4): sees what the committee sees, files nothing, and
    # staffs dispute panels, fraud screening and audit-nomination screening.
    NEUTRAL = "neutral"
    ADMIN = "admin"


#: The roles that chair the committee.
CHAIR_ROLES = frozenset({Role.CHAIR, Role.CO_CHAIR})


class Scope(enum.StrEnum):
    SUBMIT = "submit"  # upload bundles and artifacts, act for one's own organisation
    REVIEW = "review"  # see confidential results, file and answer objections, review
    PUBLISH = "publish"  # the chair's decisions and cohort publication
    ADMIN = "admin"  # accounts and tokens


ROLE_SCOPES: dict[Role, frozenset[Scope]] = {
    Role.SUBMITTER: frozenset({Scope.SUBMIT}),
    Role.REVIEWER: frozenset({Scope.SUBMIT, Scope.REVIEW}),
    Role.CHAIR: frozenset({Scope.SUBMIT, Scope.REVIEW, Scope.PUBLISH}),
    Role.CO_CHAIR: frozenset({Scope.SUBMIT, Scope.REVIEW, Scope.PUBLISH}),
    Role.NEUTRAL: frozenset({Scope.REVIEW}),
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


@dataclass(frozen=True)
class Actor:
    """A caller's standing to one submission, its scopes already applied: a submitter's
    token without the ``submit`` scope does not act for its organisation, a reviewer's
    without ``review`` does not review."""

    chair: bool = False  # holds the publish scope
    own_organization: bool = False  # a member of the submitting organisation, submit scope
    committee: bool = False  # review scope, in another organisation (rules §4.4)
    assigned_reviewer: bool = False  # review scope, and the submission's reviewer
    narrowed: bool = False  # a token holding fewer scopes than its owner's role
    neutral: bool = False  # a neutral member, review scope (rules §4.4)
    member: bool = False  # signed in for an organisation (any MLCommons member)


def actor(
    scopes: frozenset[Scope],
    *,
    in_organization: bool,
    own_organization: bool,
    assigned_reviewer: bool,
    role: Role | None = None,
) -> Actor:
    """The standing of a caller with *scopes* (``role``: its owner's, to tell a narrowed
    token) to one submission."""
    reviews = Scope.REVIEW in scopes
    return Actor(
        chair=Scope.PUBLISH in scopes,
        own_organization=own_organization and Scope.SUBMIT in scopes,
        committee=reviews and in_organization and not own_organization,
        assigned_reviewer=reviews and assigned_reviewer,
        narrowed=role is not None and scopes < ROLE_SCOPES[role],
        neutral=reviews and role == Role.NEUTRAL,
        member=in_organization and bool(scopes & {Scope.SUBMIT, Scope.REVIEW}),
    )


class Action(enum.StrEnum):
    """The acts on a submission, each with the standings that may take it."""

    RECHECK = "recheck"
    WITHDRAW = "withdraw"
    CHANGE_EMBARGO = "change-embargo"
    UPLOAD_EVENTS = "upload-events"
    RECOUNT = "recount"  # start or cancel a re-count
    REPRODUCE = "reproduce"
    ATTEST_SAME_SYSTEM = "attest-same-system"  # a reproduction on the exact same system
    FILE_OBJECTION = "file-objection"
    ACT_ON_OBJECTION = "act-on-objection"  # the objection's own table says which act
    WITHDRAW_POINT = "withdraw-point"
    JUDGE_POINT = "judge-point"  # dispute, restore or invalidate a point
    ASSIGN_REVIEWER = "assign-reviewer"
    COMPLETE_REVIEW = "complete-review"
    DECIDE = "decide"  # finalize, reject, invalidate
    # The one extension of a Preview window (rules §11.10): asked, then decided.
    ASK_PREVIEW_EXTENSION = "ask-preview-extension"
    DECIDE_PREVIEW_EXTENSION = "decide-preview-extension"
    # The official Submission API's acts on what an organisation registers before a
    # submission exists: its measured runs, and a submission composed from them.
    MANAGE_RUNS = "manage-runs"
    COMPOSE = "compose"
    # Fraud or misrepresentation (rules §11.5, SR §8.4): reported by any member at any
    # time, screened by neutral members, decided by the chair (``DECIDE``).
    REPORT_FRAUD = "report-fraud"
    SCREEN_FRAUD = "screen-fraud"
    # A reproducibility nomination for audit (SR §10.4): screened by neutral members.
    SCREEN_NOMINATION = "screen-nomination"
    # Non-result content replaced (rules §11.7): in review at once, after finalization
    # on the chair's approval (``DECIDE``).
    CORRECT = "correct"
    # A dispute (rules §11.6): the parties' statements and appeal, the panel's word.
    STATE_IN_DISPUTE = "state-in-dispute"
    RECOMMEND_IN_DISPUTE = "recommend-in-dispute"


class Standing(enum.StrEnum):
    CHAIR = "chair"
    SUBMITTER = "own_organization"
    REVIEWER = "assigned_reviewer"
    COMMITTEE = "committee"
    NEUTRAL = "neutral"
    MEMBER = "member"


_WHO = {
    Standing.SUBMITTER: "the submitting organisation",
    Standing.REVIEWER: "the assigned reviewer",
    Standing.COMMITTEE: "a review-committee member of another organisation",
    Standing.CHAIR: "the chair",
    Standing.NEUTRAL: "a neutral member",
    Standing.MEMBER: "a member of an organisation",
}
_S, _R, _C, _CH = Standing.SUBMITTER, Standing.REVIEWER, Standing.COMMITTEE, Standing.CHAIR
_N, _M = Standing.NEUTRAL, Standing.MEMBER

# The one table of who may act (rules §4.4, §11.1–§11.7).
WHO_MAY: dict[Action, tuple[tuple[Standing, ...], str]] = {
    Action.RECHECK: ((_S, _CH), "run the checks again"),
    Action.WITHDRAW: ((_S, _CH), "withdraw the submission"),
    Action.CHANGE_EMBARGO: ((_S, _CH), "change the embargo"),
    Action.UPLOAD_EVENTS: ((_S, _CH), "upload a point's events"),
    Action.RECOUNT: ((_S, _R, _CH), "start or cancel a re-count"),
    Action.REPRODUCE: ((_S, _R, _CH), "ask for a reproduction"),
    # §11.4's tighter margin rests on the system being the one submitted: only the
    # submitter of record can say so.
    Action.ATTEST_SAME_SYSTEM: ((_S,), "attest that a reproduction runs on the same system"),
    Action.FILE_OBJECTION: ((_C,), "file an objection"),
    Action.ACT_ON_OBJECTION: ((_S, _C, _CH), "act on an objection"),
    Action.WITHDRAW_POINT: ((_S, _CH), "withdraw a point"),
    Action.JUDGE_POINT: ((_CH,), "dispute, restore or invalidate a point"),
    Action.ASSIGN_REVIEWER: ((_CH,), "assign the reviewer"),
    Action.COMPLETE_REVIEW: ((_R,), "complete the review"),
    Action.DECIDE: ((_CH,), "decide on the submission"),
    Action.ASK_PREVIEW_EXTENSION: ((_S,), "ask for the Preview window's extension"),
    Action.DECIDE_PREVIEW_EXTENSION: ((_CH,), "grant or refuse a Preview extension"),
    Action.MANAGE_RUNS: ((_S,), "register, pin or delete the organisation's runs"),
    Action.COMPOSE: ((_S,), "compose a submission from runs or change which runs it holds"),
    Action.CORRECT: ((_S,), "correct the bundle's non-result content"),
    Action.REPORT_FRAUD: ((_M, _N, _CH), "report suspected fraud or misrepresentation"),
    Action.SCREEN_FRAUD: ((_N,), "screen a fraud report"),
    Action.SCREEN_NOMINATION: ((_N,), "screen a reproducibility nomination"),
    Action.STATE_IN_DISPUTE: ((_S, _C), "file a statement in a dispute or appeal its ruling"),
    Action.RECOMMEND_IN_DISPUTE: ((_N,), "recommend in a dispute"),
}


def may(who: Actor, action: Action) -> Refusal | None:
    """None if *who* may take *action* on the submission, else why not."""
    standings, what = WHO_MAY[action]
    if any(getattr(who, standing.value) for standing in standings):
        return None
    names = [_WHO[s] for s in standings]
    allowed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    hint = " (this token's scopes do not reach that far)" if who.narrowed else ""
    return Refusal("not-yours", f"only {allowed} may {what}{hint}", Kind.FORBIDDEN)


# Who may invite whom (issue 28): the chair brings in submitters, reviewers and neutral
# members; only an administrator makes another chair, co-chair or administrator.
INVITES: dict[Scope, frozenset[Role]] = {
    Scope.PUBLISH: frozenset({Role.SUBMITTER, Role.REVIEWER, Role.NEUTRAL}),
    Scope.ADMIN: frozenset(Role),
}


def invitable_roles(scopes: frozenset[Scope]) -> frozenset[Role]:
    """The roles a caller with *scopes* may invite someone into."""
    return frozenset(role for scope in scopes for role in INVITES.get(scope, ()))


def may_invite(scopes: frozenset[Scope], role: Role) -> Refusal | None:
    """None if a caller with *scopes* may invite someone as *role*, else why not."""
    allowed = invitable_roles(scopes)
    if role in allowed:
        return None
    if not allowed:
        return Refusal("not-yours", "only the chair or an administrator may invite", Kind.FORBIDDEN)
    return Refusal(
        "not-yours", f"only an administrator may invite someone as {role.value}", Kind.FORBIDDEN
    )


def may_change_saved_view(owner_id: int, caller_id: int) -> Refusal | None:
    """A saved view is its owner's to delete; anyone given its link may open it."""
    if owner_id == caller_id:
        return None
    return Refusal("not-yours", "only the one who saved a view may delete it", Kind.FORBIDDEN)


def may_change_webhook(owner_id: int, caller_id: int) -> Refusal | None:
    """A webhook subscription, its secret and its deliveries are its owner's alone."""
    if owner_id == caller_id:
        return None
    return Refusal("not-yours", "only the one who subscribed may see or change a webhook",
                   Kind.FORBIDDEN)  # fmt: skip
