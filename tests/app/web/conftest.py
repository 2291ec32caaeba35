from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.browser import watched_page


@pytest.fixture
def page(chromium_path: str) -> Iterator[object]:
    pytest.importorskip("playwright.sync_api")
    with watched_page(chromium_path) as page:
        yield page
