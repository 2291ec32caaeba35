// Accuracy at speed (/accuracy): the page embeds the view its service computed
// (#accuracy-data); this draws one marker series per system, the chosen metric against
// system tokens/s, and the metric's threshold as a dashed line.
(function () {
  "use strict";
  var el = document.getElementById("accuracy-chart");
  var data = document.getElementById("accuracy-data");
  if (!el || !data || typeof Plotly === "undefined") { return; }
  var view = JSON.parse(data.textContent);
  function esc(text) {
    return String(text).replace(/[&<>]/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;" }[ch]; });
  }
  function fmt(v, d) { return v === null || v === undefined ? "—" : Number(v).toLocaleString("en-US", { maximumFractionDigits: d }); }
  function outside(r) { return view.sla_set && !r.admissible; }
  var bySystem = {}, order = [];
  view.rows.forEach(function (row) {
    if (row.value === null || row.value === undefined) { return; }
    var key = row.submission;
    if (!bySystem[key]) { bySystem[key] = []; order.push(key); }
    bySystem[key].push(row);
  });
  var traces = order.map(function (key) {
    var rows = bySystem[key], first = rows[0];
    return {
      type: "scatter", mode: "lines+markers", name: esc(first.system + " (" + first.organization + ", " + first.status + ")"),
      x: rows.map(function (r) { return r.system_tps; }), y: rows.map(function (r) { return r.value; }),
      line: { color: first.colour, width: 1, dash: first.status === "verified" ? "solid" : "dot" },
      marker: { color: first.colour, size: 9, symbol: rows.map(function (r) { return outside(r) ? "circle-open" : "circle"; }) },
      hovertext: rows.map(function (r) {
        return esc(r.system) + "<br>" + esc(r.point) + " · concurrency " + r.concurrency + "<br>" + fmt(r.system_tps, 1) +
          " tok/s · " + esc(view.metric) + " " + fmt(r.value, 4) + (r.meets === false ? " (misses the threshold)" : "") +
          (outside(r) ? "<br>outside your SLA" : "") + (r.cut_short ? "<br><b>cut short</b>: " + esc(r.cut_short) : "");
      }),
      hoverinfo: "text"
    };
  });
  var shapes = [], notes = [];
  if (view.threshold) {
    [["lower", view.threshold.lower], ["upper", view.threshold.upper]].forEach(function (bound) {
      if (bound[1] === null || bound[1] === undefined) { return; }
      shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: bound[1], y1: bound[1],
                    line: { color: "#b42318", width: 1.5, dash: "dash" } });
      notes.push({ xref: "paper", x: 1, xanchor: "right", yref: "y", y: bound[1], yanchor: "bottom", showarrow: false,
                   font: { size: 11, color: "#b42318" }, text: (bound[0] === "lower" ? "threshold ≥ " : "upper bound ≤ ") + fmt(bound[1], 4) });
    });
  }
  Plotly.newPlot(el, traces, {
    margin: { t: 20, r: 20, b: 60, l: 80 }, legend: { orientation: "h", y: -0.25 }, hovermode: "closest",
    shapes: shapes, annotations: notes,
    xaxis: { title: { text: "system tokens/s" }, rangemode: "tozero", separatethousands: true },
    yaxis: { title: { text: view.metric + " (as the gate compares it)" }, separatethousands: true }
  }, { displaylogo: false, responsive: true }).then(function () { el.dataset.rendered = "true"; });
})();
