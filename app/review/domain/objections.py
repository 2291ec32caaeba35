"""Objections (rules §11.4): their types and severities, and who may do what to them.

An objection is *open* until the submitter answers (acknowledging with a resolution
schedule, or contesting with evidence); it is then *answered* and the objectors have
their own clock: they accept (resolved), retract, give a validation schedule (which
stops their clock), or mark it unresolved, and the submitter answers again. The chair
may resolve an objection at any time (satisfied, or found unsubstantiated). Resolved and
retracted objections are closed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.core.lifecycle import ObjectionState
from app.core.refusals import Kind, Refused


@dataclass(frozen=True)
class ObjectionType:
    id: str
    title: str
    severity: str  # high | medium | low
    blocks_finalization: bool = True
    # Late objections after Week 6 may only rest on these grounds (rules §11.5).
    late_ground: bool = False
    # A newer finalized result on a similar system answers the concern (rules §11.5).
    superseded_by_newer: bool = False


TYPES: dict[str, ObjectionType] = {
    t.id: t
    for t in (
        ObjectionType("compliance", "Compliance failure", "high"),
        ObjectionType("methodology", "Methodology", "high"),
        ObjectionType("reproducibility", "Reproducibility", "high", superseded_by_newer=True),
        ObjectionType(
            "validity", "Validity of results", "high", late_ground=True, superseded_by_newer=True
        ),
        ObjectionType("division", "Division rules", "medium", late_ground=True),
        ObjectionType("availability", "Availability", "medium", late_ground=True),
        # A late ground only (rules §11.5): the model served is not the one benchmarked.
        ObjectionType("model-equivalence", "Model equivalence", "medium", late_ground=True),
        ObjectionType("suspect", "Suspect or incomprehensible results", "medium"),
        ObjectionType("cosmetic", "Cosmetic", "low", blocks_finalization=False),
    )
}


CLOSED = frozenset({ObjectionState.RESOLVED, ObjectionState.RETRACTED})


class Party(enum.StrEnum):
    SUBMITTER = "submitter"  # a member of the organisation objected against
    OBJECTOR = "objector"  # a member of an organisation in the "by" tags
    CHAIR = "chair"
    COMMITTEE = "committee"  # any other reviewer


@dataclass(frozen=True)
class Action:
    id: str
    parties: frozenset[Party]
    from_states: frozenset[ObjectionState]
    to_state: ObjectionState | None  # None: the state does not change
    needs_body: bool = True
    offer: str = ""  # what the form offers ("Contest, with evidence")
    done: str = ""  # how the thread and the timeline tell it ("contested")


_OPEN = frozenset(
    {
        ObjectionState.OPEN,
        ObjectionState.ANSWERED,
        ObjectionState.UNRESOLVED,
        ObjectionState.VALIDATING,
    }
)
_ANSWERED = frozenset({ObjectionState.ANSWERED, ObjectionState.VALIDATING})
_EVERYONE = frozenset(Party)

ACTIONS: dict[str, Action] = {
    a.id: a
    for a in (
        # The submitter acknowledges with a resolution schedule, or contests with evidence.
        Action(
            "acknowledge",
            frozenset({Party.SUBMITTER}),
            frozenset({ObjectionState.OPEN, ObjectionState.UNRESOLVED}),
            ObjectionState.ANSWERED,
            offer="Acknowledge, with a resolution schedule",
            done="acknowledged",
        ),
        Action(
            "contest",
            frozenset({Party.SUBMITTER}),
            frozenset({ObjectionState.OPEN, ObjectionState.UNRESOLVED}),
            ObjectionState.ANSWERED,
            offer="Contest, with evidence",
            done="contested",
        ),
        Action(
            "accept",
            frozenset({Party.OBJECTOR}),
            _ANSWERED,
            ObjectionState.RESOLVED,
            needs_body=False,
            offer="Accept the answer",
            done="accepted the answer",
        ),
        Action(
            "retract",
            frozenset({Party.OBJECTOR}),
            _OPEN,
            ObjectionState.RETRACTED,
            offer="Retract the objection",
            done="retracted",
        ),
        Action(
            "mark_unresolved",
            frozenset({Party.OBJECTOR}),
            _ANSWERED,
            ObjectionState.UNRESOLVED,
            offer="Mark unresolved",
            done="marked unresolved",
        ),
        # A valid answer too (rules §11.3): the objectors say when they will have validated.
        Action(
            "validation_schedule",
            frozenset({Party.OBJECTOR}),
            frozenset({ObjectionState.ANSWERED}),
            ObjectionState.VALIDATING,
            offer="Give a validation schedule",
            done="scheduled validation",
        ),
        Action(
            "resolve",
            frozenset({Party.CHAIR}),
            _OPEN,
            ObjectionState.RESOLVED,
            offer="Resolve (chair)",
            done="resolved",
        ),
        # The chair finds the objection holds (rules §11.6): a point it names is withdrawn;
        # the remedy for the whole submission is the chair's decision.
        Action(
            "uphold",
            frozenset({Party.CHAIR}),
            _OPEN,
            ObjectionState.RESOLVED,
            offer="Uphold (chair): a point it names is withdrawn",
            done="upheld",
        ),
        Action("comment", _EVERYONE, _OPEN, None, offer="Comment", done="commented"),
        # Another organisation adds its "by <org>" tag (rules §11.4).
        Action(
            "join",
            frozenset({Party.COMMITTEE}),
            _OPEN,
            None,
            needs_body=False,
            offer="Join as an objector",
            done="joined",
        ),
    )
}


# The first message of a thread is the filing itself.
FILED = "file"


def told(action_id: str) -> str:
    """An action as the thread and the timeline tell it."""
    if action_id == FILED:
        return "filed"
    action = ACTIONS.get(action_id)
    return action.done if action else action_id.replace("_", " ")


class ObjectionRefused(Refused):
    default_kind = Kind.CONFLICT


def apply(action_id: str, state: ObjectionState, parties: frozenset[Party], body: str) -> Action:
    """Check that *parties* may take *action_id* on an objection in *state*."""
    action = ACTIONS.get(action_id)
    if action is None:
        raise ObjectionRefused(
            "bad-action",
            f"the action must be one of {', '.join(ACTIONS)}, not {action_id!r}",
            Kind.INVALID,
        )
    if not (action.parties & parties):
        who = " or ".join(sorted(p.value for p in action.parties))
        raise ObjectionRefused("not-your-turn", f"only the {who} may {action_id}", Kind.FORBIDDEN)
    if state not in action.from_states:
        raise ObjectionRefused(
            "not-allowed", f"{action_id!r} is not possible on an objection that is {state}"
        )
    if action.needs_body and not body.strip():
        raise ObjectionRefused("body-required", f"say something to {action_id}", Kind.INVALID)
    return action
