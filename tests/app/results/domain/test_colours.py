"""One colour per system: stable, and never shared on one chart while the palette lasts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.results.domain.colours import PALETTE, colours, preferred, system_key

names = st.text(min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(names, unique=True, min_size=1, max_size=len(PALETTE)))
def test_no_two_systems_on_one_chart_share_a_colour(keys: list[str]) -> None:
    given_colours = colours(keys)
    assert len(set(given_colours)) == len(keys)
    assert colours(list(reversed(keys))) == list(reversed(given_colours))  # order-blind


@settings(max_examples=60, deadline=None, derandomize=True)
@given(names, st.lists(names, max_size=6))
def test_a_system_keeps_its_colour_where_nothing_else_wants_it(key: str, others: list[str]) -> None:
    own = PALETTE[preferred(key)]
    assert colours([key]) == [own]
    chart = colours([key, *others])
    distinct = {key, *others}
    if len({preferred(k) for k in distinct}) == len(distinct):  # no two want one colour
        assert chart == [PALETTE[preferred(k)] for k in [key, *others]]
    assert chart.count(chart[0]) == 1 + others.count(key)  # the same key, the same colour


def test_the_key_ignores_case_and_spacing() -> None:
    assert system_key("Acme Corp", " Acme H200 x8") == system_key("acme corp", "acme h200 x8 ")
