"""A reviewer opens a demo point in Chromium: its steady state beside the declared one,
and the window marked on its run over time."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.support.browser import sign_in
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_steady_state_beside_the_declared_one_and_on_the_chart(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal
) -> None:
    with urllib.request.urlopen(f"{portal.url}/api/v1/submissions") as response:
        submissions = json.load(response)["data"]
    sign_in(page, portal, "chair")
    # A demo point whose events hold a steady-state window long enough to be official.
    steady = '.steady-state[data-status="windowable"]'
    for submission in submissions:
        page.goto(f"{portal.url}/submissions/{submission['id']}")
        if page.locator(steady).count():
            break
    else:
        pytest.fail("no demo submission shows an official steady state")
    block = page.locator(steady).first
    assert block.get_attribute("data-verdict") == "STEADY STATE"
    table = block.locator("table.steady-compare").inner_text()
    assert "declared in point.yaml" in table and "found in the events" in table
    assert "(not gated)" in table  # P90 and P99 are shown, P50 and P95 decide
    assert "Mann–Kendall" in block.locator(".method").inner_text()
    article = page.locator("article.recount").filter(has=page.locator(steady)).first
    article.locator("details.timeseries summary").click()
    article.locator(".timeseries-chart[data-rendered=true]").wait_for(timeout=20_000)
    notes = article.locator(".annotation").all_text_contents()
    assert {"warm-up", "steady state", "drain"} <= {n.strip() for n in notes}
