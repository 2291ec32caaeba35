"""Names made from what people type."""

from __future__ import annotations

import pytest

from app.core.names import looks_like, organisation_key, slugify


def test_slugify_matches_the_cli() -> None:
    assert slugify("Acme Corp") == "Acme_Corp"
    assert slugify("  Foo & Bar, Inc.  ") == "Foo_Bar_Inc"
    assert slugify("  ") == "unknown"


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("Acme Corp.", "Acme Corp"),  # the report's spelling
        ("ACME corp", "Acme Corp"),
        ("Acme Corporation", "Acme Corp"),
        ("Acme, Inc.", "Acme"),
        ("Acme Crop", "Acme Corp"),  # a typo apart
        ("Ａｃｍｅ Corp", "Acme Corp"),  # full-width letters fold
        ("Borealis-AI", "Borealis AI"),
    ],
)
def test_names_that_are_or_look_like_one_organisation(name: str, other: str) -> None:
    assert looks_like(name, other) and looks_like(other, name)


@pytest.mark.parametrize(
    ("name", "other"),
    [("Acme Corp", "Apex Corp"), ("Dune", "Dime"), ("Fjord Labs", "Fjord Research")],
)
def test_distinct_organisations_do_not_look_alike(name: str, other: str) -> None:
    assert not looks_like(name, other)


def test_the_normalised_form_is_what_makes_a_name_unique() -> None:
    assert organisation_key("  Acme   Corp. ") == organisation_key("acme_corp") == "acme corp"
    assert organisation_key("Acme Corporation") != organisation_key("Acme Corp")
