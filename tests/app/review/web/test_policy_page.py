"""The review policy on the page and in the API (rules §15): the values in force, every
policy a decision or a version of the record named, and any one of them by its digest."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi.testclient import TestClient

from app.audit import policy_in_force
from app.db.session import Database
from app.main import create_app
from app.settings import Settings, review_policy

SHIPPED = files("app.core").joinpath("review_policy.toml").read_text("utf-8")


def _name_the_policy(database: Database, settings: Settings) -> str:
    """What a decision or a version of the record does: name the policy in force."""
    with database.session() as session:
        digest = policy_in_force(session, settings)
        session.commit()
    return digest


def test_the_page_shows_the_values_in_force_and_each_policy_that_was(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    shipped = review_policy(settings).digest
    with TestClient(create_app(settings)) as client:
        page = client.get("/review/policy")
        assert page.status_code == 200
        assert shipped in page.text and "not yet named" in page.text
        assert "peer review days" in page.text and "outside-review" in page.text
        assert "<td>yes</td>" in page.text and "True" not in page.text  # the ladder's withdraw
    assert _name_the_policy(database, settings) == shipped

    path = tmp_path / "policy.toml"
    path.write_text(SHIPPED.replace("window_days = 90", "window_days = 120"))
    changed = settings.model_copy(update={"review_policy_file": path})
    now = _name_the_policy(database, changed)
    with TestClient(create_app(changed)) as client:
        listed = client.get("/api/v1/review-policies").json()["data"]
        assert [(p["digest"], p["in_force"]) for p in listed] == [(shipped, False), (now, True)]
        page = client.get("/review/policy")
        assert "In force" in page.text and now in page.text
        assert f"?digest={shipped}" in page.text, "the earlier one is linked"
        # The earlier one, as it was: its own values, not the ones in force.
        before = client.get("/review/policy", params={"digest": shipped})
        assert "As it was" in before.text and "<code>90</code>" in before.text
        assert "<code>120</code>" not in before.text
        api = client.get(f"/api/v1/review-policies/{shipped}").json()
        assert api["values"]["late_objection_days"] == 90 and not api["in_force"]
        assert client.get("/api/v1/review-policy").json()["first_in_force_at"] is not None


def test_a_digest_that_is_not_one_is_refused_and_an_unknown_one_is_not_found(
    database: Database, settings: Settings
) -> None:
    with TestClient(create_app(settings)) as client:
        bad = client.get("/review/policy", params={"digest": "../etc"})
        assert bad.status_code == 422
        unknown = client.get("/review/policy", params={"digest": "0" * 64})
        assert unknown.status_code == 404 and "no review policy" in unknown.text
