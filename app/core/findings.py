"""What a check says of a submission: a finding's severity and source, the verdict.

Stored in the database's columns, so they live here, below the features and the models.
"""

from __future__ import annotations

import enum


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Source(enum.StrEnum):
    OFFICIAL = "official"
    PORTAL = "portal"


class Verdict(enum.StrEnum):
    PASSED = "passed"
    REJECTED = "rejected"


SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
