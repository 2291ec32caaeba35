"""Peer review: reviewers, objections with their business-day clocks, the
chair's decisions, notifications and the timeline."""
