"""The pages as a submitter uses them, in a real Chromium (Debian's, via Playwright)."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from app.core.cohorts import Cohort
from app.core.figures import FORMATS, figure
from app.demo.bundles import BundleFactory, SystemSpec
from tests.support.browser import exported_caption, sign_in, until
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_nothing_a_page_asks_for_leaves_the_machine(page) -> None:  # type: ignore[no-untyped-def]
    """The page tests' own guard (tests/support/browser.py): a request past loopback, by
    address or by name, goes to a proxy on a closed port and fails, which fails the test
    that made it."""
    page.goto("about:blank")  # no page's Content-Security-Policy in the way
    urls = ("http://203.0.113.9/plotly.js", "https://cdn.example.org/plotly.js")
    for url in urls:
        said = page.evaluate("u => fetch(u).then(() => 'answered', () => 'failed')", url)
        assert said == "failed", url
    failed = [p for p in page.watch.problems if p.startswith("request failed")]
    assert failed == [f"request failed: net::ERR_PROXY_CONNECTION_FAILED {url}" for url in urls]
    page.watch.problems.clear()  # seen: this test's own requests


def test_upload_follow_checks_and_see_the_curve(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, current_archive: Path, tmp_path: Path
) -> None:
    sign_in(page, portal)
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(current_archive))
    page.click("form.upload button[type=submit]")
    page.wait_for_url(f"{portal.url}/submissions/*")
    # The page follows the job and reloads itself when the verdict is in.
    page.wait_for_selector("text=Passed the automated checks", timeout=30_000)
    # In confidential review the badge says so; "provisional" is what a published one says.
    assert page.locator(".status-confidential").first.inner_text() == "confidential"
    assert page.locator("#findings").inner_text().count("No errors and no warnings") == 1
    chart = page.locator(".chart[data-rendered=true]")
    chart.wait_for(timeout=10_000)
    # Plotly drew the step line, the markers, and the dedicated Offline ceiling label.
    assert page.locator(".chart .scatterlayer .trace").count() == 2
    assert "Offline (dedicated, c=13368)" in chart.inner_text()
    rows = page.locator("table.points tbody tr")
    assert rows.count() == 8
    assert "dedicated" in rows.nth(7).inner_text()
    # The submitter gets the archive back, byte for byte, from the artifact store.
    with page.expect_download() as download:
        page.click("#archive-download")
    assert Path(download.value.path()).read_bytes() == current_archive.read_bytes()
    assert download.value.suggested_filename.endswith(".tar.gz")
    page.screenshot(path=str(tmp_path / "submission.png"), full_page=True)


def test_rejected_submission_lists_errors_with_fix_and_point(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, bad_archive: Path
) -> None:
    sign_in(page, portal)
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(bad_archive))
    page.check("input[name=not_for_review]")
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("text=Rejected by the automated checks", timeout=30_000)
    errors = page.locator(".severity-error .finding")
    assert errors.count() == 2
    text = page.locator("#findings").inner_text()
    assert "metric-consistency-system-tps" in text and "seed-runtime-match" in text
    assert "Acme_H200_x8/llama3_1-8b/r16" in text  # the point the error is about
    assert "Not for review" in page.locator(".facts").first.inner_text()


def test_hostile_upload_is_refused_in_the_form(page, portal: RunningPortal, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import tarfile

    from tests.support.bundles import tar_bytes

    info = tarfile.TarInfo("../../escape.txt")
    evil = tmp_path / "evil.tar.gz"
    evil.write_bytes(tar_bytes([(info, b"boom")]))
    sign_in(page, portal)
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(evil))
    page.click("form.upload button[type=submit]")
    alert = page.locator("#upload-error")
    alert.wait_for()
    assert "path-traversal" in alert.inner_text()
    assert "../../escape.txt" in alert.inner_text()


def test_submitter_strings_are_shown_as_text_never_run(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, tmp_path: Path
) -> None:
    from app.demo.bundles import BundleFactory, SystemSpec

    hostile = 'Evil <img src=x onerror="window.pwned=1"> "quoted"'
    archive = BundleFactory(
        system=SystemSpec(name=hostile, org="Org <script>window.pwned=2</script>"),
        submission_id="sub-xss",
    ).archive(tmp_path / "xss.tar.gz")
    sign_in(page, portal, "chair")  # no organisation: the bundle's own is taken
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(archive))
    page.click("form.upload button[type=submit]")
    page.wait_for_selector(".chart[data-rendered=true]", timeout=30_000)
    assert hostile in page.locator(".curve h2").first.inner_text()
    assert "<script>" in page.locator("h1 .org").inner_text()
    page.locator(".chart .scatterlayer .trace .point").nth(3).hover(force=True)
    hover = page.locator(".hoverlayer")
    hover.get_by_text("Evil <img", exact=False).wait_for(timeout=5_000)  # shown as text
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("img[src=x]").count() == 0


def test_reproduce_a_point_from_the_page_and_see_it_on_the_chart(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, good_archive: Path
) -> None:
    from harness.sim import SimConfig
    from tests.support.sim import RunningSim

    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=1, output_tokens=20, output_spread=0)) as sim:
        sign_in(page, portal)
        page.goto(f"{portal.url}/upload")
        page.set_input_files("input#file", str(good_archive))
        page.click("form.upload button[type=submit]")
        page.wait_for_selector(".chart[data-rendered=true]", timeout=30_000)
        page.select_option("#repro-point", "Acme_H200_x8/llama3_1-8b/r64")
        page.fill("#repro-endpoint", sim.url)
        page.fill("#repro-cap", "2")
        page.fill("#repro-runs", "2")  # a series: one run after the other on the endpoint
        page.click("form.reproduce button[type=submit]")
        # The page follows the runs and reloads when they are done.
        done = page.locator(
            "#reproduction-table tr[data-verdict=info], "
            "#reproduction-table tr[data-verdict=warning]"
        )
        done.nth(1).wait_for(timeout=60_000)
        for row in done.all():
            assert "Acme_H200_x8/llama3_1-8b/r64" in row.inner_text()
            assert "→" in row.inner_text() and "series" in row.inner_text()
        page.wait_for_selector(".chart[data-rendered=true]")
        assert page.locator("#curve-1 .chart .scatterlayer .trace").count() == 3


def test_reproduction_form_errors_are_shown(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, good_archive: Path
) -> None:
    sign_in(page, portal)
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(good_archive))
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#reproductions")
    page.fill("#repro-endpoint", "http://127.0.0.1:9")
    page.fill("#repro-cap", "999999")
    page.click("form.reproduce button[type=submit]")
    alert = page.locator("#reproduction-error")
    alert.wait_for()
    assert "bad-time-cap" in alert.inner_text()


def test_what_is_typed_while_a_view_loads_is_kept(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """A buyer sets a TTFT limit and, while that view loads, types a per-user rate: the
    new view keeps what was typed, and Enter asks for both (it was lost, and Enter then
    asked nothing: a slow answer on a busy machine made this test's neighbour flaky)."""
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    held, asked = [], []
    page.on("request", lambda request: asked.append(request.url))
    page.route(lambda url: "ttft_p90_max_ms=80" in url and "tps_per_user_min" not in url,
               lambda route: held.append(route))  # fmt: skip
    page.fill("#f-ttft", "80")
    page.locator("#f-ttft").dispatch_event("change")  # the TTFT limit applies: its view loads
    page.wait_for_selector("#results[aria-busy=true]", state="attached")
    until(page, lambda: len(held) == 1, "the TTFT-limited view's request held")
    # ... and meanwhile the buyer types the next limit, key by key (no change event yet).
    page.locator("#f-tpu").press_sequentially("150")
    assert len(held) == 1
    page.evaluate("document.getElementById('f-tpu').dataset.before = 'yes'")
    held[0].continue_()
    page.wait_for_selector("#results:not([aria-busy])", state="attached")
    # The view was put in place (a new form), with the typed value in it.
    assert page.evaluate("document.getElementById('f-tpu').dataset.before || ''") == ""
    assert page.input_value("#f-ttft") == "80" and page.input_value("#f-tpu") == "150"
    # Nothing was asked for the half-typed limit: the buyer has not pressed Enter yet.
    assert not [u for u in asked if "tps_per_user_min" in u], asked
    page.press("#f-tpu", "Enter")
    page.wait_for_url("**tps_per_user_min=150**")
    assert "ttft_p90_max_ms=80" in page.url


def test_results_explorer_answers_an_sla_question(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """The demo set is loaded on an empty portal: a buyer filters by an SLA (RDI results
    too, as the demo's slowest system is RDI)."""
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&availability=Available&availability=Preview&availability=RDI"
    )
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    before_rows = page.locator("#ranking tbody tr").count()
    assert before_rows >= 4
    traces = page.evaluate("document.getElementById('chart-pareto').data.length")
    assert traces >= 2 * before_rows  # a step line and markers per curve
    dashes = page.evaluate(
        "document.getElementById('chart-pareto').data.filter(t => t.mode === 'lines')"
        ".map(t => t.line.dash)"
    )
    assert "solid" in dashes and "dash" in dashes  # verified and provisional look different
    # TTFT spans one or two decades: its log axis is ticked 1-2-5, not at 100 and 1,000.
    ticks = page.evaluate("document.getElementById('chart-ttft-conc').layout.yaxis.tickvals")
    assert any(str(t)[0] in "25" for t in ticks), ticks
    assert "peer review pending" in page.locator("#ranking").inner_text()
    ids = page.locator("#ranking td.result-id").all_inner_texts()
    assert any(i.startswith("1.0.") for i in ids)  # each reviewed result names its id
    assert page.locator("#footnote").is_visible()

    page.fill("#f-ttft", "80")
    page.fill("#f-tpu", "150")
    page.press("#f-tpu", "Enter")  # a number applies when it is complete
    page.wait_for_url("**tps_per_user_min=150**")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert "ttft_p90_max_ms=80" in page.url  # the whole view is in the URL
    after_rows = (
        page.locator("#ranking tbody tr").count() if page.locator("#ranking").count() else 0
    )
    assert after_rows < before_rows
    sizes = page.evaluate(
        "document.getElementById('chart-pareto').data.filter(t => t.mode === 'markers+text')"
        ".flatMap(t => t.marker.size)"
    )
    assert 13 in sizes and 8 in sizes  # admissible points highlighted, the rest faded
    assert page.locator("#no-admissible li").count() + after_rows == before_rows
    href = page.locator("#export-ranking-csv").get_attribute("href")
    assert "tps_per_user_min=150" in href and "format=csv" in href
    page.click("#export-menu summary")  # the exports are a menu under the chart
    with page.expect_download() as download:
        page.click("#export-png")
    assert download.value.suggested_filename.endswith(".png")
    with page.expect_download() as svg:
        page.click("#export-svg")
    assert svg.value.suggested_filename.endswith(".svg")
    assert "<svg" in Path(svg.value.path()).read_text()[:2000]

    # Unverified results are off by default and can be switched on.
    page.goto(f"{portal.url}/results?benchmark=gpt-oss-120b")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert "Dune" not in page.locator("#chart-pareto").inner_text()
    page.check("input[name=status][value=unverified]")
    page.wait_for_url("**status=unverified**")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert "Dune Gaudi 3 x8" in page.locator("#chart-pareto").inner_text()


def _colours(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    colours: dict[str, str] = page.evaluate(
        "Object.fromEntries(document.getElementById('chart-pareto').data"
        ".filter(t => t.mode === 'lines').map(t => [t.name.split(' (')[0], t.line.color]))"
    )
    return colours


def test_the_explorer_shows_its_dataset_keeps_colours_and_refuses_inline(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal
) -> None:
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&availability=Available&availability=Preview&availability=RDI"
    )
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert "cnn_dailymail" in page.locator("h1").inner_text()
    assert page.locator("#f-dataset").input_value() == "cnn_dailymail"
    everyone = _colours(page)
    # Another system on or off the chart does not repaint the others.
    page.goto(
        f"{portal.url}/results?benchmark=llama3_1-8b&organization=Fjord+Labs&availability=RDI"
    )
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    alone = _colours(page)
    assert alone and all(everyone[name] == colour for name, colour in alone.items())
    # The TTFT chart is logarithmic (minutes of queueing do not flatten the rest) and
    # shows the buyer's limit.
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&ttft_p90_max_ms=200")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    page.wait_for_function("document.getElementById('chart-ttft-conc').layout")
    axis = page.evaluate("document.getElementById('chart-ttft-conc').layout.yaxis.type")
    limit = page.evaluate("document.getElementById('chart-ttft-conc').layout.shapes[0].y0")
    assert axis == "log" and limit == 200
    assert page.locator("#export-json").get_attribute("download")  # a file, not a new page
    # The PNG travels alone, so it carries its caption and the preliminary-results
    # footnote, in lines of their own below the chart, inside the image.
    page.click("#export-menu summary")
    with page.expect_download() as png:
        page.click("#export-png")
    assert png.value.suggested_filename == "pareto-llama3_1-8b-current.png"
    caption, footnote = exported_caption(page, png.value, "#chart-pareto")
    assert caption.startswith("MLPerf Endpoints") and "llama3_1-8b · current results" in caption
    assert footnote.startswith("* ") and "preliminary" in footnote
    # Values the API refuses are refused here in the same words, with the form kept.
    for bad in ("concurrency_min=100000000000000000000", "concurrency_min=-5", "cohort=2099-01-C0"):
        page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&{bad}")
        message = page.locator("#query-error").inner_text()
        assert bad.split("=")[0] in message or "2099-01-C0" in message
        assert page.locator("#chart-pareto .main-svg").count() == 0
    page.goto(f"{portal.url}/results?ttft_p90_max_ms=abc")
    assert "must be a number, not 'abc'" in page.locator("#query-error").inner_text()


def test_recount_section_follows_the_job_and_compares_values(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, tmp_path: Path
) -> None:
    import shutil
    import tarfile
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.sweeps import make_sweep

    # The harness runs its own event loop: not in this thread, where Playwright's runs.
    with ThreadPoolExecutor(1) as pool:
        archive, events, _ = pool.submit(make_sweep, tmp_path / "sweep").result()
    unpacked = tmp_path / "bundle"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    [org] = list(unpacked.iterdir())
    [submission] = list(org.iterdir())
    label, path = events[1]
    shutil.copy(path, submission / "results" / label / "events.jsonl")
    with_events = tmp_path / "recount.tar.gz"
    with tarfile.open(with_events, "w:gz") as tar:
        tar.add(org, arcname=org.name)
    sign_in(page, portal, "chair")  # the sweep's bundle names its own organisation
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(with_events))
    page.click("form.upload button[type=submit]")
    # The page reloads itself when the checks end, then while the re-count runs.
    table = page.locator(f"article.recount[data-point='{label}'] table.compare")
    table.wait_for(timeout=60_000)
    text = table.inner_text()
    assert "reported" in text and "re-counted" in text and "output tokens" in text
    # The run over time draws when its panel is opened (on the page as it stays, once no
    # work is left for it to follow).
    page.goto(page.url)
    panel = page.locator(f"article.recount[data-point='{label}'] details.timeseries")
    panel.locator("summary").click()
    panel.locator(".timeseries-chart[data-rendered=true]").wait_for(timeout=20_000)
    assert panel.locator(".scatterlayer .trace").count() >= 4  # tok/s, in flight, TTFT, TPOT
    assert "drain" in (panel.locator(".annotation").first.text_content() or "")
    page.click(f"article.recount[data-point='{label}'] button.retry")
    page.locator(f"article.recount[data-point='{label}']").first.wait_for()
    assert page.locator("article.recount").count() >= 2  # the new re-count is listed


