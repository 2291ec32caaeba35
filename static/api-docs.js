// Swagger UI, started from a local file (the CSP allows no inline script).
(function () {
  "use strict";
  var root = document.getElementById("api-docs");
  if (!root || typeof SwaggerUIBundle === "undefined") { return; }
  SwaggerUIBundle({
    url: root.dataset.spec, domNode: root, deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis], layout: "BaseLayout"
  });
})();
