"""Corrections of a submission's non-result content (rules §11.7): who may file one and
when, and whether a new bundle's results are the submitted ones.

During review the submitting organisation replaces documentation, metadata and
configurations; results may not change, so a correction's bundle holds every point's
result files byte for byte as submitted, less the points withdrawn. After finalization
the same correction is a request the chair approves, and the result's public change log
says what changed. What is a result file is the bundle's own rule
(``app.submissions.domain.bundle``).
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.authorization import Action, Actor, may
from app.core.lifecycle import TERMINAL, SubmissionState
from app.core.refusals import Refusal
from app.review.domain.policy import SubmissionFacts
from app.submissions.domain.bundle import is_result_file, point_of_file, point_results

# The states in which a submission's bundle is corrected: in review (a correction is
# applied once checked) and finalized (the chair approves it).
CORRECTABLE = frozenset({SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED})


def may_correct(actor: Actor, facts: SubmissionFacts, pending: str | None) -> Refusal | None:
    """The submitting organisation corrects a checked submission that is still in the
    record, one correction at a time (*pending*: the one not yet decided)."""
    if (refusal := may(actor, Action.CORRECT)) is not None:
        return refusal
    if facts.state in TERMINAL:
        return Refusal("closed", f"a {facts.state} submission is not corrected")
    if facts.state not in CORRECTABLE:
        return Refusal(
            "checks-running",
            "the submission's own checks have not passed: wait for them (after a check error, "
            "run them again) before correcting it",
        )
    if pending is not None:
        return Refusal(
            "correction-pending",
            f"correction {pending} is not decided yet: one correction at a time",
        )
    return None


def after_finalization(state: SubmissionState) -> bool:
    """Whether a correction of a submission in *state* is a request for the chair (rules
    §11.7): filed then, or checked then."""
    return state == SubmissionState.FINALIZED


def result_changes(
    submitted: Mapping[str, str], corrected: Mapping[str, str], withdrawn: frozenset[str]
) -> list[str]:
    """Where the corrected bundle's results differ from the submitted ones (manifests:
    path under the submission root → SHA-256), one line each; *withdrawn*: the labels
    of the points withdrawn, whose results no longer count and which may be left out."""
    before, after = point_results(dict(submitted)), point_results(dict(corrected))
    problems = [
        f"results/{label}/ is a point the submission does not have: none is added after "
        "submission (rules §8)"
        for label in sorted(set(after) - set(before))
    ]
    problems += [
        f"results/{label}/ is left out: a point leaves the curve by its withdrawal, not by a "
        "correction"
        for label in sorted(set(before) - set(after) - withdrawn)
    ]
    for label in sorted((set(before) & set(after)) - withdrawn):
        old, new = before[label], after[label]
        problems += [
            f"results/{label}/{name} differs from the submitted one"
            for name in sorted(set(old) | set(new))
            if old.get(name) != new.get(name)
        ]
    systems = {
        rel for rel in (*submitted, *corrected)
        if is_result_file(rel) and point_of_file(rel) is None
    }  # fmt: skip
    problems += [
        f"{rel} differs from the submitted one"
        for rel in sorted(systems)
        if submitted.get(rel) != corrected.get(rel)
    ]
    return problems


def changed_files(submitted: Mapping[str, str], corrected: Mapping[str, str]) -> list[str]:
    """The files the correction adds, changes or removes."""
    return sorted(
        rel for rel in {*submitted, *corrected} if submitted.get(rel) != corrected.get(rel)
    )


def classification_changes(
    submitted: Mapping[str, tuple[str | None, str | None]],
    corrected: Mapping[str, tuple[str | None, str | None]],
) -> list[str]:
    """Systems whose division or availability the corrected bundle declares otherwise
    (system folder → (division, availability)): that is the chair's reclassification
    (rules §11.4–§11.6), never a correction; a system added or left out is a result."""
    problems = [
        f"results/{name}/ is a system the submission does not have"
        for name in sorted(set(corrected) - set(submitted))
    ]
    problems += [f"results/{name}/ is left out" for name in sorted(set(submitted) - set(corrected))]
    for name in sorted(set(submitted) & set(corrected)):
        (division, availability), (new_division, new_availability) = (
            submitted[name],
            corrected[name],
        )
        if division != new_division:
            problems.append(
                f"{name}: the division {new_division!r} is not the submitted {division!r}; "
                "a division changes only by the chair's reclassification"
            )
        if availability != new_availability:
            problems.append(
                f"{name}: the availability {new_availability!r} is not the submitted "
                f"{availability!r}; it changes only by the chair's reclassification"
            )
    return problems
