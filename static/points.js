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
      margin: { t: 40, r: small ? 10 : 20, b: 50, l: small ? 55 : 70 },
      legend: small ? { orientation: "h", yref: "container", y: 0, yanchor: "bottom", font: { size: 10 } }
                    : { orientation: "h", y: -0.2 }
    };
  }
  window.EndpointsPoints = { fmt: fmt, tail: tail, phone: phone, legendAndMargin: legendAndMargin };
})();
