"""Layouts that fit (issue 28 item 3): at a phone's 390 px and a laptop's 1,400 px the
results, compare, history, accuracy, review (a submission's page) and upload pages never scroll
the page sideways, and the ranking's key columns (system, point, throughput, per-user
rate, TTFT) are in view without scrolling its box."""

from __future__ import annotations

import pytest

from tests.support.browser import sign_in
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RENDERED = "[data-rendered=true]"
KEY_COLUMNS = ("System", "Point", "system tok/s", "tok/s per user", "TTFT P90 (ms)")


def _fits(page) -> bool:  # type: ignore[no-untyped-def]
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def _key_columns_in_view(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The key headers whose right edge is past the ranking box's visible right edge."""
    out: list[str] = page.evaluate(
        """(keys) => {
          const box = document.querySelector('#ranking').closest('.table-wrap');
          const edge = Math.min(box.getBoundingClientRect().right, window.innerWidth) + 1;
          return [...document.querySelectorAll('#ranking thead th')]
            .filter(th => keys.includes(th.innerText.trim()))
            .filter(th => th.getBoundingClientRect().right > edge)
            .map(th => th.innerText.trim());
        }""",
        list(KEY_COLUMNS),
    )
    return out


def _legend_clear_of_the_axis_title(page, chart: str) -> bool:  # type: ignore[no-untyped-def]
    """The chart's legend starts below its x-axis title: neither is drawn over the other."""
    return bool(
        page.evaluate(
            """(id) => {
              const el = document.getElementById(id);
              const title = el.querySelector('.g-xtitle').getBoundingClientRect();
              const legend = el.querySelector('.legend').getBoundingClientRect();
              return legend.top >= title.bottom - 1;
            }""",
            chart,
        )
    )


@pytest.mark.parametrize("width", [390, 1400])
def test_every_page_fits_and_the_ranking_shows_its_key_columns(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert _fits(page), "results"
    headers = page.locator("#ranking thead th").all_inner_texts()
    assert set(KEY_COLUMNS) <= {h.strip() for h in headers}
    assert _key_columns_in_view(page) == []
    # On a phone the secondary columns fold away; on a laptop they are all there.
    folded = page.locator("#ranking th.more").first.is_hidden()
    assert folded == (width < 700)
    # The charts read at either width: the legend inside the chart, the small charts
    # wide enough to read, their log axes labelled in full at each tick.
    chart = page.locator("#chart-pareto").bounding_box()
    legend = page.locator("#chart-pareto .legend").bounding_box()
    assert chart and legend and legend["x"] + legend["width"] <= chart["x"] + chart["width"] + 1
    assert _legend_clear_of_the_axis_title(page, "chart-pareto")
    small = page.locator("#chart-ttft-conc").bounding_box()
    assert small and small["width"] >= 300
    texts = "els => els.map(e => e.textContent)"
    ticks = page.locator("#chart-ttft-conc .xtick text").evaluate_all(texts)
    assert "1,024" in ticks and all(t.strip() for t in ticks)
    assert "1,000" in page.locator("#chart-ttft-conc .ytick text").evaluate_all(texts)
    page.click("#compare-selected")
    page.wait_for_selector(f"#chart-curves{RENDERED}", timeout=20_000)
    assert _fits(page), "compare"
    assert _legend_clear_of_the_axis_title(page, "chart-curves")
    page.goto(f"{portal.url}/history?benchmark=llama3_1-8b")
    assert _fits(page), "history"
    page.goto(f"{portal.url}/accuracy?benchmark=llama3_1-8b")
    page.wait_for_selector(f"#accuracy-chart{RENDERED}", timeout=20_000)
    assert _fits(page), "accuracy"
    box = "document.querySelector('#accuracy-rows').closest('.table-wrap')"
    assert page.evaluate(f"{box}.scrollWidth <= {box}.clientWidth + 1"), "accuracy table"
    # The review: a result in peer review, as the chair sees it, and the review queue.
    curves = page.request.get(f"{portal.url}/api/v1/results?benchmark=llama3_1-8b").json()
    in_review = next(c["submission"] for c in curves["curves"] if c["status"] == "provisional")
    sign_in(page, portal, "chair")
    page.goto(f"{portal.url}/submissions/{in_review}")
    page.wait_for_selector("#chair-actions")
    assert _fits(page), "submission under review"
    page.goto(f"{portal.url}/review")
    assert _fits(page), "review queue"
    # The chair's invitations, with a freshly shown link (one long word).
    page.goto(f"{portal.url}/invitations")
    page.fill("#invite-email", f"layout-{width}@fjord.example")
    page.fill("#invite-org", "Fjord Labs")
    page.click("#invite-submit")
    page.wait_for_selector("#invite-link")
    assert _fits(page), "invitations"
    page.goto(f"{portal.url}/upload")
    assert _fits(page), "upload"
