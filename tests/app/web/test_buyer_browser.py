"""The buyer's views in a real Chromium: home, workload and cost, compare, history,
agentic models and the embed."""

from __future__ import annotations

import pytest

from tests.support.browser import exported_caption, sign_in
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.browser, pytest.mark.slow]
RENDERED = "[data-rendered=true]"


def test_home_workload_cost_and_compare(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/")
    assert page.locator(".preview").count() == 3
    page.click('.preview[data-benchmark="llama3_1-8b"]')
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert "cohort=" in page.url and "benchmark=llama3_1-8b" in page.url
    # The workload fills in its suggested SLA, stated with its clause.
    page.select_option("#f-workload", "interactive")
    page.wait_for_url("**workload=interactive**")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert page.locator("#f-ttft").input_value() == "300"
    assert "R §5.4" in page.locator("#workload-note").inner_text()
    # The buyer's price: cost per million tokens, labelled derived.
    page.fill("#f-price-acc", "3")
    page.select_option("#f-normalize", "usd_per_mtok")
    page.wait_for_url("**normalize=usd_per_mtok**")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert "not an MLPerf figure" in page.locator("#derived-cost").inner_text()
    costs = page.locator("#ranking td.cost").all_inner_texts()
    values = [float(c.strip("$").replace(",", "")) for c in costs]
    assert values and values == sorted(values)
    # The top two are ticked for comparison.
    page.click("#compare-selected")
    page.wait_for_selector(f"#chart-curves{RENDERED}", timeout=20_000)
    assert page.locator("#chart-curves .scatterlayer .trace").count() == 4  # 2 lines, 2 marker sets
    if page.locator("#withheld").count():  # one is in peer review: its disclosures wait
        assert "withheld while peer review is pending" in page.locator("#withheld").inner_text()
    else:
        assert page.locator("#differences tbody tr").count() >= 1
    assert page.locator("#compare-points tbody tr").count() >= 7
    with page.expect_download() as png:
        page.click("#export-curves-png")
    caption = exported_caption(page, png.value, "#chart-curves")[0]
    assert caption.startswith("MLPerf Endpoints") and "llama3_1-8b" in caption
    # The buyer's current system as the baseline: the other one reads as a % of it, at
    # every concurrency and at their SLA, and the address keeps the choice.
    page.select_option("#c-baseline", index=2)
    page.fill("#c-tpu", "30")
    page.click("#c-apply")
    page.wait_for_url("**baseline=**")
    page.wait_for_selector(f"#chart-curves{RENDERED}", timeout=20_000)
    assert "tps_per_user_min=30" in page.url
    assert page.locator("#at-sla tr.baseline .tag").inner_text() == "baseline"
    assert page.locator("#at-sla td.tps .delta").count() == 1
    assert page.locator("#compare-points .delta").count() >= 7
    assert page.locator("#c-tpu").input_value() == "30"


def test_a_point_cut_short_is_marked_where_the_buyer_reads_it(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    # Fjord is the demo's RDI system: shown when RDI results are asked for.
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&availability=Available&availability=Preview&availability=RDI"
    )
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    # No SLA: Fjord's fastest point ranks, and 12 % of its answers hit the length limit.
    mark = page.locator('#ranking tr[data-system^="Fjord"] .cut-short')
    assert mark.inner_text() == "cut short"
    assert "ended on the output length limit" in (mark.get_attribute("title") or "")
    assert page.locator('#ranking tr:not([data-system^="Fjord"]) .cut-short').count() == 0
    assert "finish_reason_counts" in page.locator(".cut-short-legend").inner_text()


def test_reproduced_points_show_their_runs_on_the_chart_and_in_the_ranking(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal
) -> None:
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    # The demo reproduced Acme's r1024 twice: three runs, their range an error bar.
    runs = page.locator('#ranking tr[data-system="Acme H200 x8"] td.runs')
    assert runs.inner_text().startswith("3 runs · ") and runs.inner_text().endswith(" %")
    assert runs.locator("a").get_attribute("href").endswith("#reproductions")
    bars = page.evaluate(
        """() => document.getElementById('chart-pareto').data
            .filter(t => t.error_y && t.error_y.visible)
            .map(t => t.error_y.array.filter(v => v > 0).length)"""
    )
    assert bars and sum(bars) == 2  # r1024 and r64, on Acme's curve only


def test_goodput_ranks_and_draws_from_the_demo_events(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&workload=interactive&tps_per_user_min=200"
        "&availability=Available&availability=Preview&availability=RDI"
    )
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    page.select_option("#f-rank-by", "goodput")
    page.wait_for_url("**rank_by=goodput**")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert page.locator("#no-goodput").count() == 0
    shares = [float(t.strip("%")) for t in page.locator("#ranking td.attainment").all_inner_texts()]
    goodputs = [
        float(t.replace(",", "")) for t in page.locator("#ranking td.goodput").all_inner_texts()
    ]
    assert len(shares) == len(goodputs) == 5
    assert goodputs == sorted(goodputs, reverse=True)
    assert min(shares) < 50 < max(shares)  # the SLA tells the systems apart
    assert "goodput" in (page.locator("#chart-pareto .ytitle").text_content() or "")
    # Each curve's point with events is drawn at its goodput.
    assert page.locator("#chart-pareto .scatterlayer .point").count() >= 5


def test_history_agentic_models_and_the_embed(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&cohort=2026-11-C1")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    page.click('#ranking tr[data-system="Acme H200 x8"] a.history-link')
    page.wait_for_selector(f"#chart-curves{RENDERED}", timeout=20_000)
    assert page.locator("#history-entries tbody tr").count() == 2
    # The history's PNG travels without the page: it carries the caption and footnotes
    # below the chart, from Plotly's camera button as from the page's.
    with page.expect_download() as png:
        page.click("#export-curves-png")
    assert png.value.suggested_filename == "history-llama3_1-8b.png"
    lines = exported_caption(page, png.value, "#chart-curves")
    assert "Acme H200 x8 (Acme Corp) · llama3_1-8b" in lines[0]
    page.hover("#chart-curves")
    with page.expect_download() as camera:
        page.click("#chart-curves .modebar-btn[data-title^='Download the chart as a PNG']")
    assert exported_caption(page, camera.value, "#chart-curves") == lines
    page.goto(f"{portal.url}/results?benchmark=kimi-k3")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    page.locator("#ranking a >> text=all agentic models").first.click()
    page.wait_for_selector(f"#chart-curves{RENDERED}", timeout=20_000)
    assert "e2e avg interactivity" in page.locator("#chart-curves").inner_text()
    # Another site frames the embed: the chart draws inside the frame.
    snippet = None
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    snippet = page.locator("#embed-code").input_value()
    assert snippet.startswith("<iframe") and "/embed/results?benchmark=llama3_1-8b" in snippet
    page.set_content(f"<html><body>{snippet}</body></html>")
    frame = page.frame_locator("iframe")
    frame.locator(f"#chart-pareto{RENDERED}").wait_for(timeout=20_000)
    assert frame.locator("form").count() == 0


def test_a_system_past_the_limit_is_listed_and_drawn_on_demand(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&limit=2")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    drawn = page.evaluate("document.getElementById('chart-pareto').data.length")
    assert page.locator("#ranking tbody tr").count() == 2
    page.click("#more-systems summary")
    listed = page.locator("#more-list li")
    # Every other curve of the view is listed (the demo's four current Available and
    # Preview ones, and what other tests of this run have published on the portal by now).
    with portal.client() as client:
        view = {"benchmark": "llama3_1-8b", "limit": "all"}
        curves = len(client.get("/api/v1/results", params=view).json()["curves"])
    assert curves >= 4 and listed.count() == curves - 2
    name = listed.first.inner_text().split(" (")[0]
    listed.first.locator("a.add-curve").click()
    page.wait_for_url("**curve=**")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    # One curve more on the chart, in the ranking at its own rank, and out of the list.
    assert page.evaluate("document.getElementById('chart-pareto').data.length") > drawn
    assert page.locator(f'#ranking tbody tr[data-system="{name}"]').count() == 1
    assert page.locator("#more-list").is_visible()  # the list stays open with a pinned curve
    assert page.locator("#more-list li").count() == curves - 3


def test_the_capacity_plan_sizes_a_load_and_keeps_every_input(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/")
    page.click("header.site >> text=Plan")
    page.select_option("#p-benchmark", "llama3_1-8b")
    page.fill("#p-users", "2000")
    page.fill("#p-ttft", "500")
    page.fill("#p-tpu", "30")
    page.fill("#p-price-acc", "2.50")
    page.click("#p-submit")
    page.wait_for_selector("#plan-rows")
    # The address carries every input: the plan can be shared as it is.
    for part in ("users=2000", "ttft_p90_max_ms=500", "tps_per_user_min=30",
                 "price_per_accelerator_hour=2.50", "benchmark=llama3_1-8b"):  # fmt: skip
        assert part in page.url
    costs = [
        float(c.strip("$").replace(",", ""))
        for c in page.locator("#plan-rows td.cost").all_inner_texts()
    ]
    assert len(costs) >= 3 and costs == sorted(costs)
    assert "derived, not an MLPerf figure" in page.locator("#plan").inner_text()
    assert "linearly" in page.locator("#plan-method").inner_text()
    # The rows are the API's, in its order.
    api = page.request.get(f"{portal.url}/api/v1/plan?{page.url.split('?', 1)[1]}").json()
    shown = page.locator("#plan-rows tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.submission)"
    )
    assert shown == [r["submission"] for r in api["rows"]]
    # A refused load says what is wrong and keeps every other input.
    page.fill("#p-users", "0")
    page.evaluate("document.getElementById('p-users').removeAttribute('min')")
    page.click("#p-submit")
    page.wait_for_selector("#plan-error")
    assert "users must be a whole number" in page.locator("#plan-error").inner_text()
    assert page.locator("#p-ttft").input_value() == "500"
    assert page.locator("#p-price-acc").input_value() == "2.50"
    assert page.locator("#p-benchmark").input_value() == "llama3_1-8b"
    assert page.locator("#p-users").get_attribute("aria-invalid") == "true"
    # The operator's price list instead of one typed price: each system at its model's.
    page.fill("#p-users", "2000")
    page.fill("#p-price-acc", "")
    page.select_option("#p-preset", "demo-list-prices")
    page.click("#p-submit")
    page.wait_for_selector("#plan-rows")
    assert "price_preset=demo-list-prices" in page.url
    note = page.locator("#preset-note").inner_text()
    assert "preset: Demo list prices, as of 2026-11-01" in note and "not a quote" in note
    api = page.request.get(f"{portal.url}/api/v1/plan?{page.url.split('?', 1)[1]}").json()
    shown = page.locator("#plan-rows td.cost").all_inner_texts()
    assert shown == [f"${r['usd_per_hour']:,.2f}" for r in api["rows"]]


CONTROLS = ("f-cohort", "f-workload", "f-benchmark", "f-ttft", "f-tpu", "f-conc",
            "f-normalize", "f-price-acc", "f-rank-by")  # fmt: skip


def _controls(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {name: page.locator(f"#{name}").input_value() for name in CONTROLS}


def test_changing_one_control_keeps_every_other(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 28 item 1: each control of the explorer changed in turn; the others keep
    their values (a workload sets only its own suggestions: the limits and regions)."""
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&workload=interactive&ttft_p90_max_ms=400"
        "&tps_per_user_min=40&concurrency_min=2&normalize=accelerator"
        "&price_per_accelerator_hour=3&rank_by=throughput"
    )
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    expected = _controls(page)
    assert expected["f-benchmark"] == "llama3_1-8b" and expected["f-price-acc"] == "3"
    cohorts = [v for v in page.locator("#f-cohort option").evaluate_all(
        "options => options.map(o => o.value)") if v]  # fmt: skip
    changes = [
        ("f-ttft", "fill", "500", "ttft_p90_max_ms=500"),
        ("f-tpu", "fill", "30", "tps_per_user_min=30"),
        ("f-conc", "fill", "4", "concurrency_min=4"),
        ("f-price-acc", "fill", "2.5", "price_per_accelerator_hour=2.5"),
        ("f-normalize", "select", "system", "normalize=system"),
        ("f-rank-by", "select", "goodput", "rank_by=goodput"),
        ("f-cohort", "select", cohorts[0], f"cohort={cohorts[0]}"),
        ("f-benchmark", "select", "gpt-oss-120b", "benchmark=gpt-oss-120b"),
        # Refused (goodput ranks system tokens/s): said, and every choice is kept.
        ("f-normalize", "select", "kw", "normalize=kw"),
    ]
    for name, how, value, in_url in changes:
        if how == "fill":  # a number applies when it is complete: Enter
            page.fill(f"#{name}", value)
            page.press(f"#{name}", "Enter")
        else:
            page.select_option(f"#{name}", value)
        page.wait_for_url(f"**{in_url}**")
        page.wait_for_load_state()
        refused = page.locator(".alert-error").count() > 0
        assert refused == (in_url == "normalize=kw"), (name, page.inner_text("main")[:200])
        expected[name] = value
        assert _controls(page) == expected, name
    page.select_option("#f-normalize", "system")
    page.wait_for_url("**normalize=system**")
    page.wait_for_load_state()
    expected["f-normalize"] = "system"
    # A workload of the same kind keeps the benchmark and everything but its suggestions.
    page.select_option("#f-workload", "batch")
    page.wait_for_url("**workload=batch**")
    page.wait_for_load_state()
    now = _controls(page)
    for name in ("f-cohort", "f-benchmark", "f-conc", "f-normalize", "f-price-acc", "f-rank-by"):
        assert now[name] == expected[name], name
    # A workload of the other kind picks a benchmark of its kind and says which.
    page.select_option("#f-workload", "agentic")
    page.wait_for_url("**workload=agentic**")
    page.wait_for_load_state()
    agentic = page.locator("#f-benchmark option:checked").get_attribute("data-agentic")
    assert agentic == "yes"
    assert page.locator("#f-price-acc").input_value() == "2.5"


def test_accuracy_at_speed_draws_each_system_and_the_threshold(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/")
    page.click("header.site >> text=Accuracy")
    page.select_option("#a-benchmark", "llama3_1-8b")
    page.click("#a-submit")
    page.wait_for_selector(f"#accuracy-chart{RENDERED}", timeout=20_000)
    api = page.request.get(f"{portal.url}/api/v1/accuracy?{page.url.split('?', 1)[1]}").json()
    systems = {r["submission"] for r in api["rows"]}
    # One marker series per system, in its colour, and the threshold as a dashed line.
    assert page.locator("#accuracy-chart .scatterlayer .trace").count() == len(systems)
    assert page.locator("#accuracy-chart .shapelayer path").count() == 1
    assert "threshold ≥ 38.3914" in page.locator("#accuracy-chart").inner_text()
    # Another metric keeps the benchmark and the SLA; a range draws both bounds.
    page.fill("#a-tpu", "60")
    page.select_option("#a-metric", "gen_len")
    page.click("#a-submit")
    page.wait_for_selector(f"#accuracy-chart{RENDERED}", timeout=20_000)
    for part in ("metric=gen_len", "tps_per_user_min=60", "benchmark=llama3_1-8b"):
        assert part in page.url
    assert page.locator("#accuracy-chart .shapelayer path").count() == 2
    assert page.locator("#accuracy-rows tr.outside-sla").count() >= 1
    # A point's datasets, on its submission page under the client's names.
    page.locator("#accuracy-rows tbody tr a").first.click()
    page.locator(".point-details summary").first.click()
    details = page.locator(".point-details").first
    for name in ("input_sequence_lengths", "early_stopping_percentiles", "run_config",
                 "accuracy_scores", "gate compared"):  # fmt: skip
        assert name in details.inner_text()
    assert details.locator("tr.point-detail").first.is_visible()


def test_each_chart_shows_before_its_script_and_gives_way_to_it(  # type: ignore[no-untyped-def]
    browser, page, portal: RunningPortal
) -> None:
    """Issue 47: a phone on a slow network sees the curves in the page itself (the
    server's picture), and Plotly's chart replaces the picture when its script comes."""
    curves = page.request.get(f"{portal.url}/api/v1/results?benchmark=llama3_1-8b").json()["curves"]
    first, second = curves[0], curves[1]
    views = {
        "/results?benchmark=llama3_1-8b": ("#chart-pareto", len(curves)),
        f"/compare?submission={first['submission']}&submission={second['submission']}": (
            "#chart-curves",
            2,
        ),
        "/embed/results?benchmark=llama3_1-8b": ("#chart-pareto", len(curves)),
    }
    for width, shown, hidden in ((1280, "wide", "narrow"), (390, "narrow", "wide")):
        context = browser.new_context(
            java_script_enabled=False, viewport={"width": width, "height": 900}
        )
        still = context.new_page()
        for path, (chart, drawn) in views.items():
            still.goto(f"{portal.url}{path}")
            picture = still.locator(f"{chart} .first-view.{shown}-view")
            assert picture.is_visible() and still.locator(f"{chart} .{hidden}-view").is_hidden()
            assert picture.locator("polyline").count() == drawn, path
            box = picture.bounding_box()
            assert box and box["width"] > 0.9 * min(width, 1100) - 80, (path, box)
            # Every curve is named in its legend, as the script's legend names it.
            legend = picture.text_content() or ""
            assert first["system"] in legend and second["system"] in legend
        context.close()
    for path, (chart, _) in views.items():
        page.goto(f"{portal.url}{path}")
        page.wait_for_selector(f"{chart}{RENDERED}", timeout=20_000)
        assert page.locator(f"{chart} .first-view").count() == 0, path


def test_a_number_applies_when_it_is_complete_never_mid_typing(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 48: typing "500" with a pause after the 5 reloaded the page with 5 ms, jumped
    to the top and closed a phone's keyboard. Now the view changes in place: no page
    load, the address follows, focus and scroll stay."""
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        page.evaluate("window.samePage = true")  # gone if the page loads again
        if width < 700:  # a phone shows the chart first; the form opens on demand
            page.click("label[for=view-toggle]")
        page.locator("#f-ttft").scroll_into_view_if_needed()
        page.click("#f-ttft")
        scrolled = page.evaluate("window.scrollY")
        page.keyboard.type("5")
        page.wait_for_timeout(1500)  # twice the pause that used to submit the form
        assert "ttft_p90_max_ms" not in page.url
        assert page.evaluate("document.activeElement.id") == "f-ttft"  # still typing there
        page.keyboard.type("00")
        page.keyboard.press("Enter")
        page.wait_for_url("**ttft_p90_max_ms=500**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert page.locator("#f-ttft").input_value() == "500"
        assert page.evaluate("window.samePage") is True
        assert page.evaluate("document.activeElement.id") == "f-ttft"
        assert abs(page.evaluate("window.scrollY") - scrolled) <= 2
        # A menu applies at once, in place too; the address carries the whole view.
        page.select_option("#f-normalize", "kw")
        page.wait_for_url("**normalize=kw**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "ttft_p90_max_ms=500" in page.url and page.evaluate("window.samePage") is True
        assert "per kW" in (page.locator("#chart-pareto .ytitle").text_content() or "")


def test_cost_before_a_price_asks_for_the_price_where_it_is_typed(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal
) -> None:
    """Issue 48: choosing cost with no price sent a view the portal refused: a 422 page,
    chart and table gone, the message in the API's parameter names."""
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        if width < 700:  # a phone shows the chart first; the form opens on demand
            page.click("label[for=view-toggle]")
        before = page.url
        page.select_option("#f-normalize", "usd_per_mtok")
        hint = page.locator("#price-needed")
        hint.wait_for(state="visible")
        assert "price" in hint.inner_text() and "_" not in hint.inner_text()
        assert page.evaluate("document.activeElement.id") == "f-price-acc"
        page.wait_for_timeout(1500)  # past the form's debounce: nothing was sent
        assert page.url == before
        page.keyboard.type("2.5")
        page.keyboard.press("Enter")
        page.wait_for_url("**price_per_accelerator_hour=2.5**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "normalize=usd_per_mtok" in page.url
        assert "not an MLPerf figure" in page.locator("#derived-cost").inner_text()


def test_the_throughput_chart_names_each_region_once_per_curve(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 48: the region's name on every point piled up into an unreadable column."""
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_function("(document.getElementById('chart-tps-conc') || {}).data", timeout=20_000)
    labels = page.evaluate(
        "document.getElementById('chart-tps-conc').data.map(t => t.text.filter(Boolean))"
    )
    assert labels and all(labels), labels  # every curve names its regions
    assert all(len(names) == len(set(names)) for names in labels), labels  # each once


def test_the_chart_axes_are_chosen_and_the_steps_follow_them(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: x and y as the official visualiser offers them, each titled with the way
    that is better, the better corner marked, the step line turned for a lower-is-better x."""
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "Better ↗" in page.locator("#chart-pareto .annotation-text").all_text_contents()
        if width < 700:  # a phone shows the chart first; the form opens on demand
            page.click("label[for=view-toggle]")
        page.select_option("#f-x", "ttft")
        page.wait_for_url("**x=ttft**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        x_title = page.locator("#chart-pareto .xtitle").text_content() or ""
        assert "TTFT P90 (ms)" in x_title and "lower is better" in x_title
        assert "Better ↖" in page.locator("#chart-pareto .annotation-text").all_text_contents()
        # The drawn step lines are the API's for the same address.
        api = page.request.get(page.url.replace("/results?", "/api/v1/results?")).json()
        drawn = page.evaluate(
            "document.getElementById('chart-pareto').data"
            ".filter(t => t.mode === 'lines' && t.x.length && t.x[0] !== null)"
            ".map(t => t.x.map((x, i) => [x, t.y[i]]))"
        )
        assert drawn == [c["step_line"] for c in api["curves"]]
        page.select_option("#f-y", "per_user")
        page.wait_for_url("**y=per_user**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "x=ttft" in page.url
        assert "tokens/s per user" in (page.locator("#chart-pareto .ytitle").text_content() or "")
        assert page.locator("#f-x").input_value() == "ttft"


def test_the_offline_view_and_the_ceiling_choice(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: the official visualiser's Offline bar view and its Off / Show / Lighten."""
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        ceilings = (
            "document.getElementById('chart-pareto').layout.shapes"
            ".filter(s => s.line.dash === 'dot').length"
        )
        assert page.evaluate(ceilings) > 0
        if width < 700:
            page.click("label[for=view-toggle]")
        page.select_option("#f-ceiling", "off")
        page.wait_for_url("**offline_ceiling=off**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert page.evaluate(ceilings) == 0
        page.select_option("#f-ceiling", "lighten")
        page.wait_for_url("**offline_ceiling=lighten**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert page.evaluate(ceilings) > 0
        opacities = page.evaluate(
            "document.getElementById('chart-pareto').data"
            ".filter(t => t.mode === 'lines' && t.x.length && t.x[0] !== null).map(t => t.opacity)"
        )
        assert opacities and max(opacities) <= 0.3
        page.select_option("#f-view", "offline")
        page.wait_for_url("**view=offline**")
        bars = page.locator("#offline-bars li")
        bars.first.wait_for()
        api = page.request.get(page.url.replace("/results?", "/api/v1/results?")).json()
        assert bars.count() == len(api["offline"])
        assert page.locator("#offline-bars .tag.elected").count() == sum(
            r["elected"] for r in api["offline"]
        )
        widths = page.evaluate(
            "[...document.querySelectorAll('#offline-bars .bar')]"
            ".map(b => b.getBoundingClientRect().width)"
        )
        assert widths == sorted(widths, reverse=True) and widths[-1] > 0
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing sideways
        page.locator("#offline-bars a").first.click()  # back to the curves, that system's drawn
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "view=offline" not in page.url and "curve=" in page.url


def test_a_result_report_from_the_ranking(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: the official visualiser's report page, reached from the ranking: the
    statement, the cards, four charts, the points, the citation, previous and next."""
    charts = ("pareto", "tps", "ttft", "per-user")
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        page.locator('#ranking tr[data-system="Acme H200 x8"] a.report-link').click()
        page.wait_for_url("**/results/1.0.*")
        for chart in charts:
            page.wait_for_selector(f"#chart-report-{chart}{RENDERED}", timeout=20_000)
        assert "Acme H200 x8" in page.locator("h1").inner_text()
        assert "output tokens/s" in page.locator("#report-statement").inner_text()
        assert page.locator("#report-cards .card").count() == 5
        assert "MLPerf Endpoints" in page.locator("#report-citation").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        following = page.locator("#report-next").inner_text().rstrip(" →")
        page.click("#report-next")
        page.wait_for_selector(f"#chart-report-pareto{RENDERED}", timeout=20_000)
        assert following in page.locator("h1").inner_text()
        assert "benchmark=llama3_1-8b" in page.url  # the view travels with the walk


def test_the_reports_table_picks_results_for_the_chart(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: every result in a table, sorted by a header, the first ten picked and
    compared on the chart, a chip taken off, and back to the table."""
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/reports?benchmark=llama3_1-8b&superseded=include")
        rows = page.locator("#reports-table tbody tr")
        total = rows.count()
        assert total >= 3
        page.click('#reports-table th[data-column="system"] a')
        page.wait_for_url("**sort=system**")
        names = page.locator("#reports-table tbody tr td:nth-child(2) a").all_inner_texts()
        assert names == sorted(names, key=str.lower)
        page.click("#select-first")
        picked = min(total, 10)
        assert page.locator("#reports-table input[name=curve]:checked").count() == picked
        assert f"{picked} picked" in page.locator("#picked-count").inner_text()
        page.locator("#reports-table input[name=curve]").first.uncheck()
        page.click("#compare-on-chart")
        page.wait_for_url("**/results?**limit=0**")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert page.locator("#chart-chips li.chip[data-curve]").count() == picked - 1
        page.locator("#chart-chips .chip-remove").first.click()
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert page.locator("#chart-chips li.chip[data-curve]").count() == picked - 2
        page.click("#browse-all")
        page.wait_for_url("**/reports?**")
        assert page.locator("#reports-table tbody tr").count() == total
        assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_dark_mode_follows_the_system_and_can_be_chosen(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: the page and its charts dark when the system is, or when chosen; the
    choice is kept in this browser."""
    background = "getComputedStyle(document.body).backgroundColor"
    chart_ink = "document.getElementById('chart-pareto')._fullLayout.font.color"
    page.emulate_media(color_scheme="dark")
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert page.evaluate(background) == "rgb(13, 17, 23)"
    assert page.evaluate(chart_ink) == "#e6edf3"
    page.select_option("#theme-choice", "light")
    page.wait_for_function(f"{chart_ink} === '#1b2430'")
    assert page.evaluate(background) == "rgb(255, 255, 255)"
    page.emulate_media(color_scheme="light")
    page.select_option("#theme-choice", "dark")
    page.reload()  # kept: dark though the system is light
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    assert page.evaluate(background) == "rgb(13, 17, 23)"
    assert page.evaluate(chart_ink) == "#e6edf3"
    page.select_option("#theme-choice", "")  # back to the system's
    assert page.evaluate(background) == "rgb(255, 255, 255)"


def test_the_zoom_buttons_zoom_the_chart(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    for width, height in ((1400, 1000), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
        page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        span = "(a => a[1] - a[0])(document.getElementById('chart-pareto')._fullLayout.xaxis.range)"
        whole = page.evaluate(span)
        page.click("#zoom-in")
        page.wait_for_function(f"{span} < {whole} * 0.6")
        page.click("#zoom-out")
        page.click("#zoom-out")
        page.wait_for_function(f"{span} > {whole} * 1.5")
        page.click("#zoom-reset")
        page.wait_for_function(f"Math.abs({span} - {whole}) < {whole} * 0.01")


def test_a_signed_in_buyer_saves_a_view_and_shares_its_link(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 49: a view named and kept; its link opens it for someone not signed in."""
    sign_in(page, portal, "rival")
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&x=ttft&offline_ceiling=off")
    page.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
    page.click("#saved-views summary")
    page.fill("#save-view-name", "TTFT, no ceilings")
    page.click("#save-view")
    page.wait_for_selector("#saved-list a.saved-link")
    assert "x=ttft" in page.url and page.url.endswith("#saved-views")
    link = page.locator("#saved-list a.saved-link", has_text="TTFT, no ceilings").get_attribute(
        "href"
    )
    assert link is not None and link.startswith("/views/")
    stranger = page.context.browser.new_context()
    try:
        other = stranger.new_page()
        other.goto(f"{portal.url}{link}")
        other.wait_for_selector(f"#chart-pareto{RENDERED}", timeout=20_000)
        assert "x=ttft" in other.url and "offline_ceiling=off" in other.url
        assert other.locator("#f-x").input_value() == "ttft"
    finally:
        stranger.close()
    page.locator("#saved-list li", has_text="TTFT, no ceilings").locator("button").click()
    page.wait_for_load_state()
    assert page.locator("#saved-list a.saved-link", has_text="TTFT, no ceilings").count() == 0


def test_the_ranking_fits_and_comes_before_the_small_charts_on_a_phone(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal
) -> None:
    """At 1,400 px the ranking of an SLA's view takes the width without scrolling sideways;
    on a phone it comes right after the big chart, the small charts after it, each hover
    box fits the screen, and a status's box is its own size."""
    view = (f"{portal.url}/results?benchmark=llama3_1-8b&ttft_p90_max_ms=500&tps_per_user_min=20"
            "&availability=Available&availability=Preview&availability=RDI")  # fmt: skip
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(view)
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    wide, shown = page.evaluate(
        "[document.querySelector('.table-wrap').scrollWidth,"
        " document.querySelector('.table-wrap').clientWidth]"
    )
    assert wide <= shown, (wide, shown)
    box = page.locator(".status-toggle input").first.bounding_box()
    assert box is not None and box["width"] < 30  # not stretched to the fields' width
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(view)
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    tops = page.evaluate(
        "['chart-pareto', 'ranking', 'chart-tps-conc'].map(id =>"
        " document.getElementById(id).getBoundingClientRect().top)"
    )
    assert tops[0] < tops[1] < tops[2], tops
    hovered = page.locator("#chart-pareto")
    hovered.scroll_into_view_if_needed()
    area = hovered.bounding_box()
    assert area is not None
    for share in (0.2, 0.35, 0.5, 0.65):
        page.mouse.move(area["x"] + area["width"] * share, area["y"] + area["height"] * 0.45)
        page.wait_for_timeout(150)
        label = page.locator("#chart-pareto .hoverlayer .hovertext").first
        if label.count():
            edges = label.bounding_box()
            assert edges is not None and edges["x"] >= 0 and edges["x"] + edges["width"] <= 390
