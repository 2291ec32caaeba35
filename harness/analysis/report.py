"""``endpoints-harness report RUN_DIR``: a local run folder's run over time, offline.

Writes ``RUN_DIR/analysis/timeseries.json`` (the portal stores and serves the same
document for a re-counted point) and ``RUN_DIR/analysis/report.html``, one self-contained
page: the summary's headline numbers and the time series drawn with Plotly, whose script
is inlined (the copy that ships with this distribution), so it opens with no network.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from harness.analysis.run import RunAnalysis, analyse_run
from harness.analysis.steady_state import Method, window_text
from harness.metrics.summary import SummaryOptions
from harness.metrics.tokens import TokenCounter

PLOTLY_JS = "plotly-basic-3.1.0.min.js"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}}
table{{border-collapse:collapse}}
td,th{{padding:.2rem .8rem;border-bottom:1px solid #ddd;text-align:right}}
th{{text-align:left}}</style>
<script>{plotly}</script></head>
<body><h1>{title}</h1>
<table>{rows}</table>
<p>Per bin of {bin_s} s from the first tracked request: output tokens/s and requests in
flight; TTFT and TPOT P50/P90 of the responses that ended in it; requests issued, completed
and failed. The dashed line is where issuing stopped and the drain began; the shaded band,
the steady-state window (on issue time).</p>
<div id="chart" style="height:640px"></div>
<script>
var ts = {series};
var steady = {window};
var x = ts.t_s;
Plotly.newPlot("chart", [
  {{x: x, y: ts.output_tps, name: "output tok/s", mode: "lines", yaxis: "y"}},
  {{x: x, y: ts.in_flight, name: "in flight", mode: "lines", line: {{dash: "dot"}}, yaxis: "y2"}},
  {{x: x, y: ts.ttft_p50_ms, name: "TTFT P50 ms", mode: "lines", yaxis: "y3"}},
  {{x: x, y: ts.ttft_p90_ms, name: "TTFT P90 ms", mode: "lines", yaxis: "y3"}},
  {{x: x, y: ts.tpot_p50_ms, name: "TPOT P50 ms", mode: "lines", yaxis: "y4"}},
  {{x: x, y: ts.tpot_p90_ms, name: "TPOT P90 ms", mode: "lines", yaxis: "y4"}},
  {{x: x, y: ts.issued, name: "issued", type: "bar", yaxis: "y5"}},
  {{x: x, y: ts.completed, name: "completed", type: "bar", yaxis: "y5"}},
  {{x: x, y: ts.failed, name: "failed", type: "bar", marker: {{color: "#c0392b"}}, yaxis: "y5"}}
], {{
  barmode: "group", margin: {{t: 20, r: 60, b: 40, l: 60}}, legend: {{orientation: "h", y: -0.1}},
  shapes: [{{type: "line", xref: "x", yref: "paper", x0: ts.last_issue_s, x1: ts.last_issue_s,
            y0: 0, y1: 1, line: {{dash: "dash", color: "#777"}}}}].concat(steady ? [
           {{type: "rect", xref: "x", yref: "paper", x0: steady[0], x1: steady[1], y0: 0, y1: 1,
            fillcolor: "#2e86c1", opacity: 0.08, line: {{width: 0}}}}] : []),
  xaxis: {{title: {{text: "seconds"}}, anchor: "y5"}},
  yaxis: {{domain: [0.68, 1], title: {{text: "tok/s"}}, rangemode: "tozero"}},
  yaxis2: {{overlaying: "y", side: "right", title: {{text: "in flight"}}, rangemode: "tozero"}},
  yaxis3: {{domain: [0.36, 0.62], title: {{text: "TTFT ms"}}, rangemode: "tozero"}},
  yaxis4: {{overlaying: "y3", side: "right", title: {{text: "TPOT ms"}}, rangemode: "tozero"}},
  yaxis5: {{domain: [0, 0.3], title: {{text: "requests"}}, rangemode: "tozero"}}
}}, {{displaylogo: false}});
</script></body></html>
"""


class PlotlyMissing(FileNotFoundError):
    pass


def plotly_js(given: Path | None = None) -> str:
    """The Plotly script: *given*, else the copy shipped with this distribution."""
    if given is not None:
        return given.read_text(encoding="utf-8")
    for package in ("app.bundled.static", "static"):
        try:
            candidate = resources.files(package) / PLOTLY_JS
        except ModuleNotFoundError:
            continue
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise PlotlyMissing(f"{PLOTLY_JS} was not found; pass --plotly-js with a copy")


def write_report(
    run_dir: Path,
    counter: TokenCounter | None,
    options: SummaryOptions,
    plotly: str,
    method: Method | None = None,
) -> RunAnalysis:
    """Analyse the run (``analysis.py``) and write ``analysis/report.html`` beside the
    documents; nothing is drawn when no request was tracked."""
    analysis = analyse_run(run_dir, counter, options, method)
    series = analysis.timeseries
    if series is None:
        return analysis
    r = analysis.summary.result
    ttft = (r.get("ttft") or {}).get("percentiles", {}).get("90.0")
    tpot = (r.get("tpot") or {}).get("percentiles", {}).get("90.0")
    headline = [
        ("requests issued / completed / failed",
         f"{r['n_samples_issued']} / {r['n_samples_completed']} / {r['n_samples_failed']}"),
        ("output tokens/s", "—" if r.get("tps") is None else f"{r['tps']:,.1f}"),
        ("TTFT P90", "—" if ttft is None else f"{ttft / 1e6:,.2f} ms"),
        ("TPOT P90", "—" if tpot is None else f"{tpot / 1e6:,.3f} ms"),
        ("tracked window", f"{(r.get('duration_ns') or 0) / 1e9:,.1f} s"),
        *steady_state_rows(analysis.steady_state),
    ]  # fmt: skip
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in headline
    )
    window = (analysis.steady_state or {}).get("window") or {}
    page = _PAGE.format(
        title=html.escape(f"Run over time: {run_dir.resolve().name}"),
        plotly=plotly.replace("</script", "<\\/script"),
        rows=rows,
        bin_s=series["bin_s"],
        series=json.dumps(series).replace("</", "<\\/"),
        window=json.dumps([window.get("start_s"), window.get("end_s")] if window else None),
    )
    (run_dir / "analysis" / "report.html").write_text(page, encoding="utf-8")
    return analysis


def steady_state_rows(doc: dict[str, Any] | None) -> list[tuple[str, str]]:
    if doc is None:
        return []
    w = doc.get("window")
    rows = [("steady state", f"{doc['status']}, {doc['verdict']}")]
    if w:
        rows.append(("steady-state window", window_text(w)))
    if doc.get("reason"):
        rows.append(("why", str(doc["reason"])))
    return rows
