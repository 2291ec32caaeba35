"""The results pages' charts as their first view: the same answer the page embeds for
Plotly (a ResultsPage, or a Chart of step curves), drawn as inline SVG (app.web.svgchart)
so that the curves show before the script arrives. The styles are those of
static/results/results.js and curves.js: a status's dash, RDI dash-dotted with diamonds."""

from __future__ import annotations

from markupsafe import Markup

from app.results.services.compare import Chart
from app.results.services.report import ResultReport
from app.results.services.results import ChartAxes, ResultCurve, ResultPoint, ResultsPage
from app.web.svgchart import FirstView, Series, render

DASH = {"verified": "solid", "provisional": "dash", "unverified": "dot"}
OPACITY = {"verified": 1.0, "provisional": 0.95, "unverified": 0.5}
RDI_KEY = ("RDI result (not orderable, §11.10)", "dashdot", "diamond")


def _style(status: str | None, availability: str | None) -> tuple[str, str]:
    if availability == "RDI":
        return "dashdot", "diamond"
    return DASH.get(status or "", "solid"), "circle"


def _label(curve: ResultCurve) -> str:
    status = curve.status
    if curve.availability and curve.availability != "Available":
        status += f" · {curve.availability}"
    pending = " — peer review pending*" if curve.peer_review_pending else ""
    return f"{curve.system} ({curve.organization}, {status}{pending})"


def _xy(point: ResultPoint, axes: ChartAxes) -> tuple[float, float] | None:
    """The point on the chart's axes (the fields the answer names for them)."""
    x = getattr(point, axes.x.field, None)
    y = getattr(point, axes.y.field, None)
    if point.offline == "dedicated" or x is None or y is None:
        return None
    return float(x), float(y)


def pareto(page: ResultsPage) -> Markup:
    """The explorer's Pareto chart (and the embed's)."""
    series = []
    lighten = page.offline_ceiling == "lighten"  # the ceilings over faint curves
    for curve in page.curves:
        dash, symbol = _style(curve.status, curve.availability)
        points = [xy for p in curve.points if (xy := _xy(p, page.axes)) is not None]
        series.append(
            Series(
                name=_label(curve),
                colour=curve.colour,
                line=curve.step_line,
                points=points,
                dash=dash,
                symbol=symbol,
                opacity=OPACITY.get(curve.status, 1.0) * (0.3 if lighten else 1.0),
                ceiling=curve.offline_ceiling.y
                if curve.offline_ceiling and page.offline_ceiling != "off"
                else None,
            )
        )
    return render(
        FirstView(
            title=f"Pareto curves · {page.benchmark or ''} · {page.cohort or 'current'}"
            + (f" · {page.result_names}" if " / " not in page.result_names else ""),
            x_title=page.axes.x.title,
            y_title=page.axes.y.title,
            series=series,
            keys=[RDI_KEY] if any(c.availability == "RDI" for c in page.curves) else [],
        )
    )


def report_pareto(report: ResultReport) -> Markup:
    """A result report's Pareto chart: its one curve on the report's axes."""
    curve = report.curve
    dash, symbol = _style(curve.status, curve.availability)
    points = [xy for p in curve.points if (xy := _xy(p, report.axes)) is not None]
    return render(
        FirstView(
            title=f"{curve.system} · Pareto curve",
            x_title=report.axes.x.title,
            y_title=report.axes.y.title,
            series=[Series(_label(curve), curve.colour, curve.step_line, points, dash, symbol)],
        )
    )


def step_curves(chart: Chart) -> Markup:
    """Compare's, history's and the agentic models' chart."""
    series = []
    for curve in chart.curves:
        dash, symbol = _style(curve.status, curve.availability)
        series.append(
            Series(
                name=curve.name,
                colour=curve.colour,
                line=curve.step_line,
                points=[(p.x, p.y) for p in curve.points],
                dash=dash,
                symbol=symbol,
            )
        )
    return render(
        FirstView(
            title=chart.title,
            x_title=chart.x_title,
            y_title="system tokens/s",
            series=series,
            keys=[RDI_KEY] if any(c.availability == "RDI" for c in chart.curves) else [],
        )
    )
