"""Each of the four users' main path, end to end, in a real Chromium.

The page fixture (tests/app/web/browser.py) fails a walk on any console error, any failed
request and any JSON shown as a page; the walks check that what a newcomer needs is said
on the page itself.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from app.demo.bundles import BundleFactory, SystemSpec
from tests.support.accounts import ACCOUNTS, PASSWORD
from tests.support.browser import sign_in, sticking_out
from tests.support.portal import RunningPortal

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZONE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} P[SD]T")  # times in the cohorts' zone


def _upload(page, portal: RunningPortal, archive: Path, mode: str = "confidential") -> str:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/upload")
    page.set_input_files("input#file", str(archive))
    page.select_option("#publication_mode", mode)
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("text=Passed the automated checks", timeout=30_000)
    url: str = page.url
    return url.split("?")[0].split("#")[0]


def test_the_submitter_walk(page, portal: RunningPortal, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Sign-in keeps the e-mail after a wrong password.
    page.goto(f"{portal.url}/login")
    page.fill("#email", ACCOUNTS["submitter"][0])
    page.fill("#password", "not the password")
    page.click("form.upload button[type=submit]")
    assert "Wrong e-mail or password" in page.locator("#login-error").inner_text()
    assert page.locator("#email").input_value() == ACCOUNTS["submitter"][0]
    page.fill("#password", PASSWORD)
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#who")

    # The upload form says whose bundle it takes, and keeps its choices after a refusal.
    page.goto(f"{portal.url}/upload")
    assert "Acme Corp" in page.locator("#upload-org").inner_text()
    assert "submitter_org_names" in page.locator("#upload-org").inner_text()
    empty = tmp_path / "empty.tar.gz"
    empty.write_bytes(b"")
    page.set_input_files("input#file", str(empty))
    page.select_option("#publication_mode", "provisional")
    held = (dt.date.today() + dt.timedelta(days=30)).isoformat()  # within rules §4.2
    page.fill("#embargo_date", held)
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#upload-error")
    assert page.locator("#publication_mode").input_value() == "provisional"
    assert page.locator("#embargo_date").input_value() == held
    # The refusal says what to do and leads to the rule, marked on the catalogue's page.
    assert "What to do" in page.locator("#upload-fix").inner_text()
    page.click("#upload-fix a")
    page.wait_for_selector("#rules tr:target")
    assert page.locator("#rules tr:target").get_attribute("id") == "rule-empty-upload"
    assert sticking_out(page) == []

    archive = BundleFactory(
        system=SystemSpec(name="Acme walk", saturation_tps=31_000),
        submission_id="sub-walk-submitter",
    ).archive(tmp_path / "walk.tar.gz")
    url = _upload(page, portal, archive)
    page.wait_for_selector(".chart[data-rendered=true]", timeout=10_000)
    # What the system discloses and how its regions were set, on the page.
    assert "vLLM 0.11" in page.locator("#disclosures-1").inner_text()
    page.click("#curve-1 details.region-basis summary")
    basis = page.locator("#curve-1 details.region-basis").inner_text()
    assert "C_min" in basis and "log2" in basis
    regions = page.locator("#curve-1 table.points tbody td:nth-child(3)").all_inner_texts()
    assert "Ultra Low Concurrency" in regions and not any("_" in r for r in regions)
    assert all(ZONE.search(t) for t in page.locator("time").all_inner_texts())
    assert "§§" not in page.locator("#findings").inner_text()

    # A form's address reloaded after a refusal lands on its page, not on an error.
    page.goto(f"{url}/reproductions")
    assert page.url.split("#")[0] == url
    # An unknown address is a page of the site with a way back.
    page.goto(f"{portal.url}/submissions/sub-that-does-not-exist")
    assert "no submission with id" in page.locator("#error-message").inner_text()
    page.click("#error-message ~ p a[href='/']")
    page.wait_for_selector("#who")
    page.goto(f"{portal.url}/inbox")
    page.wait_for_selector("#inbox")


def test_the_reviewer_walk(page, portal: RunningPortal, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    archive = BundleFactory(
        system=SystemSpec(name="Acme reviewed walk", saturation_tps=28_000),
        submission_id="sub-walk-review",
    ).archive(tmp_path / "review.tar.gz")
    sign_in(page, portal)
    url = _upload(page, portal, archive)

    sign_in(page, portal, "reviewer")
    page.click("#nav-review")
    page.wait_for_selector("#review-queue")
    page.goto(url)
    assert "peer review" in page.locator("#review-phase").inner_text()
    # The system description table: every cell filled, the page no wider than the window.
    table = page.locator("#system-desc-diff")
    cells = table.locator("td.points").all_inner_texts()
    assert cells and all(c.strip() for c in cells)
    assert sticking_out(page) == []

    page.click("#file-objection summary")
    page.fill("#objection-title", "Throughput above the saturation of the hardware")
    page.fill("#objection-rule", "R §9.2")
    page.fill("#objection-evidence", "line one of the log\nline two of the log")
    page.click("#file-objection button[type=submit]")
    objection = page.locator("article.objection").first
    objection.wait_for()
    # The style sheet may still be on its way when the element is there: wait for it.
    page.wait_for_load_state("load")
    evidence = objection.locator("p.evidence").first
    assert evidence.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    assert "line one of the log\nline two of the log" in evidence.inner_text()
    offered = objection.locator("select[name=action] option").all_inner_texts()
    assert offered and not any("Join" in o for o in offered)  # not on one's own objection
    deadline = objection.locator("p.muted time").all()
    assert deadline and all(ZONE.search(t.inner_text()) for t in deadline)
    assert all("UTC" in (t.get_attribute("title") or "") for t in deadline)
    timeline = page.locator("#timeline").inner_text()
    assert "objection filed" in timeline and "_" not in timeline

    # The other reviewer may join it, and the thread and the timeline tell it alike.
    sign_in(page, portal, "reviewer2")
    page.goto(url)
    form = page.locator("form.objection-action").first
    form.locator("select[name=action]").select_option("join")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#timeline >> text=objection joined")
    assert "joined" in page.locator("ol.thread").first.inner_text()


def test_the_chair_walk(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    sign_in(page, portal, "chair")
    page.click("#nav-review")
    page.wait_for_selector("#review-queue")
    cohort = page.locator("#publish-cohort").input_value()
    assert re.fullmatch(r"\d{4}-\d{2}-C[01]", cohort)  # the cohort to publish next, filled in
    # What is lined up is listed without asking: that cohort first, then the one after it.
    lined_up = page.locator(".publish-plan")
    assert lined_up.first.get_attribute("data-cohort") == cohort
    assert lined_up.last.get_attribute("data-publishable") == "false"
    # The next one is not due yet: what it would publish, or (on this shared portal, where
    # another test released it at a set time) when it was published.
    later = lined_up.last.inner_text()
    assert "as things stand it would publish" in later or "was already published" in later
    page.click("#publish-form button[type=submit]")
    # Nothing is published by the first click: the page says what would be, or that the
    # cohort was published already (the demo set published the latest one).
    outcome = page.locator("#publish-plan, #publish-error")
    outcome.wait_for()
    text = outcome.inner_text()
    assert "would publish" in text or "already published" in text or "not" in text
    page.goto(f"{portal.url}/results")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    page.goto(f"{portal.url}/inbox")
    page.wait_for_selector("#inbox")
    assert sticking_out(page) == []


def test_the_buyer_walk(page, portal: RunningPortal) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{portal.url}/")
    page.keyboard.press("Tab")  # the first stop skips the header
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.click("header.site nav >> text=Results")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert page.locator("#no-sla").is_visible()  # no SLA: the page says what it ranks
    assert page.locator("#f-dataset").input_value()
    page.fill("#f-ttft", "2000")
    page.fill("#f-tpu", "50")
    page.press("#f-tpu", "Enter")
    page.wait_for_url("**tps_per_user_min=50**")
    page.wait_for_selector("#chart-pareto[data-rendered=true]", timeout=20_000)
    assert page.locator("#no-sla").count() == 0
    assert sticking_out(page) == []  # a wide ranking scrolls in its box, not the page
    header = page.locator("#ranking thead").inner_text()
    assert "Provisioned kW" in header and "Dataset" not in header
    page.click("#export-menu summary")  # the exports are a menu under the chart
    with page.expect_download() as csv_file:
        page.click("#export-ranking-csv")
    assert csv_file.value.suggested_filename.endswith("-ranking.csv")
    with page.expect_download() as json_file:
        page.click("#export-json")
    assert json_file.value.suggested_filename.endswith(".json")
    # A value the portal refuses is said on the page, the form as typed.
    page.goto(f"{portal.url}/results?concurrency_min=-5")
    assert "concurrency_min" in page.locator("#query-error").inner_text()
    assert page.locator("#f-conc").input_value() == "-5"
    page.click("header.site nav >> text=API")
    # Swagger UI renders the whole schema in the page's script: more than 20 s on a
    # machine busy with another suite (rendering, not its speed, is under test).
    page.wait_for_selector(".opblock-summary-path", timeout=90_000)
    page.goto(f"{portal.url}/no-such-page")
    assert page.locator("#error-title").inner_text() == "Not found"
