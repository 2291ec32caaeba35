// Submission page: follow the checks while they run, then draw each curve.
(function () {
  "use strict";
  var root = document.getElementById("submission");
  if (!root) { return; }
  var id = root.dataset.id;
  var api = "/api/v1/submissions/" + encodeURIComponent(id);

  // While work runs, only the small status resource is asked; the page reloads when the
  // checks, or a re-count or reproduction it was waiting for, are over.
  function follow(waiting) {
    fetch(api + "/status", { headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        var over = waiting === "checks" ? s.finished
          : waiting === "recounts" ? s.recounts_running === 0 : s.reproductions_running === 0;
        if (over) { window.location.reload(); return; }
        if (waiting === "checks") {
          var bar = document.getElementById("progress-bar");
          var stage = document.getElementById("stage");
          var label = document.getElementById("state-label");
          if (label) { label.textContent = s.state_label; }
          if (s.job) {
            if (bar) { bar.style.width = Math.round((s.job.progress || 0) * 100) + "%"; }
            if (stage && s.job.stage) { stage.textContent = s.job.stage; }
          }
        }
        window.setTimeout(function () { follow(waiting); }, 700);
      })
      .catch(function () { window.setTimeout(function () { follow(waiting); }, 2000); });
  }

  // Names come from submitted files: never let them be read as markup.
  // Plotly text is its own small markup: escaping &, < and > keeps a name from opening a
  // tag; quotes are plain text there (Plotly shows "&quot;" as it is).
  function esc(text) {
    return String(text).replace(/[&<>]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;" }[c];
    });
  }

  var P = window.EndpointsPoints;  // static/points.js
  var tail = P.tail;

  function hover(curve, p) {
    return [
      "<b>" + esc(curve.system) + "</b>",
      "concurrency " + p.concurrency + (p.region ? " · " + esc(p.region_name || p.region) : ""),
      "system " + P.figure(p.system_tps, "tps") + " tok/s",
      (curve.is_agentic ? "interactivity " + P.figure(p.per_user, "per_user")
                        : P.figure(p.per_user, "per_user") + " tok/s per user"),
      "TPOT P90 " + P.figure(p.tpot_p90_ms, "tpot_ms") + " ms · TTFT P90 " + P.figure(p.ttft_p90_ms, "duration"),
      "per kW " + P.figure(p.system_tps_per_kw, "tps") + " tok/s",
      tail(p)
    ].filter(function (line) { return line; }).join("<br>");
  }

  function draw(curve, el, status) {
    // A figure the bundle did not measure is left out of the point (not null).
    var plotted = curve.points.filter(function (p) { return p.offline !== "dedicated" && p.per_user != null; });
    var dash = status === "provisional" ? "dash" : (status === "unverified" ? "dot" : "solid");
    var traces = [{
      type: "scatter", mode: "lines", name: "step curve", hoverinfo: "skip",
      x: curve.step_line.map(function (v) { return v[0]; }),
      y: curve.step_line.map(function (v) { return v[1]; }),
      line: { color: "#1f5fa8", width: 2, dash: dash }, opacity: status === "unverified" ? 0.6 : 1
    }, {
      type: "scatter", mode: "markers+text", name: "points",
      x: plotted.map(function (p) { return p.per_user; }),
      y: plotted.map(function (p) { return p.system_tps; }),
      text: plotted.map(function (p) { return p.offline === "elected" ? "Offline (elected)" : "c=" + p.concurrency; }),
      // The elected point is the curve's highest: its label goes below it, not off the top.
      textposition: plotted.map(function (p) { return p.offline === "elected" ? "bottom right" : "top right"; }),
      textfont: { size: 10 },
      hovertext: plotted.map(function (p) { return hover(curve, p); }), hoverinfo: "text",
      marker: { size: 9, color: "#1f5fa8", symbol: plotted.map(function (p) { return p.offline === "elected" ? "star" : "circle"; }) }
    }];
    var repro = (curve.reproductions || []).filter(function (r) {
      return r.reproduced.system_tps !== null && r.reproduced.tps_per_user !== null;
    });
    if (repro.length) {
      traces.push({
        type: "scatter", mode: "markers", name: "reproductions (unverified)",
        x: repro.map(function (r) { return r.reproduced.tps_per_user; }),
        y: repro.map(function (r) { return r.reproduced.system_tps; }),
        hovertext: repro.map(function (r) {
          return "<b>reproduction (unverified)</b><br>" + esc(r.point) + "<br>" +
                 P.figure(r.reproduced.system_tps, "tps") + " tok/s · " + P.figure(r.reproduced.tps_per_user, "per_user") + " tok/s per user";
        }),
        hoverinfo: "text",
        marker: { size: 11, symbol: "diamond-open", color: "#c2410c", line: { width: 2 } }
      });
    }
    var shapes = [], annotations = [];
    if (curve.offline_ceiling) {
      shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: curve.offline_ceiling.system_tps,
                    y1: curve.offline_ceiling.system_tps, line: { dash: "dot", color: "#7a3e9d", width: 2 } });
      annotations.push({ xref: "paper", x: 0.01, xanchor: "left", y: curve.offline_ceiling.system_tps, yanchor: "bottom",
                         text: "Offline (dedicated, c=" + curve.offline_ceiling.concurrency + "): " +
                               P.figure(curve.offline_ceiling.system_tps, "tps") + " tok/s", showarrow: false,
                         font: { color: "#7a3e9d", size: 11 } });
    }
    Plotly.newPlot(el, traces, {
      margin: { t: 20, r: 20, b: 50, l: 70 }, showlegend: false, shapes: shapes, annotations: annotations,
      xaxis: { title: { text: curve.is_agentic ? "e2e avg interactivity (tok/s)" : "tokens/s per user (1000 / TPOT P90)" }, rangemode: "tozero" },
      yaxis: { title: { text: "system tokens/s" }, rangemode: "tozero" }
    }, { displaylogo: false, responsive: true });
    el.dataset.rendered = "true";
  }

  if (root.dataset.finished !== "true") {
    window.setTimeout(function () { follow("checks"); }, 500);
    return;
  }
  // A reproduction or a re-count is running: refresh the page when it is done.
  if (root.dataset.recounting === "true") { window.setTimeout(function () { follow("recounts"); }, 1000); }
  else if (root.dataset.reproducing === "true") { window.setTimeout(function () { follow("reproductions"); }, 1000); }
  var charts = document.querySelectorAll(".chart[data-curve-index]");
  var embedded = document.getElementById("submission-data");
  if (!charts.length || !embedded || typeof Plotly === "undefined") { return; }
  // The page's own data, from the computation that rendered it (no second request).
  var s = JSON.parse(embedded.textContent);
  charts.forEach(function (el) {
    var curve = s.curves[Number(el.dataset.curveIndex)];
    if (curve) { draw(curve, el, s.result_status); }
  });
  // A re-counted point's run over time, fetched when its panel is opened.
  function drawTimeSeries(panel) {
    var chart = panel.querySelector(".timeseries-chart");
    if (!chart || chart.dataset.rendered) { return; }
    chart.dataset.rendered = "loading";
    fetch(panel.dataset.src, { headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (ts) {
        if (!ts) {
          chart.textContent = "No time series for this re-count: it was made before the portal kept them; re-count the point again.";
          chart.dataset.rendered = "empty";
          return;
        }
        var x = ts.t_s;
        var traces = [
          { x: x, y: ts.output_tps, name: "output tok/s", type: "scatter", mode: "lines", xaxis: "x", yaxis: "y" },
          { x: x, y: ts.in_flight, name: "in flight", type: "scatter", mode: "lines", line: { dash: "dot" }, xaxis: "x", yaxis: "y2" },
          { x: x, y: ts.ttft_p50_ms, name: "TTFT P50 ms", type: "scatter", mode: "lines", xaxis: "x", yaxis: "y3" },
          { x: x, y: ts.ttft_p90_ms, name: "TTFT P90 ms", type: "scatter", mode: "lines", xaxis: "x", yaxis: "y3" },
          { x: x, y: ts.tpot_p50_ms, name: "TPOT P50 ms", type: "scatter", mode: "lines", xaxis: "x", yaxis: "y4" },
          { x: x, y: ts.tpot_p90_ms, name: "TPOT P90 ms", type: "scatter", mode: "lines", xaxis: "x", yaxis: "y4" },
          { x: x, y: ts.issued, name: "issued", type: "bar", xaxis: "x", yaxis: "y5" },
          { x: x, y: ts.completed, name: "completed", type: "bar", xaxis: "x", yaxis: "y5" },
          { x: x, y: ts.failed, name: "failed", type: "bar", marker: { color: "#c0392b" }, xaxis: "x", yaxis: "y5" }
        ];
        var drain = { type: "line", xref: "x", yref: "paper", x0: ts.last_issue_s, x1: ts.last_issue_s, y0: 0, y1: 1,
                      line: { dash: "dash", color: "#777" } };
        var shapes = [drain];
        var notes = [{ x: ts.last_issue_s, y: 1, xref: "x", yref: "paper", text: "drain", showarrow: false, yanchor: "bottom" }];
        if (ts.warmup_end_s) {
          shapes.push({ type: "rect", xref: "x", yref: "paper", x0: 0, x1: ts.warmup_end_s, y0: 0, y1: 1,
                        fillcolor: "#888", opacity: 0.12, line: { width: 0 } });
          notes.push({ x: ts.warmup_end_s / 2, y: 1, xref: "x", yref: "paper", text: "warm-up", showarrow: false, yanchor: "bottom" });
        }
        if (ts.steady_window_s) {
          var w = ts.steady_window_s;
          shapes.push({ type: "rect", xref: "x", yref: "paper", x0: w[0], x1: w[1], y0: 0, y1: 1,
                        fillcolor: "#2e86c1", opacity: 0.12, line: { width: 0 } });
          notes.push({ x: (w[0] + w[1]) / 2, y: 1, xref: "x", yref: "paper", text: "steady state", showarrow: false, yanchor: "bottom" });
        }
        var layout = {
          // The legend sits below the x axis's title, with room for both: it was printed over it.
          height: 680, margin: { t: 30, r: 60, b: 120, l: 60 }, barmode: "group", shapes: shapes,
          annotations: notes,
          xaxis: { title: { text: "seconds from the first tracked request (bins of " + ts.bin_s + " s)" }, anchor: "y5" },
          yaxis: { domain: [0.68, 1], title: { text: "tok/s" }, rangemode: "tozero" },
          yaxis2: { overlaying: "y", side: "right", title: { text: "in flight" }, rangemode: "tozero" },
          yaxis3: { domain: [0.36, 0.62], title: { text: "TTFT ms" }, rangemode: "tozero" },
          yaxis4: { overlaying: "y3", side: "right", title: { text: "TPOT ms" }, rangemode: "tozero" },
          yaxis5: { domain: [0, 0.3], title: { text: "requests" }, rangemode: "tozero" },
          legend: { orientation: "h", x: 0, y: -0.16, yanchor: "top" }
        };
        Plotly.newPlot(chart, traces, layout, { displaylogo: false, responsive: true }).then(function () {
          chart.dataset.rendered = "true";
        });
      })
      .catch(function () { chart.textContent = "The time series could not be loaded."; });
  }
  Array.prototype.forEach.call(document.querySelectorAll("details.timeseries"), function (panel) {
    panel.addEventListener("toggle", function () { if (panel.open) { drawTimeSeries(panel); } });
  });
})();