def test_the_review_in_the_browser_objection_answer_decision(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, tmp_path: Path
) -> None:
    """A reviewer files an objection, the submitter answers, the reviewer accepts and the
    chair finalizes, each in the browser; the inbox and the queue follow."""
    from app.demo.bundles import BundleFactory, SystemSpec

    archive = BundleFactory(
        system=SystemSpec(name="Acme browser review", saturation_tps=47_000),
        submission_id="sub-browser-review",
    ).archive(tmp_path / "r.tar.gz")
    sign_in(page, portal)
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(archive))
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("text=Passed the automated checks", timeout=30_000)
    url = page.url.split("?")[0]
    assert "peer review" in page.locator("#review-phase").inner_text()
    assert page.locator("#file-objection").count() == 0  # not for the submitter

    sign_in(page, portal, "reviewer")
    page.goto(f"{portal.url}/review")
    assert "Acme Corp" in page.locator("#review-queue").inner_text()
    page.goto(url)
    page.click("#file-objection summary")
    page.select_option("#objection-type", "suspect")
    page.fill("#objection-title", "TTFT <b>too</b> low at r8")
    page.fill("#objection-rule", "R §4.1")
    page.fill("#objection-evidence", "r8 TTFT P90 is 3 ms on a 70B model")
    page.click("#file-objection button[type=submit]")
    article = page.locator("article.objection").first
    article.wait_for()
    assert article.get_attribute("data-state") == "open"
    assert "TTFT <b>too</b> low at r8" in article.inner_text()  # text, never markup

    sign_in(page, portal)
    page.goto(f"{portal.url}/inbox")
    assert "Objection filed" in page.locator("#inbox").inner_text()
    page.goto(url)
    form = page.locator("form.objection-action").first
    assert form.locator("select[name=action]").input_value() == ""  # no act by default
    form.locator("select[name=action]").select_option("contest")
    form.locator("textarea[name=body]").fill("Prefix caching is disabled; see config.yaml.")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("article.objection[data-state=answered]")

    sign_in(page, portal, "chair")
    page.goto(url)
    page.select_option("#decision", "finalize")
    page.click("#decision-form button[type=submit]")
    error = page.locator("#review-error")
    error.wait_for()
    assert "objections-open" in error.inner_text()  # refused while the objection is open

    sign_in(page, portal, "reviewer")
    page.goto(url)
    form = page.locator("form.objection-action").first
    form.locator("select[name=action]").select_option("accept")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("article.objection[data-state=resolved]")

    sign_in(page, portal, "chair")
    page.goto(url)
    # The assigned review is not complete: finalizing is refused, the override offered.
    assert "no reviewer is assigned" not in page.locator("#review-incomplete").inner_text()
    page.select_option("#decision", "finalize")
    page.click("#decision-form button[type=submit]")
    error = page.locator("#review-error")
    error.wait_for()
    assert "review-incomplete" in error.inner_text()
    assert page.locator("#decision").input_value() == "finalize"  # the form kept its choice
    page.check("#decision-override input[name=override]")
    page.fill("#decision-reason", "the reviewer is on leave; the objection settled it")
    page.click("#decision-form button[type=submit]")
    page.wait_for_selector("#due-cohort")
    assert page.watch.dialogs[-1].startswith("Finalize this submission?")  # asked first
    assert "Finalized" in page.locator("#state-label").inner_text()
    timeline = page.locator("#timeline").inner_text()
    assert "finalize" in timeline and "finalized without review" in timeline
    assert "the reviewer is on leave" in timeline
    assert page.locator("#review-incomplete, #decision-override").count() == 0  # decided
    due = page.locator("#due-cohort").get_attribute("data-cohort")
    # Not "published" before the chair releases the cohort, nor called verified.
    assert "once the chair publishes it" in page.locator("#due-cohort").inner_text()
    assert page.locator("#published-in").count() == 0
    assert page.locator("#status .status").inner_text() == "finalized"
    page.goto(f"{portal.url}/submissions")
    badge = page.locator(f'tr:has(a[href$="{url.rsplit("/", 1)[-1]}"]) .status')
    assert badge.inner_text() == "finalized"
    page.goto(url)
    page.click("#bundle-files")
    # No file chosen: the list takes the width (issue 48: a 230 px column, paths broken).
    listed = page.locator("#file-list").bounding_box()
    assert listed and listed["width"] > 0.6 * (page.viewport_size or {"width": 1280})["width"]
    page.locator("#file-list a", has_text="system_desc.json").first.click()
    assert '"submitter_org_names"' in page.locator("#file-content").inner_text()
    # On a phone a file's content takes the whole width, below the list.
    page.set_viewport_size({"width": 390, "height": 844})
    shown = page.locator("#file-content").bounding_box()
    assert shown and shown["width"] > 300, shown
    page.set_viewport_size({"width": 1280, "height": 1600})

    # A provisional result whose names are markup, published in the same cohort: the
    # public explorer must show them as text.
    hostile = BundleFactory(
        system=SystemSpec(
            name='Evil <img src=x onerror="window.pwned=3">',
            saturation_tps=9_000,
            org="Org <script>window.pwned=4</script>",
        ),
        submission_id="sub-xss-results",
    ).archive(tmp_path / "xss.tar.gz")
    with portal.client("chair") as api:
        uploaded = api.post("/api/v1/submissions", data={"publication_mode": "provisional"},
                            files={"file": ("xss.tar.gz", hostile.read_bytes())})  # fmt: skip
        assert uploaded.status_code == 201, uploaded.text
    portal.wait_finished(uploaded.json()["id"])
    # The cohort is released at its time (the CLI's --now stands for Wednesday 08:00 PT).
    at = Cohort.parse(due).publication_at(ZoneInfo("America/Los_Angeles")).isoformat()  # type: ignore[union-attr]
    assert " as verified in " + due in portal.cli("publish", due, "--now", at)
    page.goto(url)
    assert page.locator("#published-in").inner_text() == f"cohort {due}"
    assert page.locator("#status .status").inner_text() == "verified"
    page.context.clear_cookies()  # the public now sees it on the curves
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b&cohort={due}")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert "Acme browser review" in page.locator("#chart-pareto").inner_text()
    chart = page.locator("#chart-pareto").inner_text()
    assert 'Evil <img src=x onerror="window.pwned=3">' in chart
    # Ranked or listed as without an admissible point, the organisation reads as text.
    assert "Org <script>window.pwned=4</script>" in page.locator("main").inner_text()
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("img[src=x]").count() == 0


