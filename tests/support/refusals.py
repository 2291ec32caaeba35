"""A query the API and its page refuse alike: the same status, the field named, the same
words (the page shows them beside the form)."""

from __future__ import annotations

import html
from typing import Any


def refused_alike(
    client: Any, api: str, page: str, params: dict[str, Any], field: str, message: str
) -> None:
    answer = client.get(api, params=params)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == field and message in error["message"], error
    shown = client.get(page, params=params)
    assert shown.status_code == 422 and message in html.unescape(shown.text)
