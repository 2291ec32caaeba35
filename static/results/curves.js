// Step curves drawn together (compare, history, agentic models): the page embeds the chart
// its services computed (#curves-data), this draws it.
(function () {
  "use strict";
  var picker = document.getElementById("compare-benchmark");
  if (picker) { picker.addEventListener("change", function () { picker.form.submit(); }); }
  var el = document.getElementById("chart-curves");
  var data = document.getElementById("curves-data");
  if (!el || !data || typeof Plotly === "undefined") { return; }
  var chart = JSON.parse(data.textContent);
  var DASH = { verified: "solid", provisional: "dash", unverified: "dot" };
  var P = window.EndpointsPoints;  // static/points.js
  var esc = P.esc;
  var traces = [];
  // On a phone the legend breaks each name before its organisation and status.
  var short = window.EndpointsPoints.phone(el);
  function legendName(name) { return short ? esc(name).replace(" (", "<br>(") : esc(name); }
  chart.curves.forEach(function (curve, i) {
    var colour = curve.colour;  // one per system (app/results/domain/colours.py)
    traces.push({ type: "scatter", mode: "lines", name: legendName(curve.name), legendgroup: "c" + i,
                  x: curve.step_line.map(function (v) { return v[0]; }),
                  y: curve.step_line.map(function (v) { return v[1]; }),
                  line: { color: colour, width: 2, dash: P.isRdi(curve) ? "dashdot" : (DASH[curve.status] || "solid") },
                  hoverinfo: "skip" });
    traces.push({ type: "scatter", mode: "markers", showlegend: false, legendgroup: "c" + i,
                  x: curve.points.map(function (p) { return p.x; }), y: curve.points.map(function (p) { return p.y; }),
                  hovertext: curve.points.map(function (p) {
                    return esc(curve.name) + "<br>concurrency " + p.concurrency + "<br>" + P.figure(p.y, "tps") +
                      " tok/s · TTFT P90 " + P.figure(p.ttft_p90_ms, "duration") + (p.note ? "<br>" + esc(p.note) : "") +
                      (p.cut_short ? "<br><b>cut short</b>: " + esc(p.cut_short) : "") +
                      (p.basis ? "<br>basis: " + esc(p.basis) : "") +
                      (P.tags(curve) ? "<br>" + P.tags(curve) : "");
                  }),
                  hoverinfo: "text", marker: { color: colour, size: 8, symbol: P.isRdi(curve) ? "diamond" : "circle" } });
  });
  if (chart.curves.some(P.isRdi)) {  // the legend says what the RDI style means
    traces.push({ type: "scatter", mode: "lines+markers", x: [null], y: [null], hoverinfo: "skip",
                  name: "RDI result (not orderable, §11.10)", line: { color: "#555", dash: "dashdot", width: 2 },
                  marker: { symbol: "diamond", color: "#555" } });
  }
  // The image travels without the page: it carries the page's caption and footnotes
  // (which view, "peer review pending"); Plotly's own camera button would not.
  function savePng() {
    return P.savePng(el, Object.assign({}, el.layout, { margin: { t: 40, r: 20, b: 50, l: 70 } }),
                     [chart.caption].concat(chart.footnotes.map(function (n) { return "* " + n; })),
                     (el.dataset.filename || "curves") + ".png");
  }
  var button = document.getElementById("export-curves-png");
  if (button) { button.addEventListener("click", savePng); }
  P.dropFirstView(el);
  Plotly.newPlot(el, traces, Object.assign({
    title: { text: esc(chart.title), font: { size: 15 } }, hovermode: "closest",
    xaxis: { title: { text: chart.x_title }, rangemode: "tozero", automargin: true },
    yaxis: { title: { text: "system tokens/s" }, rangemode: "tozero", automargin: true }
  }, window.EndpointsPoints.legendAndMargin(el)), { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"],
       modeBarButtonsToAdd: [{ name: "Download the chart as a PNG, with its caption and footnotes",
                               icon: Plotly.Icons.camera, click: savePng }] })
    .then(function () { el.dataset.rendered = "true"; });
})();
