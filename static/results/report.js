// A result's report (/results/{ref}): its Pareto curve on the report's axes, and its
// throughput, TTFT P90 and per-user rate against concurrency, from the answer the page
// embeds (#report-data: the same as GET /api/v1/results/{ref}).
(function () {
  "use strict";
  var data = document.getElementById("report-data");
  if (!data || typeof Plotly === "undefined") { return; }
  var report = JSON.parse(data.textContent);
  var curve = report.curve, axes = report.axes;
  var P = window.EndpointsPoints;  // static/points.js
  var esc = P.esc;
  var DASH = { verified: "solid", provisional: "dash", unverified: "dot" };
  var dash = P.isRdi(curve) ? "dashdot" : (DASH[curve.status] || "solid");
  var online = curve.points.filter(function (p) { return p.offline !== "dedicated"; });
  var config = { displaylogo: false, responsive: true };
  function value(p, field) { return p[field] === undefined ? null : p[field]; }
  function hover(p) {
    return "concurrency " + p.concurrency + (p.region ? " · " + esc(p.region_name || p.region) : "") +
      "<br>" + P.figure(p.system_tps, "tps") + " tok/s · TTFT P90 " + P.figure(p.ttft_p90_ms, "duration") +
      "<br>" + P.figure(curve.is_agentic ? p.e2e_avg_interactivity : p.tps_per_user, "per_user") +
      (curve.is_agentic ? " interactivity" : " tok/s per user") + (p.offline === "elected" ? "<br>Offline (elected)" : "");
  }
  function draw(id, traces, layout) {
    var el = document.getElementById(id);
    if (!el) { return; }
    P.dropFirstView(el);
    Plotly.newPlot(el, traces, Object.assign({ margin: { t: 36, r: 10, b: 50, l: 64 }, showlegend: false,
                                               hovermode: "closest" }, layout), config)
      .then(function () { el.dataset.rendered = "true"; });
  }
  var pareto = document.getElementById("chart-report-pareto");
  draw("chart-report-pareto", [
    { type: "scatter", mode: "lines", x: curve.step_line.map(function (v) { return v[0]; }),
      y: curve.step_line.map(function (v) { return v[1]; }), line: { color: curve.colour, width: 2, dash: dash },
      hoverinfo: "skip" },
    { type: "scatter", mode: "markers", x: online.map(function (p) { return value(p, axes.x.field); }),
      y: online.map(function (p) { return value(p, axes.y.field); }), hovertext: online.map(hover), hoverinfo: "text",
      marker: { color: curve.colour, size: 8, symbol: online.map(function (p) { return p.offline === "elected" ? "star" : "circle"; }) } }
  ], { title: { text: "Pareto curve", font: { size: 13 } }, annotations: P.betterCorner(axes, pareto),
       xaxis: { title: { text: P.axisTitle(axes.x.title, pareto) }, rangemode: "tozero", automargin: true },
       yaxis: { title: { text: P.axisTitle(axes.y.title, pareto) }, rangemode: "tozero", automargin: true } });
  function byConcurrency(id, field, title, ytitle, log) {
    var pts = online.filter(function (p) { return value(p, field) !== null; });
    draw(id, [{ type: "scatter", mode: "lines+markers", x: pts.map(function (p) { return p.concurrency; }),
                y: pts.map(function (p) { return p[field]; }), hovertext: pts.map(hover), hoverinfo: "text",
                line: { color: curve.colour, dash: dash } }],
         { title: { text: title, font: { size: 13 } },
           xaxis: { title: { text: "concurrency (users)" }, type: "log", automargin: true },
           yaxis: log ? { title: { text: ytitle }, type: "log", automargin: true }
                      : { title: { text: ytitle }, rangemode: "tozero", automargin: true } });
  }
  byConcurrency("chart-report-tps", "system_tps", "Throughput vs concurrency", "system tokens/s");
  byConcurrency("chart-report-ttft", "ttft_p90_ms", "TTFT P90 vs concurrency", "TTFT P90 (ms, log)", true);
  byConcurrency("chart-report-per-user", curve.is_agentic ? "e2e_avg_interactivity" : "tps_per_user",
                curve.is_agentic ? "Interactivity vs concurrency" : "Tokens/s per user vs concurrency",
                curve.is_agentic ? "interactivity (tok/s)" : "tokens/s per user");
})();
