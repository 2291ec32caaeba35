"""Driving the pages in a real Chromium (Debian's, via Playwright), and watching them.

Every browser test fails on what a person would see go wrong even when its own assertions
pass: a JavaScript error or a console error, a request that failed (a script, a style, a
fetch the page made), or JSON shown as a page where an HTML page belonged.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.accounts import ACCOUNTS, PASSWORD
from tests.support.portal import RunningPortal
from tests.support.services import require

if TYPE_CHECKING:
    from playwright.sync_api import Download, Page, ProxySettings

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
# Nothing leaves the machine: a name other than 127.0.0.1 does not resolve (above), and a
# request to any other address goes to a proxy on a closed loopback port, and fails (which
# the Watch reports); Chromium never sends loopback through a proxy. Not a route in the
# context: Playwright turns the HTTP cache off for a routed context, and each page then
# fetched and compiled its scripts anew, through this process.
NO_WAY_OUT: ProxySettings = {"server": "http://127.0.0.1:9", "bypass": "127.0.0.1"}


@dataclass
class Watch:
    problems: list[str] = field(default_factory=list)
    # Confirmation dialogs are answered as a person who meant it would (accept), unless a
    # test says otherwise; their messages are kept.
    accept_dialogs: bool = True
    dialogs: list[str] = field(default_factory=list)
    # Pages the portal answered with an HTML refusal (a form shown again with its error),
    # loaded or fetched to be shown in place: the browser logs their status as a console
    # error, which is not a defect.
    refused_pages: set[str] = field(default_factory=set)

    def on_response(self, response) -> None:  # type: ignore[no-untyped-def]
        request = response.request
        kind = response.headers.get("content-type", "")
        if request.resource_type == "document":
            if "json" in kind:
                self.problems.append(f"JSON shown as a page: {response.status} {response.url}")
            elif response.status >= 400:
                self.refused_pages.add(response.url)
        elif request.resource_type == "fetch" and "text/html" in kind and response.status < 500:
            # A page a script fetched to show in place (the explorer's next view): a
            # refusal is shown as the page would show it.
            if response.status >= 400:
                self.refused_pages.add(response.url)
        elif response.status >= 400:
            self.problems.append(f"request failed: {response.status} {response.url}")

    def on_console(self, message) -> None:  # type: ignore[no-untyped-def]
        if message.type != "error":
            return
        where = (message.location or {}).get("url", "")
        if where in self.refused_pages and "Failed to load resource" in message.text:
            return
        self.problems.append(f"console error: {message.text} ({where})")

    def on_dialog(self, dialog) -> None:  # type: ignore[no-untyped-def]
        self.dialogs.append(dialog.message)
        if self.accept_dialogs:
            dialog.accept()
        else:
            dialog.dismiss()

    def on_request_failed(self, request) -> None:  # type: ignore[no-untyped-def]
        failure = request.failure or ""
        if "ERR_ABORTED" in failure:  # a fetch cut short by leaving the page
            return
        self.problems.append(f"request failed: {failure} {request.url}")


@contextmanager
def chromium(chromium_path: str) -> Iterator[object]:
    """A headless Chromium (a launch costs a second or two): one per module of page tests
    (the ``browser`` fixture of tests/conftest.py)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(
                executable_path=chromium_path, headless=True, args=LAUNCH_ARGS, proxy=NO_WAY_OUT
            )
        except Exception as exc:  # noqa: BLE001 - report why the browser did not start
            require(False, f"a launchable Chromium ({exc})")
        yield browser
        browser.close()


