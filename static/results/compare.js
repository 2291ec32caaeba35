// Compare: each submission's step curve on one chart, from the page's embedded comparison.
(function () {
  "use strict";
  var picker = document.getElementById("compare-benchmark");
  if (picker) { picker.addEventListener("change", function () { picker.form.submit(); }); }
  var el = document.getElementById("chart-compare");
  var data = document.getElementById("compare-data");
  if (!el || !data || typeof Plotly === "undefined") { return; }
  var c = JSON.parse(data.textContent);
  var PALETTE = ["#1f5fa8", "#c2410c", "#15803d", "#7c3aed"];
  var DASH = { verified: "solid", provisional: "dash", unverified: "dot" };
  function esc(text) {
    return String(text).replace(/[&<>]/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;" }[ch]; });
  }
  var x = c.is_agentic ? "e2e_avg_interactivity" : "tps_per_user";
  var traces = [];
  c.submissions.forEach(function (s, i) {
    var curve = s.curve, colour = PALETTE[i % PALETTE.length];
    var name = esc(s.system) + " (" + esc(s.organization) + ", " + (s.result_status || "—") + ")";
    traces.push({ type: "scatter", mode: "lines", name: name, legendgroup: "s" + i,
                  x: curve.step_line.map(function (v) { return v[0]; }),
                  y: curve.step_line.map(function (v) { return v[1]; }),
                  line: { color: colour, width: 2, dash: DASH[s.result_status] || "solid" }, hoverinfo: "skip" });
    var pts = curve.points.filter(function (p) { return p.offline !== "dedicated" && p[x] !== null; });
    traces.push({ type: "scatter", mode: "markers", showlegend: false, legendgroup: "s" + i,
                  x: pts.map(function (p) { return p[x]; }), y: pts.map(function (p) { return p.system_tps; }),
                  hovertext: pts.map(function (p) {
                    return esc(s.system) + "<br>concurrency " + p.concurrency + "<br>" + Number(p.system_tps).toFixed(1) +
                      " tok/s · TTFT P90 " + (p.ttft_p90_ms === null ? "—" : Number(p.ttft_p90_ms).toFixed(1)) + " ms";
                  }),
                  hoverinfo: "text", marker: { color: colour, size: 8 } });
  });
  Plotly.newPlot(el, traces, {
    title: { text: "Pareto step curves · " + esc(c.benchmark), font: { size: 15 } },
    margin: { t: 40, r: 20, b: 50, l: 70 }, legend: { orientation: "h", y: -0.2 }, hovermode: "closest",
    xaxis: { title: { text: c.is_agentic ? "e2e avg interactivity (tok/s)" : "tokens/s per user (1000 / TPOT P90)" }, rangemode: "tozero" },
    yaxis: { title: { text: "system tokens/s" }, rangemode: "tozero" }
  }, { displaylogo: false, responsive: true }).then(function () { el.dataset.rendered = "true"; });
})();
