"""How long a typed text may be: one limit per kind of field, the same on the API and on
the page forms (both declare these)."""

from __future__ import annotations

SHORT = 300  # a title, a rule cited, a point label, a name, a cohort id
LONG = 50_000  # evidence, a comment, review notes
REASON = 5_000  # why a decision, a withdrawal or a point's change
URL = 2_048  # an endpoint's address
SECRET = 4_096  # an endpoint's API key
