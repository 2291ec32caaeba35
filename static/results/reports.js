// The reports table: "select the first 10" ticks the first ten rows in their order, and
// the count of picked results follows every tick.
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll('#reports-table input[name="curve"]'));
  var count = document.getElementById("picked-count");
  function counted() {
    var n = boxes.filter(function (b) { return b.checked; }).length;
    if (count) { count.textContent = n ? n + " picked" : "none picked yet: pick at least one to draw"; }
  }
  boxes.forEach(function (b) { b.addEventListener("change", counted); });
  var first = document.getElementById("select-first");
  if (first) {
    first.addEventListener("click", function () {
      boxes.forEach(function (b, i) { b.checked = i < 10; });
      counted();
    });
  }
  counted();
})();
