"""Reading functions for the archive-reading child that report on the child itself
(``app.submissions.services.reading.work_in_child`` runs them as it runs the readers)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

WHO_AM_I = "tests.support.readers:who_am_i"


def who_am_i(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "parent": os.getppid(),
        "session": os.getsid(0),
        "name": Path("/proc/self/comm").read_text().strip(),
        "cwd": os.getcwd(),
    }
