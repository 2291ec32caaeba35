"""The results pages' charts as their first view: the same answer the page embeds for
Plotly (a ResultsPage, or a Chart of step curves), drawn as inline SVG (app.web.svgchart)
so that the curves show before the script arrives. The styles are those of
static/results/results.js and curves.js: a status's dash, RDI dash-dotted with diamonds."""

from __future__ import annotations

from markupsafe import Markup

from app.results.services.compare import Chart, x_title
from app.results.services.results import ResultCurve, ResultPoint, ResultsPage
from app.web.svgchart import FirstView, Series, render

DASH = {"verified": "solid", "provisional": "dash", "unverified": "dot"}
OPACITY = {"verified": 1.0, "provisional": 0.95, "unverified": 0.5}
RDI_KEY = ("RDI result (not orderable, §11.10)", "dashdot", "diamond")
Y_TITLES = {
    "kw": "tokens/s per kW (derived)",
    "accelerator": "tokens/s per accelerator (derived)",
    "usd_per_mtok": "output tokens per $ at your price (derived, not an MLPerf figure)",
}


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


def _xy(curve: ResultCurve, point: ResultPoint, page: ResultsPage) -> tuple[float, float] | None:
    x = getattr(point, curve.x_metric, None)
    y = point.y if page.derived or page.rank_by == "goodput" else point.system_tps
    if point.offline == "dedicated" or x is None or y is None:
        return None
    return float(x), float(y)


def pareto(page: ResultsPage) -> Markup:
    """The explorer's Pareto chart (and the embed's)."""
    series = []
    for curve in page.curves:
        dash, symbol = _style(curve.status, curve.availability)
        points = [xy for p in curve.points if (xy := _xy(curve, p, page)) is not None]
        series.append(
            Series(
                name=_label(curve),
                colour=curve.colour,
                line=curve.step_line,
                points=points,
                dash=dash,
                symbol=symbol,
                opacity=OPACITY.get(curve.status, 1.0),
                ceiling=curve.offline_ceiling.y if curve.offline_ceiling else None,
            )
        )
    agentic = bool(page.curves) and page.curves[0].is_agentic
    y_title = Y_TITLES.get(page.normalize, "system tokens/s")
    if page.rank_by == "goodput":
        y_title = "goodput: tokens/s of the requests in your SLA"
    return render(
        FirstView(
            title=f"Pareto curves · {page.benchmark or ''} · {page.cohort or 'current'}"
            + (f" · {page.result_names}" if " / " not in page.result_names else ""),
            x_title=x_title(agentic),
            y_title=y_title,
            series=series,
            keys=[RDI_KEY] if any(c.availability == "RDI" for c in page.curves) else [],
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
