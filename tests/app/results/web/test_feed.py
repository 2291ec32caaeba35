"""The record's Atom feed (issue 50, item 3): cohorts released and results that left the
record, as a feed reader (feedparser) reads it; for one benchmark too."""

from __future__ import annotations

from urllib.parse import urlsplit

import feedparser  # type: ignore[import-untyped]
from fastapi.testclient import TestClient

from tests.support.accounts import bearer


def read(client: TestClient, **params: str) -> feedparser.FeedParserDict:
    answer = client.get("/feeds/results.atom", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/atom+xml")
    parsed = feedparser.parse(answer.content)
    assert not parsed.bozo, parsed.get("bozo_exception")  # well-formed Atom
    return parsed


def test_the_feed_lists_releases_and_what_left_the_record(
    demo_portal: tuple[TestClient, dict[str, str]],
) -> None:
    client, tokens = demo_portal
    cohorts = client.get("/api/v1/cohorts").json()["data"]
    feed = read(client)
    assert feed.feed.title == "MLPerf Endpoints results"
    releases = [e for e in feed.entries if e.tags[0].term == "release"]
    assert [e.title for e in releases] == [f"Cohort {c['id']} released" for c in cohorts]
    assert all(
        e.link.endswith(f"/results?cohort={c['id']}")
        for e, c in zip(releases, cohorts, strict=True)
    )
    # The chair invalidates Acme's result: the feed says so at once, newest first, with
    # the chair's reason, linked to the result's report.
    acme = next(
        c
        for c in client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()["curves"]
        if c["system"] == "Acme H200 x8"
    )
    decided = client.post(
        f"/api/v1/submissions/{acme['submission']}/decisions",
        json={"action": "invalidate", "reason": "the power figures were not the system's"},
        headers=bearer(tokens["chair"]),
    )
    assert decided.status_code == 200, decided.text
    feed = read(client)
    newest = feed.entries[0]
    assert newest.tags[0].term == "invalidated"
    assert newest.title.startswith("Acme Corp, Acme H200 x8 (")
    assert "the power figures were not the system's" in newest.summary
    assert any(e.link.endswith(f"/results/{acme['result_id']}") for e in feed.entries)
    # Each entry links to the signed ledger entry of its change, to check it by.
    for entry in [newest, *releases]:
        [related] = [link.href for link in entry.links if link.rel == "related"]
        signed = client.get(urlsplit(related).path)
        assert signed.status_code == 200 and signed.headers["content-type"] == "application/json"
        assert signed.json()["kind"] == ("invalidation" if entry is newest else "release")
    # One benchmark's feed: its results' events only, the releases all the same.
    other = read(client, benchmark="kimi-k3")
    assert other.feed.title == "MLPerf Endpoints results: kimi-k3"
    assert not [e for e in other.entries if e.tags[0].term == "invalidated"]  # Acme runs no kimi
    assert len([e for e in other.entries if e.tags[0].term == "release"]) == len(cohorts)


def test_a_benchmark_without_results_has_no_feed(
    demo_portal: tuple[TestClient, dict[str, str]],
) -> None:
    client, _tokens = demo_portal
    answer = client.get("/feeds/results.atom", params={"benchmark": "<no-such>"})
    assert answer.status_code == 404 and "no published results of benchmark" in answer.text
    assert "<no-such>" not in answer.text  # shown as text, escaped