def test_the_submitter_withdraws_a_point_then_the_submission_from_the_page(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, tmp_path: Path
) -> None:
    """Rules §11.7: a faulty point during review, the whole submission at any time; the
    page offers the submitter only what it may do."""
    from app.demo.bundles import BundleFactory, SystemSpec

    archive = BundleFactory(
        system=SystemSpec(name="Acme withdrawal", saturation_tps=12_000),
        submission_id="sub-withdrawal",
    ).archive(tmp_path / "w.tar.gz")
    with portal.client("submitter") as api:
        uploaded = api.post(
            "/api/v1/submissions", files={"file": ("w.tar.gz", archive.read_bytes())}
        )
        assert uploaded.status_code == 201, uploaded.text
    sid = uploaded.json()["id"]
    portal.wait_finished(sid)
    sign_in(page, portal)
    page.goto(f"{portal.url}/submissions/{sid}")
    form = page.locator("#point-state-form")
    # No state is chosen for the submitter: the only move is chosen, and asked about.
    states = form.locator("select[name=state] option:not([disabled])").all_text_contents()
    assert states == ["withdrawn"]
    assert form.locator("select[name=state]").input_value() == ""
    label = form.locator("select[name=point] option").nth(1).get_attribute("value")
    form.locator("select[name=point]").select_option(label)
    form.locator("select[name=state]").select_option("withdrawn")
    form.locator("input[name=reason]").fill("ran on a degraded node")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#timeline")
    assert page.watch.dialogs[-1].startswith("Mark the point withdrawn?")
    timeline = page.locator("#timeline").inner_text()
    assert f"{label}: active → withdrawn: ran on a degraded node" in timeline
    assert page.locator("#chair-actions").count() == 0
    # Withdrawing the whole submission is its own step, under its own heading, and its
    # button reads as what cannot be undone (outlined in red), not as the page's primary.
    withdraw = page.locator("#withdraw-form")
    assert withdraw.locator("h3").inner_text() == "Withdraw the whole submission"
    colour = withdraw.locator("button").evaluate("b => getComputedStyle(b).color")
    assert colour == "rgb(180, 35, 24)", colour
    # Withdrawing the submission asks first: answered "no", nothing happens.
    page.watch.accept_dialogs = False
    page.fill("#withdraw-reason", "we found a fault in the harness config")
    page.click("#withdraw-form button[type=submit]")
    assert page.watch.dialogs[-1].startswith("Withdraw this submission?")
    with portal.client("submitter") as api:
        assert api.get(f"/api/v1/submissions/{sid}").json()["state"] == "passed_checks"
    page.watch.accept_dialogs = True
    page.click("#withdraw-form button[type=submit]")
    page.wait_for_selector("#state-label >> text=Withdrawn")
    assert "Withdrawn" in page.locator("#state-label").inner_text()
    assert page.locator("#withdraw-form").count() == 0  # nothing left to withdraw
    with portal.client("submitter") as api:
        body = api.get(f"/api/v1/submissions/{sid}").json()
    assert body["state"] == "withdrawn"


