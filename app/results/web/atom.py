"""The record's events as an Atom feed (RFC 4287), written with the standard library."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from xml.etree import ElementTree as ET

from app.core.times import utc_text
from app.results.services.feed import RecordEvent

ATOM = "http://www.w3.org/2005/Atom"


def atom_feed(
    events: Sequence[RecordEvent], base_url: str, self_path: str, title: str, now: dt.datetime
) -> bytes:
    """A feed of *events*; every link absolute on *base_url* (the portal's public address)."""
    base = base_url.rstrip("/")
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "id", base + self_path)
    _text(feed, "title", title)
    _text(feed, "updated", utc_text(events[0].at if events else now))
    author = ET.SubElement(feed, f"{{{ATOM}}}author")
    _text(author, "name", "MLPerf Endpoints Portal")
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="self", href=base + self_path,
                  type="application/atom+xml")  # fmt: skip
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="alternate", href=base + "/results")
    for event in events:
        entry = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(entry, "id", f"{base}/feeds/results.atom#{event.key}")
        _text(entry, "title", event.title)
        _text(entry, "updated", utc_text(event.at))
        ET.SubElement(entry, f"{{{ATOM}}}link", rel="alternate", href=base + event.path)
        if event.entry is not None:  # the change's signed ledger entry, to check it by
            ET.SubElement(entry, f"{{{ATOM}}}link", rel="related", href=base + event.entry,
                          type="application/json", title="signed ledger entry")  # fmt: skip
        ET.SubElement(entry, f"{{{ATOM}}}category", term=event.kind)
        _text(entry, "summary", event.summary)
    return bytes(ET.tostring(feed, encoding="utf-8", xml_declaration=True))


def _text(parent: ET.Element, tag: str, text: str) -> None:
    ET.SubElement(parent, f"{{{ATOM}}}{tag}").text = text
