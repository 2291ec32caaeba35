// Results explorer: the charts draw from the same JSON as GET /api/v1/results.
(function () {
  "use strict";
  var root = document.getElementById("results");
  var form = document.getElementById("explorer-form");  // absent on an embedded chart
  if (!root || typeof Plotly === "undefined") { return; }

  // The whole view lives in the URL: any change shows the view at the form's address.
  // With a workload chosen, an SLA limit the buyer emptied is sent empty (no limit), so
  // the workload's suggestion does not come back; a fresh workload's limits are left out,
  // so the page fills in its suggestions.
  var LIMITS = ["f-ttft", "f-tpu"];
  var workload = document.getElementById("f-workload");
  if (form) { wire(form); }
  // The address of the view the form describes: its fields without the empty ones, so
  // the address stays short enough to share.
  function address(form) {
    var params = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.disabled || ((el.type === "checkbox" || el.type === "radio") && !el.checked)) { return; }
      if ((el.tagName === "INPUT" || el.tagName === "SELECT") && el.type !== "checkbox" && !el.value) {
        var kept = workload && workload.value && LIMITS.indexOf(el.id) >= 0 && !el.dataset.fresh;
        if (!kept) { return; }
      }
      params.append(el.name, el.value);
    });
    return form.action.split("?")[0] + "?" + params.toString();
  }
  // A change shows the new view in place: the page at the new address is fetched and its
  // explorer put in place of this one; the address follows, focus and scroll stay where
  // they were. The newest change wins. Without script the form is a plain GET.
  var asked = 0, last = null, swapping = false;
  function show(url) {
    if (url === last) { return; }  // Enter in a field both changes it and submits
    last = url;
    var mine = ++asked;
    var sent = typed(form);
    root.setAttribute("aria-busy", "true");
    fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (mine !== asked) { return; }
        var page = new DOMParser().parseFromString(html, "text/html");
        var next = page.getElementById("results");
        if (!next) { window.location.assign(url); return; }
        var focused = document.activeElement && document.activeElement.id;
        // What was typed while this view loaded is the buyer's next question: it stays
        // in the new form (it was lost, and Enter then asked nothing).
        var now = typed(form), edited = {};
        Object.keys(now).forEach(function (id) { if (now[id] !== sent[id]) { edited[id] = now[id]; } });
        var scrolled = window.scrollY;
        var toggle = document.getElementById("view-toggle");  // a phone's form stays open
        var open = toggle && toggle.checked;
        Array.prototype.forEach.call(root.querySelectorAll(".js-plotly-plot"), function (el) { Plotly.purge(el); });
        swapping = true;  // the focused field, taken out, reports a change: not the buyer's
        root.innerHTML = next.innerHTML;
        swapping = false;
        toggle = document.getElementById("view-toggle");
        if (toggle) { toggle.checked = open; }
        document.title = page.title;
        window.history.replaceState(null, "", url);
        form = document.getElementById("explorer-form");
        workload = document.getElementById("f-workload");
        if (form) { wire(form); }
        Object.keys(edited).forEach(function (id) {
          var field = document.getElementById(id);
          if (field) { field.value = edited[id]; }
        });
        draw();
        var again = focused && document.getElementById(focused);
        if (again) { again.focus({ preventScroll: true }); }
        window.scrollTo(0, scrolled);
        root.removeAttribute("aria-busy");
      })
      .catch(function () { window.location.assign(url); });  // the plain page, then
  }
  function typed(form) {  // the form's typed fields, by id
    var values = {};
    if (!form) { return values; }
    Array.prototype.forEach.call(form.querySelectorAll("input[type=number], input[type=text], input[type=search], input[type=date]"),
      function (el) { if (el.id) { values[el.id] = el.value; } });
    return values;
  }
  function wire(form) {  // the explorer's form: every change is a new view
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!swapping && form.isConnected) { show(address(form)); }
    });
    function priced() {
      return ["f-price-acc", "f-price-sys", "f-preset"].some(function (id) {
        var el = document.getElementById(id);
        return el && el.value;
      });
    }
    form.addEventListener("change", function (event) {
      // A form a new view replaces hears its focused field lose focus: that is no change
      // of the buyer's (what they typed is carried into the new form).
      if (swapping || !form.isConnected) { return; }
      if (event.target.id === "f-workload") {
        // The workload suggests its own limits and regions; the benchmark (and its
        // dataset) stay unless they are of the other kind (agentic or not).
        var resets = LIMITS.concat(["f-region"]);
        var bench = document.getElementById("f-benchmark");
        var picked = workload.selectedOptions[0];
        var chosen = bench && bench.selectedOptions[0];
        if (picked && picked.value && chosen && picked.dataset.agentic !== chosen.dataset.agentic) {
          resets = resets.concat(["f-benchmark", "f-dataset"]);
        }
        resets.forEach(function (id) {
          var el = document.getElementById(id);
          if (el) { el.value = ""; el.dataset.fresh = "1"; }
        });
      }
      // Cost is computed from the buyer's price: without one, ask for it here rather than
      // send a view the portal can only refuse.
      if (event.target.id === "f-normalize" && event.target.value === "usd_per_mtok" && !priced()) {
        var hint = document.getElementById("price-needed");
        if (hint) { hint.hidden = false; }
        document.getElementById("f-price-acc").focus();
        return;
      }
      // Another benchmark has datasets of its own: let the page pick its default one.
      if (event.target.id === "f-benchmark") {
        var dataset = document.getElementById("f-dataset");
        if (dataset) { dataset.value = ""; }
      }
      // A number or a name applies when it is complete: on change (leaving the field, or
      // a spinner's step) or Enter, never mid-typing ("500" typed with pauses is not "5").
      show(address(form));
    });
  }

  // One colour per system, assigned where the curves are served (app/results/domain/
  // colours.py): the same on every chart, and no two systems on one chart share one.
  function colour(curve) { return curve.colour; }
  var DASH = { verified: "solid", provisional: "dash", unverified: "dot" };
  var OPACITY = { verified: 1, provisional: 0.95, unverified: 0.5 };

  var P = window.EndpointsPoints;  // static/points.js
  // Plotly text is its own small markup: escaping &, < and > keeps a name from opening a
  // tag; quotes are plain text there (Plotly shows "&quot;" as it is).
  var esc = P.esc;
  function fmt(v, d) { return v === null || v === undefined ? "—" : Number(v).toFixed(d); }


  function label(curve, short) {
    var tag = curve.peer_review_pending ? (short ? "*" : " — peer review pending*") : "";
    var status = curve.status + (curve.availability && curve.availability !== "Available" ? " · " + esc(curve.availability) : "");
    return esc(curve.system) + (short ? "<br>" : " ") + "(" + esc(curve.organization) + ", " +
      status + tag + ")";
  }
  // A curve's line: its status's dash, or the RDI style whatever its status.
  function dash(curve) { return P.isRdi(curve) ? "dashdot" : DASH[curve.status]; }

  // Log axes: a label at each power of ten (and, for concurrency, at each power of two the
  // points sit on), written out in full, never a bare "2" or "5" between decades.
  function logTicks(values, powersOfTwo) {
    var shown = values.filter(function (v) { return v > 0; });
    var top = shown.length ? Math.max.apply(null, shown) : 1;
    var low = shown.length ? Math.min.apply(null, shown) : 1;
    var ticks = [];
    var v = powersOfTwo ? 1 : Math.pow(10, Math.floor(Math.log10(low)));
    // A span of a few decades (TTFT from 80 to 900 ms) gets 1-2-5 steps: the powers of
    // ten alone left two ticks on the whole axis.
    var steps = !powersOfTwo && Math.log10(top / low) <= 3 ? [1, 2, 5] : [1];
    for (; v <= top * 1.01; v *= powersOfTwo ? 2 : 10) {
      steps.forEach(function (m) {
        var t = v * m;
        if (t <= top * 1.5 && (powersOfTwo || t >= low / 1.5)) { ticks.push(t); }
      });
    }
    if (powersOfTwo && ticks.length > 8) { ticks = ticks.filter(function (t, i) { return i % 2 === 0; }); }
    return { tickvals: ticks, ticktext: ticks.map(function (t) { return t.toLocaleString("en-US"); }) };
  }

  var tail = P.tail;

  function hover(curve, p, r) {
    return [
      "<b>" + esc(curve.system) + "</b> · " + esc(curve.organization),
      esc(curve.result_name) + " · " + P.standing(curve),
      P.tags(curve),
      P.basis(p),
      "concurrency " + p.concurrency + (p.region ? " · " + esc(p.region_name) : "") +
        (p.offline !== "none" ? " · Offline (" + p.offline + ")" : ""),
      "system " + P.figure(p.system_tps, "tps") + " tok/s · per kW " + P.figure(p.system_tps_per_kw, "tps") +
        (curve.power_estimated && p.system_tps_per_kw !== undefined ? " (MLC Estimated Power)" : ""),
      (curve.is_agentic ? "interactivity " + P.figure(p.e2e_avg_interactivity, "per_user")
                        : P.figure(p.tps_per_user, "per_user") + " tok/s per user"),
      "TTFT P90 " + P.figure(p.ttft_p90_ms, "duration") + " · TPOT P90 " + P.figure(p.tpot_p90_ms, "tpot_ms") + " ms",
      tail(p),
      p.repeatability ? p.repeatability.runs + " runs (submitted + reproductions): " + P.figure(p.repeatability.system_tps.min, "tps") +
        "–" + P.figure(p.repeatability.system_tps.max, "tps") + " tok/s" +
        (p.repeatability.system_tps.cv !== null ? " · CV " + P.figure(p.repeatability.system_tps.cv, "percent") : "") : "",
      p.finish_reasons && p.finish_reasons.cut_short ? "<b>cut short</b>: " + esc(p.finish_reasons.cut_short) : "",
      p.slo_attainment !== undefined ? P.figure(p.slo_attainment, "percent") + " of " + P.figure(p.goodput_requests, "count") +
        " requests in the SLA · goodput " + P.figure(p.goodput_tps, "tps") + " tok/s" : (p.goodput_missing ? esc(p.goodput_missing) : ""),
      p.usd_per_million_tokens !== undefined ? P.figure(p.usd_per_million_tokens, "usd_per_mtok") + " per M output tokens (derived, not an MLPerf figure)" : "",
      r.derived && r.normalize !== "usd_per_mtok" && p.y !== undefined ? "normalised: " + fmt(p.y, 2) + " (derived)" : ""
    ].filter(function (line) { return line; }).join("<br>");
  }

  function spread(pts, r) {
    var measured = !r.derived && r.rank_by !== "goodput" && r.axes.y.id === "throughput";
    if (!measured || !pts.some(function (p) { return p.repeatability; })) { return { visible: false }; }
    return {
      type: "data", symmetric: false, visible: true, thickness: 1.5, width: 4,
      array: pts.map(function (p) { return p.repeatability ? p.repeatability.system_tps.max - p.system_tps : 0; }),
      arrayminus: pts.map(function (p) { return p.repeatability ? p.system_tps - p.repeatability.system_tps.min : 0; })
    };
  }

  // A point's coordinates on the chosen axes: the fields the answer names for them.
  function xy(curve, p, r) {
    var x = p[r.axes.x.field], y = p[r.axes.y.field];
    return [x === undefined ? null : x, y === undefined ? null : y];
  }

  // An SLA limit as a line across the chart, on whichever axis shows its figure.
  function limitLine(r, axisId, value) {
    var line = { type: "line", line: { color: "#555", width: 1, dash: "dashdot" } };
    if (r.axes.x.id === axisId) { return Object.assign(line, { yref: "paper", y0: 0, y1: 1, x0: value, x1: value }); }
    if (r.axes.y.id === axisId) { return Object.assign(line, { xref: "paper", x0: 0, x1: 1, y0: value, y1: value }); }
    return null;
  }

  function slaActive(r) {
    var s = r.sla;
    return s.ttft_p90_max_ms !== null || s.tps_per_user_min !== null ||
           s.concurrency_min !== null || s.regions.length > 0;
  }

  function pareto(r) {
    var traces = [], shapes = [], annotations = [];
    var filtering = slaActive(r);
    // On a phone legends break their names onto two lines, and labels shorten.
    var frame = document.getElementById("chart-pareto");
    var short = window.EndpointsPoints.phone(frame);
    // Offline ceiling "lighten": the ceilings stand out over curves drawn faint.
    var faint = r.offline_ceiling === "lighten" ? 0.3 : 1;
    r.curves.forEach(function (curve) {
      var color = colour(curve);
      var pts = curve.points.filter(function (p) {
        var v = xy(curve, p, r);
        return p.offline !== "dedicated" && v[0] !== null && v[1] !== null;
      });
      traces.push({
        type: "scatter", mode: "lines", name: label(curve, short), legendgroup: "c" + curve.id,
        x: curve.step_line.map(function (v) { return v[0]; }),
        y: curve.step_line.map(function (v) { return v[1]; }),
        line: { color: color, width: 2, dash: dash(curve) },
        opacity: OPACITY[curve.status] * faint, hoverinfo: "skip"
      });
      traces.push({
        type: "scatter", mode: "markers+text", showlegend: false, legendgroup: "c" + curve.id,
        x: pts.map(function (p) { return xy(curve, p, r)[0]; }), y: pts.map(function (p) { return xy(curve, p, r)[1]; }),
        text: pts.map(function (p) { return p.offline === "elected" ? "Offline (elected)" : ""; }),
        // The elected point is a curve's lowest per-user rate and its highest throughput,
        // in the chart's top left corner: its label goes below and right, into the chart,
        // neither off its left edge nor clipped at its top.
        textposition: "bottom right",
        hovertext: pts.map(function (p) { return hover(curve, p, r); }), hoverinfo: "text",
        // A reproduced point's spread over its runs (min to max), where y is throughput.
        error_y: spread(pts, r),
        marker: {
          color: color, symbol: pts.map(function (p) { return p.offline === "elected" ? "star" : (P.isRdi(curve) ? "diamond" : "circle"); }),
          size: pts.map(function (p) { return filtering && p.admissible ? 13 : 8; }),
          opacity: pts.map(function (p) { return (filtering && !p.admissible ? 0.2 : OPACITY[curve.status]) * faint; }),
          line: { width: pts.map(function (p) { return p.dir === curve.best && filtering ? 2 : 0; }), color: "#111" }
        }
      });
      if (curve.offline_ceiling && r.offline_ceiling !== "off") {
        shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: curve.offline_ceiling.y, y1: curve.offline_ceiling.y,
                      line: { dash: "dot", color: color, width: 1.5 }, opacity: OPACITY[curve.status] });
        annotations.push({ xref: "paper", x: 0.99, xanchor: "right", y: curve.offline_ceiling.y, yanchor: "bottom",
                           showarrow: false, font: { size: short ? 9 : 10, color: color },
                           text: (short ? "Offline · " : "Offline (dedicated) · ") + esc(curve.system) });
      }
    });
    if (r.curves.some(P.isRdi)) {  // the legend says what the RDI style means
      traces.push({ type: "scatter", mode: "lines+markers", x: [null], y: [null], hoverinfo: "skip",
                    name: "RDI result (research, development, internal: not orderable, §11.10)",
                    line: { color: "#555", dash: "dashdot", width: 2 }, marker: { symbol: "diamond", color: "#555" } });
    }
    [["per_user", r.sla.tps_per_user_min], ["ttft", r.sla.ttft_p90_max_ms]].forEach(function (limit) {
      var line = limit[1] !== null ? limitLine(r, limit[0], limit[1]) : null;
      if (line) { shapes.push(line); }
    });
    annotations = annotations.concat(P.betterCorner(r.axes, frame));
    if (r.rank_by === "goodput") {
      var drawn = r.curves.some(function (c) { return c.points.some(function (p) { return p.y !== undefined; }); });
      if (!drawn) {  // an empty chart would say nothing: say why
        annotations.push({ xref: "paper", yref: "paper", x: 0.5, y: 0.5, showarrow: false, font: { size: 14, color: "#555" },
                           text: "No point of this view has re-counted events: no goodput to draw" });
      }
    }
    return { traces: traces, layout: Object.assign({
      // On a phone the title takes two lines rather than run off both sides.
      title: { text: "Pareto curves · " + esc(r.benchmark) + (short ? "<br>" : " · ") + esc(r.cohort || "current") +
                     (r.curves.length && r.curves.every(function (c) { return c.result_name === r.curves[0].result_name; }) ? " · " + esc(r.curves[0].result_name) : ""),
               font: { size: short ? 13 : 15 } },
      shapes: shapes, annotations: annotations, hovermode: "closest",
      xaxis: { title: { text: P.axisTitle(r.axes.x.title, frame) }, rangemode: "tozero", automargin: true },
      yaxis: { title: { text: P.axisTitle(r.axes.y.title, frame) }, rangemode: "tozero", automargin: true }
    }, window.EndpointsPoints.legendAndMargin(frame)) };
  }

  function byConcurrency(r, key, title, ytitle, log) {
    var traces = r.curves.map(function (curve) {
      var pts = curve.points.filter(function (p) { return p.offline !== "dedicated" && p[key] !== null; });
      return {
        type: "scatter", mode: "lines+markers", name: label(curve), showlegend: false,
        x: pts.map(function (p) { return p.concurrency; }), y: pts.map(function (p) { return p[key]; }),
        // Each region is named once, at its first point: a name on every point piled up.
        text: pts.map(function (p, i) {
          var named = i > 0 && pts[i - 1].region === p.region;
          return p.region && !named ? p.region_name.replace(/ Concurrency$/, "") : "";
        }),
        hovertext: pts.map(function (p) { return hover(curve, p, r); }), hoverinfo: "text",
        line: { color: colour(curve), dash: dash(curve) }, opacity: OPACITY[curve.status]
      };
    });
    var concurrencies = [], values = [];
    traces.forEach(function (t) { concurrencies = concurrencies.concat(t.x); values = values.concat(t.y); });
    var xaxis = Object.assign({ title: { text: "concurrency (users)" }, type: "log", automargin: true },
                              logTicks(concurrencies, true));
    var yaxis = log ? Object.assign({ title: { text: ytitle }, type: "log", automargin: true }, logTicks(values, false))
                    : { title: { text: ytitle }, rangemode: "tozero", automargin: true };
    return { traces: traces, layout: {
      title: { text: title, font: { size: 13 } }, margin: { t: 36, r: 10, b: 45, l: 60 },
      xaxis: xaxis, yaxis: yaxis
    } };
  }

  // Visible zoom buttons (Plotly's own hide in its toolbar, and a phone has no wheel):
  // in and out about the middle of what is shown, and back to the whole chart.
  function wireZoom(el) {
    function zoom(factor) {
      var full = el._fullLayout;
      if (!full) { return; }
      var update = {};
      ["xaxis", "yaxis"].forEach(function (axis) {
        var range = full[axis].range, middle = (range[0] + range[1]) / 2, half = (range[1] - range[0]) / 2 * factor;
        update[axis + ".range"] = [middle - half, middle + half];
      });
      Plotly.relayout(el, update);
    }
    var controls = { "zoom-in": function () { zoom(0.5); }, "zoom-out": function () { zoom(2); },
                     "zoom-reset": function () { Plotly.relayout(el, { "xaxis.autorange": true, "yaxis.autorange": true }); } };
    Object.keys(controls).forEach(function (id) {
      var button = document.getElementById(id);
      if (button) { button.hidden = false; button.addEventListener("click", controls[id]); }
    });
  }

  // The page's own data, embedded by the server: the same computation the API serves,
  // done once. Absent when the query was refused (the page says why).
  function draw() {
    var embedded = document.getElementById("results-data");
    if (!embedded || !document.getElementById("chart-pareto")) { return; }  // nothing to draw
    chart(JSON.parse(embedded.textContent));
  }
  function chart(r) {
      // Plotly's own camera button would save the chart without its caption and
      // footnote: this one saves what "chart (PNG)" saves.
      var config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"],
                     modeBarButtonsToAdd: [{ name: "Download the chart as a PNG, with its caption and footnote",
                                             icon: Plotly.Icons.camera,
                                             click: savePng }] };
      var main = pareto(r);
      P.dropFirstView(document.getElementById("chart-pareto"));
      Plotly.newPlot("chart-pareto", main.traces, main.layout, config).then(function () {
        document.getElementById("chart-pareto").dataset.rendered = "true";
      });
      if (!document.getElementById("chart-tps-conc")) { return; }  // an embed: the main chart only
      var agentic = r.curves.length && r.curves[0].is_agentic;
      var tps = byConcurrency(r, "system_tps", "System throughput vs concurrency (points labelled by region)", "system tokens/s");
      tps.traces.forEach(function (t) { t.mode = "lines+markers+text"; t.textposition = "top center"; t.textfont = { size: 9 }; });
      var small = { displaylogo: false, responsive: true, displayModeBar: false };
      Plotly.newPlot("chart-tps-conc", tps.traces, tps.layout, small);
      // Log scale: one system's minutes-long queueing must not flatten everyone else's.
      var ttft = byConcurrency(r, "ttft_p90_ms", "TTFT P90 vs concurrency", "TTFT P90 (ms, log)", true);
      if (r.sla.ttft_p90_max_ms !== null) {
        ttft.layout.shapes = [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: r.sla.ttft_p90_max_ms, y1: r.sla.ttft_p90_max_ms,
                                line: { color: "#555", width: 1, dash: "dashdot" } }];
        ttft.layout.annotations = [{ xref: "paper", x: 0.01, xanchor: "left", y: Math.log10(r.sla.ttft_p90_max_ms), yanchor: "bottom",
                                     showarrow: false, font: { size: 10, color: "#555" }, text: "your TTFT limit" }];
      }
      Plotly.newPlot("chart-ttft-conc", ttft.traces, ttft.layout, small);
      var key = agentic ? "e2e_avg_interactivity" : "tps_per_user";
      var inter = byConcurrency(r, key, "Interactivity vs concurrency", agentic ? "interactivity (tok/s)" : "tokens/s per user");
      Plotly.newPlot("chart-inter-conc", inter.traces, inter.layout, small);
      document.getElementById("export-png").addEventListener("click", savePng);
      document.getElementById("export-svg").addEventListener("click", function () {
        var chart = document.getElementById("chart-pareto");
        Plotly.downloadImage(chart, { format: "svg", width: chart.clientWidth, height: chart.clientHeight,
                                      filename: "pareto-" + r.benchmark + "-" + (r.current ? "current" : r.cohort) });
      });
      wireZoom(document.getElementById("chart-pareto"));
      function savePng() {  // also the chart's camera button, the embed's included
        // The image travels alone: it says what the page says around the chart (which
        // view, which SLA, what is derived) and carries the preliminary-results footnote.
        var chart = document.getElementById("chart-pareto");
        var sla = [];
        if (r.sla.ttft_p90_max_ms !== null) { sla.push("TTFT P90 ≤ " + r.sla.ttft_p90_max_ms + " ms"); }
        if (r.sla.tps_per_user_min !== null) { sla.push("≥ " + r.sla.tps_per_user_min + " tok/s per user"); }
        if (r.sla.concurrency_min !== null) { sla.push("concurrency ≥ " + r.sla.concurrency_min); }
        // The results named as the rules name them ("MLPerf Endpoints Serviced", "… RDI").
        var caption = r.result_names + " · " + r.benchmark + " · " +
          (r.current ? "current results" + (r.cohort ? " (latest: " + r.cohort + ")" : "") : "cohort " + r.cohort) +
          " · " + r.statuses.join(", ") + (sla.length ? " · SLA: " + sla.join(", ") : "") +
          (r.derived_label ? " · " + r.derived_label : "");
        return P.savePng(chart, Object.assign({}, chart.layout, { margin: { t: 40, r: 20, b: 50, l: 70 } }),
                         [caption, r.footnote ? "* " + r.footnote : null],
                         "pareto-" + r.benchmark + "-" + (r.current ? "current" : r.cohort) + ".png");
      }
  }
  draw();
})();
