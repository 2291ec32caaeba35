"""Whole numbers typed by people and written in files.

``str.isdigit`` is true for characters ``int`` refuses (``"²"``) and for strings too long
for it to read, so text that reaches ``int`` is checked here first.
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"[0-9]{1,18}")  # ASCII digits, small enough for any 64-bit column


def whole_number(text: str | None) -> int | None:
    """*text* as a non-negative whole number in ASCII digits, or None."""
    if text is None or not _WHOLE.fullmatch(text):
        return None
    return int(text)
