"""What a published result discloses that buyers filter on (issue 49, item 5): the model
precision, the accelerator's memory and interconnect, the serving software and the node
count, written beside each published curve from the bundle's own disclosures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Filter parameter → the disclosure's label (app.submissions.domain.disclosures).
DISCLOSED = {
    "precision": "Model precision",
    "accelerator_memory": "Accelerator memory",
    "interconnect": "Accelerator interconnect",
    "serving_software": "Serving framework",
}
FACETS = (*DISCLOSED, "nodes")


def curve_facts(
    fields: Mapping[str, Any], node_count: int | None, serving_framework: str | None
) -> dict[str, str]:
    """A curve's facets from its system's disclosed *fields* (label → value) and the
    system's record (nodes; the serving framework where the description has none)."""
    facts = {
        facet: str(fields[label]).strip()
        for facet, label in DISCLOSED.items()
        if fields.get(label) not in (None, "")
    }
    if "serving_software" not in facts and serving_framework:
        facts["serving_software"] = serving_framework.strip()
    if node_count is not None:
        facts["nodes"] = str(node_count)
    return {k: v for k, v in facts.items() if v}