@contextmanager
def watched_page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A page in a fresh context (no cookies, storage or cache shared with another test)
    that reaches loopback only (``chromium``); fails on what Watch saw."""
    context = browser.new_context(viewport={"width": 1280, "height": 1600})
    page = context.new_page()
    watch = Watch()
    page.on("pageerror", lambda exc: watch.problems.append(f"JavaScript error: {exc}"))
    page.on("console", watch.on_console)
    page.on("response", watch.on_response)
    page.on("requestfailed", watch.on_request_failed)
    page.on("dialog", watch.on_dialog)
    page.watch = watch
    try:
        yield page
    finally:
        context.close()
    assert watch.problems == [], "\n".join(watch.problems)


def until(page: Page, condition: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    """Wait until *condition* holds, letting Playwright deliver its events meanwhile: a
    route's handler runs when the driver's message reaches this process, which on a busy
    machine can be after the call that caused the request has returned."""
    for _ in range(int(timeout_s / 0.025)):
        if condition():
            return
        page.wait_for_timeout(25)
    raise AssertionError(f"{what}: not after {timeout_s:.0f} s")


def sign_in(page, portal: RunningPortal, key: str = "submitter") -> None:  # type: ignore[no-untyped-def]
    """Sign in through the form; a fresh browser context per test starts signed out."""
    # Leave the last page first: its polling must not race the cleared cookies.
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto(f"{portal.url}/login")
    page.fill("#email", ACCOUNTS[key][0])
    page.fill("#password", PASSWORD)
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#who", state="attached")  # on a phone it is in the folded menu


# A PNG decoded by the browser: its size and the bands of rows that carry ink (a pixel
# darker than light grey), top to bottom, each [first row, last row].
_INK_BANDS = """async (b64) => {
  const image = new Image();
  await new Promise((done, failed) => { image.onload = done; image.onerror = failed;
                                        image.src = 'data:image/png;base64,' + b64; });
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const px = ctx.getImageData(0, 0, image.width, image.height).data;
  const bands = [];
  for (let y = 0; y < image.height; y++) {
    let ink = false;
    for (let x = 0; x < image.width && !ink; x++) {
      const i = 4 * (y * image.width + x);
      ink = px[i] + px[i + 1] + px[i + 2] < 450;
    }
    if (!ink) continue;
    const last = bands[bands.length - 1];
    if (last && last[1] === y - 1) last[1] = y; else bands.push([y, y]);
  }
  return [image.width, image.height, bands];
}"""

CHART_HEIGHT = 860  # of an exported chart, above its caption (static/points.js)


def exported_caption(page: Page, png: Download, chart: str) -> list[str]:
    """The lines an exported chart's PNG carries below the chart, checked in the image:
    the chart at its size, then a band of text lines below it, all inside the image."""
    data = base64.b64encode(Path(png.path()).read_bytes()).decode()
    width, height, bands = page.evaluate(_INK_BANDS, data)
    lines = (page.locator(chart).get_attribute("data-image-text") or "").split("\n")
    below = [band for band in bands if band[0] > CHART_HEIGHT]
    assert width == 1400 and height > CHART_HEIGHT, (width, height)
    assert lines and len(below) >= len(lines), (lines, below)  # a line of text each, at least
    assert below[-1][1] < height - 4, (below, height)  # the last one inside the image
    return lines


# The elements whose right edge is past the window's, innermost first (a parent that only
# holds a wide child is left out), each as tag#id.class and its right edge in pixels.
STICKING_OUT = """() => {
  const edge = window.innerWidth + 1;
  const out = [...document.body.querySelectorAll('*')].filter(el => {
    const box = el.getBoundingClientRect();
    if (box.right <= edge || box.width === 0) return false;
    // Inside a box that scrolls sideways it does not widen the page.
    for (let up = el.parentElement; up; up = up.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(up).overflowX)) return false;
    }
    return true;
  });
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + [...el.classList].map(c => '.' + c).join('');
  return out.filter(el => !out.some(other => other !== el && el.contains(other)))
    .slice(0, 8)
    .map(el => `${name(el)} to ${Math.round(el.getBoundingClientRect().right)}px`);
}"""


def sticking_out(page) -> list[str]:  # type: ignore[no-untyped-def]
    """What makes the page scroll sideways: empty when the page fits the window's width,
    else the elements past its right edge (so a failure says where to look)."""
    # After a form's submit the new page's elements are there before its stylesheet: a
    # measure taken then lays the page out unstyled (a long link that would wrap does not).
    page.wait_for_load_state("load")
    if page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"):
        return []
    found: list[str] = page.evaluate(STICKING_OUT)
    return found or ["the page is wider than the window (no single element found)"]
