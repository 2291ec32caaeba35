"""What a correction may change (rules §11.7): every point's measured files as submitted,
less the points withdrawn; a system's classification only by the chair; who may correct
and when."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.authorization import Actor
from app.core.lifecycle import SubmissionState
from app.review.domain.corrections import (
    changed_files,
    classification_changes,
    may_correct,
    result_changes,
)
from app.review.domain.policy import SubmissionFacts

P = "results/Acme/llama/r16"
Q = "results/Acme/llama/r64"
SUBMITTED = {
    "docs/README.md": "d1",
    "src/vllm/README.md": "s1",
    "results/Acme/system_power.json": "w1",
    f"{P}/point.yaml": "p1",
    f"{P}/result_summary.json": "r1",
    f"{P}/system_desc.json": "sd1",
    f"{P}/config.yaml": "c1",
    f"{P}/metrics/final_snapshot.json": "m1",
    f"{Q}/point.yaml": "p2",
    f"{Q}/result_summary.json": "r2",
}
NONE_WITHDRAWN: frozenset[str] = frozenset()


def test_non_result_content_may_change_and_is_listed() -> None:
    corrected = {**SUBMITTED, "docs/README.md": "d2", f"{P}/system_desc.json": "sd2",
                 f"{P}/config.yaml": "c2", "docs/calibration.md": "new"}  # fmt: skip
    del corrected["src/vllm/README.md"]
    assert result_changes(SUBMITTED, corrected, NONE_WITHDRAWN) == []
    assert changed_files(SUBMITTED, corrected) == [
        "docs/README.md", "docs/calibration.md", f"{P}/config.yaml", f"{P}/system_desc.json",
        "src/vllm/README.md",
    ]  # fmt: skip


def test_each_measured_file_is_named_when_it_differs() -> None:
    corrected = {**SUBMITTED, f"{P}/result_summary.json": "r9",
                 f"{P}/metrics/final_snapshot.json": "m9", "results/Acme/system_power.json": "w9",
                 f"{Q}/accuracy_results.json": "a"}  # fmt: skip
    assert result_changes(SUBMITTED, corrected, NONE_WITHDRAWN) == [
        f"{P}/metrics/final_snapshot.json differs from the submitted one",
        f"{P}/result_summary.json differs from the submitted one",
        f"{Q}/accuracy_results.json differs from the submitted one",
        "results/Acme/system_power.json differs from the submitted one",
    ]


def test_a_point_is_neither_added_nor_left_out_unless_withdrawn() -> None:
    without_q = {k: v for k, v in SUBMITTED.items() if not k.startswith(Q)}
    assert result_changes(SUBMITTED, without_q, NONE_WITHDRAWN) == [
        f"{Q}/ is left out: a point leaves the curve by its withdrawal, not by a correction"
    ]
    withdrawn = frozenset({"Acme/llama/r64"})
    assert result_changes(SUBMITTED, without_q, withdrawn) == []
    # A withdrawn point's results no longer count either way.
    assert result_changes(SUBMITTED, {**SUBMITTED, f"{Q}/point.yaml": "p9"}, withdrawn) == []
    added = {**SUBMITTED, "results/Acme/llama/r128/point.yaml": "p3"}
    [problem] = result_changes(SUBMITTED, added, NONE_WITHDRAWN)
    assert problem.startswith("results/Acme/llama/r128/ is a point the submission does not have")


@given(st.dictionaries(st.sampled_from(sorted(SUBMITTED)), st.text(min_size=1, max_size=3)))
def test_a_bundle_is_its_own_correction_only_when_nothing_changed(edits: dict[str, str]) -> None:
    corrected = {**SUBMITTED, **edits}
    changed = changed_files(SUBMITTED, corrected)
    assert set(changed) == {k for k, v in edits.items() if SUBMITTED[k] != v}
    # Every result problem names a file that changed.
    for problem in result_changes(SUBMITTED, corrected, NONE_WITHDRAWN):
        assert any(problem.startswith(f) for f in changed)


def test_a_division_or_availability_declared_otherwise_is_the_chairs() -> None:
    submitted = {"Acme": ("Standardized", "Available")}
    assert classification_changes(submitted, submitted) == []
    [division] = classification_changes(submitted, {"Acme": ("RDI", "Available")})
    assert "only by the chair's reclassification" in division
    [status] = classification_changes(submitted, {"Acme": ("Standardized", "Preview")})
    assert "'Preview' is not the submitted 'Available'" in status
    assert classification_changes(submitted, {}) == ["results/Acme/ is left out"]


SUBMITTER = Actor(own_organization=True)


def test_the_submitting_organisation_corrects_a_checked_submission_one_at_a_time() -> None:
    in_review = SubmissionFacts(state=SubmissionState.PASSED_CHECKS)
    assert may_correct(SUBMITTER, in_review, None) is None
    assert may_correct(SUBMITTER, SubmissionFacts(state=SubmissionState.FINALIZED), None) is None
    refusal = may_correct(Actor(committee=True, chair=True), in_review, None)
    assert refusal is not None and "the submitting organisation" in refusal.message
    pending = may_correct(SUBMITTER, in_review, "abc")
    assert pending is not None and pending.code == "correction-pending"
    for state, code in ((SubmissionState.WITHDRAWN, "closed"),
                        (SubmissionState.CHECKING, "checks-running"),
                        (SubmissionState.CHECK_ERROR, "checks-running")):  # fmt: skip
        refused = may_correct(SUBMITTER, SubmissionFacts(state=state), None)
        assert refused is not None and refused.code == code
