// Light or dark: the system's setting unless the reader chose one (kept in this browser).
// Loaded in <head>, before the page is drawn, so that it never flashes the other theme.
(function () {
  "use strict";
  var root = document.documentElement;
  var KEY = "endpoints-portal-theme";
  function chosen() { try { return localStorage.getItem(KEY) || ""; } catch (e) { return ""; } }
  function apply(theme) {
    if (theme === "light" || theme === "dark") { root.dataset.theme = theme; } else { delete root.dataset.theme; }
  }
  apply(chosen());
  // Whether the page is dark now (the charts read it: static/points.js).
  window.EndpointsTheme = {
    dark: function () {
      var theme = root.dataset.theme;
      if (theme) { return theme === "dark"; }
      return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
    }
  };
  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("theme-choice");
    if (!select) { return; }
    select.hidden = false;  // without script the system's setting applies; no menu to offer
    select.value = chosen();
    select.addEventListener("change", function () {
      try { localStorage.setItem(KEY, select.value); } catch (e) { /* private mode: this page only */ }
      apply(select.value);
      // Charts drawn in the other theme are drawn again in this one.
      document.dispatchEvent(new CustomEvent("endpoints-theme"));
    });
  });
})();
