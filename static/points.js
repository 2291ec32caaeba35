// What the results and submission charts say of a point alike (one home for each line).
(function () {
  "use strict";
  function fmt(v, digits) { return v === null || v === undefined ? "—" : Number(v).toFixed(digits); }
  // The tail the run summary reports beside the official P90 (never charted as the result).
  function tail(p) {
    var q = p.percentiles;
    if (!q) { return ""; }
    return [["TTFT", q.ttft_ms], ["TPOT", q.tpot_ms], ["latency", q.latency_ms]].filter(function (m) {
      return m[1] && Object.keys(m[1]).length;
    }).map(function (m) {
      return m[0] + " P50/P95/P99 " + ["50", "95", "99"].map(function (k) { return fmt(m[1][k], 1); }).join(" / ") + " ms";
    }).join("<br>");
  }
  // A chart on a phone (narrower than 600 px): its legend takes rows of its own at the
  // foot of the figure, below the axis title, never over it, and its margins shrink.
  function phone(el) { return !!el && el.getBoundingClientRect().width < 600; }
  function legendAndMargin(el) {
    var small = phone(el);
    return {
      // On a phone Plotly's toolbar stands upright at the right, off the chart's title.
      modebar: { orientation: small ? "v" : "h" },
      margin: { t: 40, r: small ? 10 : 20, b: 50, l: small ? 55 : 70 },
      legend: small ? { orientation: "h", yref: "container", y: 0, yanchor: "bottom", font: { size: 10 } }
                    : { orientation: "h", y: -0.2 }
    };
  }
  // Plotly text is its own small markup: escaping &, < and > keeps a name from opening a
  // tag; quotes are plain text there (Plotly shows "&quot;" as it is).
  function esc(text) {
    return String(text).replace(/[&<>]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;" }[c];
    });
  }
  // A result's standing as every chart says it (app/publishing/domain/standing.py makes
  // the words): its status, publication status, division and scenario, then its tags.
  function standing(curve) {
    return [curve.status, curve.availability, curve.division, curve.scenario]
      .filter(function (part) { return part; }).map(esc).join(" · ");
  }
  function tags(curve) {
    return (curve.tags || []).length ? "tags: " + curve.tags.map(esc).join("; ") : "";
  }
  // What a point's numbers rest on, where it is not the steady-state window.
  function basis(p) {
    var b = p.reporting_basis;
    return b && !b.steady ? "basis: " + esc(b.label) : "";
  }
  // RDI results stand apart (rules §11.10): drawn dash-dotted, with diamonds.
  function isRdi(curve) { return curve.availability === "RDI"; }
  // The server's picture of the chart (app/web/svgchart.py), shown until Plotly draws.
  function dropFirstView(el) {
    if (!el) { return; }
    Array.prototype.forEach.call(el.querySelectorAll(".first-view"), function (svg) { svg.remove(); });
  }
  // An exported chart travels without its page, so it carries what the page says around
  // it (its caption, its footnotes) as plain text in a band of its own below the chart:
  // the chart is drawn as it is, the band grows with the lines, nothing overlaps.
  var IMAGE = { width: 1400, height: 860, pad: 24, line: 22, font: "15px sans-serif" };
  function wrapped(ctx, text, width) {
    var out = [], line = "";
    String(text).split(/\s+/).forEach(function (word) {
      var longer = line ? line + " " + word : word;
      if (line && ctx.measureText(longer).width > width) { out.push(line); line = word; } else { line = longer; }
    });
    if (line) { out.push(line); }
    return out;
  }
  function savePng(el, layout, lines, filename) {
    lines = lines.filter(Boolean);
    el.dataset.imageText = lines.join("\n");  // what the image says below the chart
    return Plotly.toImage({ data: el.data, layout: layout },
                          { format: "png", width: IMAGE.width, height: IMAGE.height })
      .then(function (url) {
        return new Promise(function (done, failed) {
          var chart = new Image();
          chart.onload = function () { done(chart); };
          chart.onerror = failed;
          chart.src = url;
        });
      })
      .then(function (chart) {
        var canvas = document.createElement("canvas"), ctx = canvas.getContext("2d");
        ctx.font = IMAGE.font;
        var rows = [];
        lines.forEach(function (text) { rows = rows.concat(wrapped(ctx, text, IMAGE.width - 2 * IMAGE.pad)); });
        canvas.width = IMAGE.width;
        canvas.height = IMAGE.height + IMAGE.pad + rows.length * IMAGE.line + IMAGE.pad / 2;
        ctx.fillStyle = "#fff";
        ctx.fillRect(0, 0, canvas.width, canvas.height);
        ctx.drawImage(chart, 0, 0);
        ctx.fillStyle = "#333";
        ctx.font = IMAGE.font;
        ctx.textBaseline = "top";
        rows.forEach(function (text, i) { ctx.fillText(text, IMAGE.pad, IMAGE.height + IMAGE.pad / 2 + i * IMAGE.line); });
        var link = document.createElement("a");
        link.href = canvas.toDataURL("image/png");
        link.download = filename;
        document.body.appendChild(link); link.click(); link.remove();
      });
  }
  // One way to write each kind of figure: the table is app/web/figures.py's, served with
  // the page; an exact half rounds up there as here.
  var FIGURES = (function () {
    var table = document.getElementById("figure-formats");
    return table ? JSON.parse(table.textContent) : {};
  })();
  function fixed(n, decimals) {
    return n.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  }
  function figure(v, kind) {
    var f = FIGURES[kind];
    if (v === null || v === undefined || !isFinite(v) || !f) { return "—"; }
    var n = Number(v) * (kind === "percent" ? 100 : 1);
    if (f.seconds_from !== undefined && Math.abs(n) >= f.seconds_from) { return fixed(n / 1000, 0) + " s"; }
    return (f.prefix || "") + fixed(n, f.decimals) + (f.suffix || "");
  }
  // Every chart in the page's theme: Plotly draws on the page's own background, in its
  // ink, with its grid (static/theme.js says which theme); a change of theme redraws them.
  function colours() {
    var dark = window.EndpointsTheme && window.EndpointsTheme.dark();
    return { ink: dark ? "#e6edf3" : "#1b2430", grid: dark ? "#30363d" : "#eee" };
  }
  // A hover box is as wide as its longest line: on a phone each "a · b" part gets a line
  // of its own, so the box fits the screen (it ran past both edges).
  function narrowHover(trace) {
    var split = function (t) { return typeof t === "string" ? t.split(" · ").join("<br>") : t; };
    if (!trace || trace.hovertext === undefined) { return trace; }
    var texts = Array.isArray(trace.hovertext) ? trace.hovertext.map(split) : split(trace.hovertext);
    return Object.assign({}, trace, { hovertext: texts });
  }
  function themedLayout(layout) {
    var c = colours(), out = Object.assign({}, layout, { paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)" });
    out.font = Object.assign({}, layout && layout.font, { color: c.ink });
    ["xaxis", "yaxis"].forEach(function (axis) {
      out[axis] = Object.assign({}, layout && layout[axis], { gridcolor: c.grid, zerolinecolor: c.grid });
    });
    return out;
  }
  if (window.Plotly && !window.Plotly.themedByPortal) {
    var newPlot = window.Plotly.newPlot;
    window.Plotly.newPlot = function (el, data, layout, config) {
      var themed = themedLayout(layout);
      var node = typeof el === "string" ? document.getElementById(el) : el;  // Plotly takes either
      if (phone(node)) { data = (data || []).map(narrowHover); themed.hoverlabel = Object.assign({ font: { size: 11 } }, themed.hoverlabel); }
      return newPlot.call(window.Plotly, el, data, themed, config);
    };
    window.Plotly.themedByPortal = true;
    document.addEventListener("endpoints-theme", function () {
      var c = colours();
      Array.prototype.forEach.call(document.querySelectorAll(".js-plotly-plot"), function (el) {
        window.Plotly.relayout(el, { "font.color": c.ink, "xaxis.gridcolor": c.grid, "yaxis.gridcolor": c.grid,
                                     "xaxis.zerolinecolor": c.grid, "yaxis.zerolinecolor": c.grid });
      });
    });
  }
  // "Better ↗": where the better results sit, as the official visualiser marks it (the
  // answer's axes.better), as a list of the annotation or none. Above the plot at a top
  // corner (the Offline ceilings' labels sit just inside it), inside at a bottom one; on a
  // phone inside at either, off the title's second line.
  function betterCorner(axes, el) {
    if (!axes.better) { return []; }
    var corner = { "↗": [1, 1], "↖": [0, 1], "↘": [1, 0], "↙": [0, 0] }[axes.better];
    var inside = corner[1] && phone(el);
    return [{ xref: "paper", yref: "paper", x: corner[0], y: corner[1], showarrow: false,
              xanchor: corner[0] ? "right" : "left", yanchor: inside ? "top" : "bottom",
              text: "Better " + axes.better, font: { size: 11, color: "#555" } }];
  }
  // An axis title with its direction ("… · higher is better"): on a phone the direction
  // takes a line of its own rather than run off the chart.
  function axisTitle(text, el) {
    return phone(el) ? esc(text).replace(" · ", "<br>") : esc(text);
  }
  window.EndpointsPoints = { fmt: fmt, figure: figure, tail: tail, phone: phone, legendAndMargin: legendAndMargin,
                             esc: esc, standing: standing, tags: tags, basis: basis, isRdi: isRdi,
                             dropFirstView: dropFirstView, savePng: savePng, betterCorner: betterCorner,
                             axisTitle: axisTitle };
})();