def test_the_api_documentation_renders_from_local_files(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """The header's API link: Swagger UI lists the operations (the CSP blocked a CDN copy)."""
    page.goto(f"{portal.url}/")
    page.click("header.site nav >> text=API")
    # Rendering a schema of this size is seconds of script: a busy machine may take a
    # minute (the suite runs beside other work), and what is tested is that it renders.
    page.wait_for_selector(".opblock-summary-path", timeout=90_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/results" in p for p in paths)


def test_a_newcomer_asks_is_invited_joins_and_submits(  # type: ignore[no-untyped-def]
    page, portal: RunningPortal, seed_registry: Any, tmp_path: Path
) -> None:
    system = SystemSpec(name="Glacier G1 x8", shortened_name="Glacier-G1x8",
                        org="Glacier Inc", accelerator="NVIDIA H200")  # fmt: skip
    archive = BundleFactory(
        system=system, submission_id="sub-glacier", target_cohort=seed_registry.target_cohort,
        seed_set=seed_registry.current,
    ).archive(tmp_path / "glacier.tar.gz")  # fmt: skip
    # From the sign-in page, someone without an account asks for one.
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto(f"{portal.url}/login")
    page.click("#ask-for-account")
    page.fill("#request-email", "newcomer@glacier.example")
    page.fill("#request-name", "Grace Newcomer")
    page.fill("#request-org", "Glacier Inc")
    page.click("#request-submit")
    assert "the chair has your request" in page.locator("#request-sent").inner_text()
    # The chair reads it in the inbox and answers with an invitation.
    sign_in(page, portal, "chair")
    page.goto(f"{portal.url}/inbox")
    page.click("text=Account request: Grace Newcomer (Glacier Inc)")
    page.wait_for_url("**/invitations**")
    row = page.locator('#account-requests tr[data-email="newcomer@glacier.example"]')
    row.locator("button.invite-request").click()
    link = page.locator("#invite-link").inner_text()
    assert "/join/" in link
    # The newcomer follows the link, chooses a password, is signed in and uploads.
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto(link)
    assert "Glacier Inc" in page.locator("#join-who").inner_text()
    page.fill("#join-name", "Grace")
    page.fill("#join-password", "a long new password")
    page.fill("#join-repeated", "a long new password")
    page.click("#join-submit")
    page.wait_for_url("**/upload?welcome=1")
    assert "newcomer@glacier.example" in page.locator("#who").inner_text()
    page.set_input_files("input#file", str(archive))
    page.click("form.upload button[type=submit]")
    page.wait_for_url(f"{portal.url}/submissions/*")
    assert "Glacier Inc" in page.locator("h1 .org").inner_text()
    # The page reloads itself when the checks are over; leaving it before would race that.
    page.wait_for_selector('#submission[data-finished="true"]', timeout=30_000)
    # The link worked once.
    page.goto(link)
    assert "used already" in page.locator("#join-dead").inner_text()


def test_pages_and_scripts_write_each_figure_alike(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    """Issue 48: "22136.0" in the ranking beside "2,000" on the plan, "458917.7 ms" on one
    page and "459 s" on another. One table (app/web/figures.py), a filter and a script
    function: the same words for the same figure, whichever wrote them."""
    rng = random.Random(48)
    cases = [
        (value, kind)
        for kind in FORMATS
        for value in [0.0, 0.5, 2.5, -2.5, 9999.95, 10_000.0, 1e6 + 0.5]
        + [round(rng.uniform(-1e7, 1e7), rng.randint(0, 4)) for _ in range(40)]
    ]
    page.goto(f"{portal.url}/results?benchmark=llama3_1-8b")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    written = page.evaluate(
        "cases => cases.map(([v, kind]) => window.EndpointsPoints.figure(v, kind))", cases
    )
    assert written == [figure(value, kind) for value, kind in cases]
    # The ranking writes its figures so: grouped thousands, a long wait in seconds.
    tps = page.locator("#ranking tbody tr").first.locator("td.num").first.inner_text()
    assert re.fullmatch(r"\d{1,3}(,\d{3})*\.\d", tps.split()[0]), tps
