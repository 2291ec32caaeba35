"""A submission's points by the label findings and objections name them by."""

from __future__ import annotations

from collections.abc import Iterator

from app.db.models import Curve, Point, Submission


def point_label(curve: Curve, point: Point) -> str:
    """``<system>/<model>/<point dir>``: how findings, objections, re-counts and
    reproductions name a point."""
    return f"{curve.system.dir_name}/{curve.benchmark_model}/{point.dir_name}"


def labelled_points(submission: Submission) -> Iterator[tuple[str, Point]]:
    """Each point of *submission* with its label."""
    for curve in submission.curves:
        for point in curve.points:
            yield point_label(curve, point), point


def find_point(submission: Submission, label: str) -> Point | None:
    """*label* is ``<system>/<model>/<point dir>``, as findings name points."""
    return next((point for named, point in labelled_points(submission) if named == label), None)
