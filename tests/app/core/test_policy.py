"""The review policy as configuration (rules §15): the shipped file holds the rules'
values; an operator's file changes them; a broken one is refused naming the entry."""

from __future__ import annotations

import dataclasses
from importlib.resources import files
from pathlib import Path

import pytest

from app.core.clocks import Penalty
from app.core.policy import PolicyInvalid, ReviewPolicy, read_policy, review_policy_of
from app.main import create_app
from app.settings import Settings, review_clock, review_policy

SHIPPED = files("app.core").joinpath("review_policy.toml").read_text("utf-8")


def test_the_shipped_file_holds_the_rules_values() -> None:
    policy = review_policy_of()
    assert policy == ReviewPolicy()
    assert policy.review.penalties == (Penalty(3, 1), Penalty(6, 2), Penalty(10, 0, True))
    assert (policy.late_objection_days, policy.max_points, policy.fraud_neutral_screeners) == (
        90, 32, 2,
    )  # fmt: skip
    assert policy.disputes.statements_business_days == 10 and policy.disputes.appeal_days == 14
    # The charts' labels as the spec suggests reading them (rules §11.11).
    assert policy.statuses.lists_outside_review
    assert policy.statuses.confidential_badge == "confidential"


def test_an_operators_file_changes_the_values_in_force(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(SHIPPED.replace("window_days = 90", "window_days = 120")
                    .replace("peer_review_days = 21", "peer_review_days = 28"))  # fmt: skip
    settings = Settings(data_dir=tmp_path / "data", review_policy_file=path)
    assert review_policy(settings).late_objection_days == 120
    assert review_clock(settings).rules.peer_review_days == 28
    assert review_policy(settings).digest != ReviewPolicy().digest


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (("window_days = 90", "window_days = 90\nweeks = 1"), "[late_objections]: unknown entry"),
        (("neutral_screeners = 2\n", ""), "[fraud]: missing neutral_screeners"),
        (("max_points = 32", 'max_points = "32"'), "[curve].max_points: must be a whole number"),
        (("business_days = 6\n", "business_days = 2\n"), "penalties: the steps' business_days"),
        (("withdraw = true", "withdraw = 1"), "penalties[2].withdraw: must be true or false"),
        (("resolution_days = 42", "resolution_days = 14"), "resolution_days must end after"),
        (("[curve]", "[curve\n"), "not TOML"),
        (('unverified = "outside-review"', 'unverified = "rdi"'),
         '[statuses].unverified: must be one of "outside-review", "confidential-review"'),
        (('verified = "finalized"', 'verified = "audited"'),
         '[statuses].verified: must be "finalized"'),
    ],
)  # fmt: skip
def test_a_broken_file_is_refused_naming_the_entry(
    tmp_path: Path, edit: tuple[str, str], named: str
) -> None:
    assert edit[0] in SHIPPED
    with pytest.raises(PolicyInvalid, match=named.replace("[", r"\[").replace("]", r"\]")):
        read_policy(SHIPPED.replace(*edit), "policy.toml")
    path = tmp_path / "broken.toml"
    path.write_text(SHIPPED.replace(*edit))
    with pytest.raises(PolicyInvalid, match=str(path)):
        create_app(Settings(data_dir=tmp_path / "data", review_policy_file=path))


def test_the_digest_names_the_values() -> None:
    changed = dataclasses.replace(ReviewPolicy(), max_points=30)
    assert ReviewPolicy().digest == review_policy_of().digest != changed.digest
