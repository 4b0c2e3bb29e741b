/* Agreement dashboard charts: Vega-Lite specs drawn from the rows the page embeds as JSON.
 *
 * Each chart container is <div class="chart" data-chart="SECTION">; its rows come from the
 * <script id="analytics-data"> block of the same report fragment. Charts are drawn on page load and
 * again whenever htmx swaps in a new report (the progress bar is replaced by the finished report).
 */
(function () {
  "use strict";

  var SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";
  // What the Content-Security-Policy asks of the charts. Vega compiles its expressions (filters, formats,
  // encodings) with the Function constructor, which script-src would have to allow with 'unsafe-eval';
  // ast: true makes Vega keep them as syntax trees that the interpreter bundled in vega-embed evaluates,
  // so the page needs no exception at all. vega-embed and vega-tooltip would also add <style> elements of
  // their own: their rules are in css/charts.css instead.
  var EMBED = {
    actions: false,
    renderer: "svg",
    ast: true,
    defaultStyle: false,
    tooltip: { disableDefaultStyle: true }
  };
  var THRESHOLDS = [{ t: 0.667 }, { t: 0.8 }];

  // Axis titles in the page's language: the page writes them, translated, on <div id="chart-labels">.
  function label(key, english) {
    var holder = document.getElementById("chart-labels");
    return (holder && holder.dataset[key]) || english;
  }

  // Titles of the rows' fields (axes, legends, tooltips) in the page's language, from the page's
  // <script type="application/json" id="chart-titles">; a field without one keeps its name.
  var titles = null;
  function fieldTitle(field) {
    if (titles === null) {
      var holder = document.getElementById("chart-titles");
      titles = holder ? JSON.parse(holder.textContent) : {};
    }
    return titles[field] || field;
  }

  // Every encoding of a field that has no title of its own (title: null keeps it untitled) gets the
  // field's title: axes, legends and tooltip lines.
  function titled(node) {
    if (Array.isArray(node)) { node.forEach(titled); return node; }
    if (!node || typeof node !== "object") return node;
    if (typeof node.field === "string" && !("title" in node) && !("data" in node)) node.title = fieldTitle(node.field);
    Object.keys(node).forEach(function (k) { if (k !== "data") titled(node[k]); });
    return node;
  }

  function defined(rows, field) {
    return rows.filter(function (r) { return r[field] !== null && r[field] !== undefined; });
  }

  function base(rows, extra) {
    var spec = { $schema: SCHEMA, data: { values: rows }, width: "container", autosize: { type: "fit-x", contains: "padding" } };
    Object.keys(extra).forEach(function (k) { spec[k] = extra[k]; });
    return spec;
  }

  var SPECS = {
    alpha: function (rows) {
      rows = defined(rows, "alpha");
      if (!rows.length) return null;
      var y = { field: "criterion", type: "nominal", title: null, sort: null };
      var tooltip = ["criterion", "level", { field: "alpha", format: ".3f" }, { field: "ci_low", format: ".3f" },
        { field: "ci_high", format: ".3f" }, "n_units", "n_coders"].map(function (f) {
          return typeof f === "string" ? { field: f } : f;
        });
      return base(rows, {
        height: { step: 34 },
        layer: [
          { data: { values: THRESHOLDS }, mark: { type: "rule", strokeDash: [4, 4], color: "#9a9a9a" },
            encoding: { x: { field: "t", type: "quantitative", title: label("alphaCi", "Krippendorff's alpha (95% CI)") } } },
          { mark: { type: "rule", strokeWidth: 2, clip: true },
            encoding: { y: y, x: { field: "ci_low", type: "quantitative", title: label("alphaCi", "Krippendorff's alpha (95% CI)") }, x2: { field: "ci_high", title: label("alphaCi", "Krippendorff's alpha (95% CI)") } } },
          { mark: { type: "point", filled: true, size: 90 },
            encoding: { y: y, tooltip: tooltip,
              x: { field: "alpha", type: "quantitative", title: label("alphaCi", "Krippendorff's alpha (95% CI)"), scale: { domain: [-0.2, 1], clamp: true } } } }
        ]
      });
    },
    trend: function (rows) {
      rows = defined(rows, "alpha");
      if (!rows.length) return null;
      return base(rows, {
        height: 220,
        mark: { type: "line", point: true },
        encoding: {
          x: { field: "n_submissions", type: "quantitative", title: label("submissions", "submissions"), axis: { format: "d", tickMinStep: 1 } },
          y: { field: "alpha", type: "quantitative", title: label("alpha", "alpha"), scale: { domain: [-0.2, 1], clamp: true } },
          color: { field: "criterion", type: "nominal" },
          tooltip: [{ field: "criterion" }, { field: "n_submissions" }, { field: "alpha", format: ".3f" }]
        }
      });
    },
    distributions: function (rows) {
      if (!rows.length) return null;
      return {
        $schema: SCHEMA,
        data: { values: rows },
        mark: "bar",
        encoding: {
          column: { field: "criterion", type: "nominal", title: null },
          x: { field: "value", type: "ordinal", title: null, sort: null },
          y: { field: "count", type: "quantitative" },
          tooltip: [{ field: "criterion" }, { field: "value" }, { field: "count" }, { field: "share", format: ".1%" }]
        },
        width: 150,
        height: 140,
        resolve: { scale: { x: "independent" } }
      };
    },
    annotators: function (rows) {
      rows = defined(rows, "delta");
      if (!rows.length) return null;
      return base(rows, {
        height: { step: 22 },
        mark: { type: "point", filled: true, size: 70 },
        encoding: {
          y: { field: "coder", type: "nominal", title: null },
          x: { field: "delta", type: "quantitative", title: label("annotatorDelta", "alpha without the annotator minus alpha with everyone") },
          color: { field: "criterion", type: "nominal" },
          tooltip: [{ field: "coder" }, { field: "criterion" }, { field: "delta", format: ".3f" },
            { field: "alpha_without", format: ".3f" }, { field: "n_values" }]
        }
      });
    },
    bradley_terry: function (rows) {
      if (!rows.length) return null;
      var y = { field: "model", type: "nominal", title: null, sort: "-x" };
      return base(rows, {
        height: { step: 28 },
        encoding: { y: y, yOffset: { field: "source" }, color: { field: "source", type: "nominal" } },
        layer: [
          { mark: { type: "rule", strokeWidth: 2 },
            encoding: { x: { field: "ci_low", type: "quantitative", scale: { zero: false }, title: label("bradleyTerry", "Bradley-Terry rating (95% CI)") }, x2: { field: "ci_high", title: label("bradleyTerry", "Bradley-Terry rating (95% CI)") } } },
          { mark: { type: "point", filled: true, size: 80 },
            encoding: { x: { field: "rating", type: "quantitative", title: label("bradleyTerry", "Bradley-Terry rating (95% CI)") },
              tooltip: [{ field: "model" }, { field: "source" }, { field: "rating", format: ".0f" },
                { field: "ci_low", format: ".0f" }, { field: "ci_high", format: ".0f" }, { field: "games" }] } }
        ]
      });
    },
    judges: function (rows) {
      // One bar per judge and measure, the measure named as the page names it.
      var bars = [];
      rows.filter(function (r) { return r.kind !== "human"; }).forEach(function (r) {
        ["with_ties", "without_ties", "accuracy"].forEach(function (m) {
          if (r[m] !== null && r[m] !== undefined) bars.push({ judge: r.judge, measure: fieldTitle(m), share: r[m] });
        });
      });
      if (!bars.length) return null;
      return base(bars, {
        height: { step: 16 },
        mark: "bar",
        encoding: {
          y: { field: "judge", type: "nominal", title: null },
          yOffset: { field: "measure" },
          x: { field: "share", type: "quantitative", title: label("agreementWithPeople", "agreement with people"), scale: { domain: [0, 1] } },
          color: { field: "measure", type: "nominal" },
          tooltip: [{ field: "judge" }, { field: "measure" }, { field: "share", format: ".3f" }]
        }
      });
    }
  };

  SPECS.conflicts = function (rows) {
    if (!rows.length) return null;
    var encoding = {
      x: { field: "answerer", type: "nominal", title: label("answerer", "answerer") },
      y: { field: "creator", type: "nominal", title: label("creator", "creator") }
    };
    return {
      $schema: SCHEMA,
      data: { values: rows },
      encoding: encoding,
      layer: [
        { mark: "rect", encoding: { color: { field: "n_conflicts", type: "quantitative", title: label("conflicts", "conflicts"),
            scale: { scheme: "oranges" } },
          tooltip: [{ field: "creator" }, { field: "answerer" }, { field: "n_conflicts" }, { field: "n_answers" }] } },
        { mark: { type: "text", fontSize: 11 }, encoding: { text: { field: "n_conflicts" } } }
      ],
      width: { step: 36 },
      height: { step: 28 }
    };
  };

  // Judge lab: reliability diagram (agreement with people against the judge's confidence, the diagonal is
  // perfect calibration; point size = items in the bin).
  SPECS.reliability = function (rows) {
    rows = defined(rows, "accuracy");
    if (!rows.length) return null;
    var diagonal = [{ confidence: 0, accuracy: 0 }, { confidence: 1, accuracy: 1 }];
    var x = { field: "confidence", type: "quantitative", scale: { domain: [0, 1] } };
    var y = { field: "accuracy", type: "quantitative", scale: { domain: [0, 1] } };
    return base(rows, {
      height: 260,
      layer: [
        { data: { values: diagonal }, mark: { type: "line", strokeDash: [4, 4], color: "#9a9a9a" },
          encoding: { x: x, y: y } },
        { mark: { type: "line", point: { filled: true } },
          encoding: { x: x, y: y, color: { field: "judge", type: "nominal" }, size: { field: "n", type: "quantitative" },
            tooltip: [{ field: "judge" }, { field: "confidence", format: ".2f" }, { field: "accuracy", format: ".2f" }, { field: "n" }] } }
      ]
    });
  };

  // Judge lab: length-bias curve (share of verdicts for A by relative length difference, with 95%
  // intervals; the judges beside people).
  SPECS.length_bias = function (rows) {
    rows = defined(rows, "win_rate_a");
    if (!rows.length) return null;
    var x = { field: "centre", type: "quantitative", scale: { domain: [-1, 1] } };
    var color = { field: "source", type: "nominal" };
    return base(rows, {
      height: 260,
      layer: [
        { data: { values: [{ half: 0.5 }] }, mark: { type: "rule", strokeDash: [4, 4], color: "#9a9a9a" },
          encoding: { y: { field: "half", type: "quantitative" } } },
        { mark: { type: "rule", opacity: 0.5 },
          encoding: { x: x, y: { field: "ci_low", type: "quantitative" }, y2: { field: "ci_high" }, color: color } },
        { mark: { type: "line", point: { filled: true } },
          encoding: { x: x, y: { field: "win_rate_a", type: "quantitative", scale: { domain: [0, 1] } }, color: color,
            tooltip: [{ field: "source" }, { field: "centre", format: ".2f" }, { field: "win_rate_a", format: ".2f" },
              { field: "ci_low", format: ".2f" }, { field: "ci_high", format: ".2f" }, { field: "n" }] } }
      ]
    });
  };

  // Judge lab: prediction-powered, people-only and judge-only win rates with their intervals.
  SPECS.ppi = function (rows) {
    rows = defined(rows, "estimate");
    if (!rows.length) return null;
    var y = { field: "comparison", type: "nominal", title: null };
    return base(rows, {
      height: { step: 16 },
      encoding: { y: y, yOffset: { field: "estimator" }, color: { field: "estimator", type: "nominal" } },
      layer: [
        { mark: { type: "rule", strokeWidth: 2 },
          encoding: { x: { field: "ci_low", type: "quantitative", scale: { domain: [0, 1], clamp: true } }, x2: { field: "ci_high" } } },
        { mark: { type: "point", filled: true, size: 60 },
          encoding: { x: { field: "estimate", type: "quantitative" },
            tooltip: [{ field: "comparison" }, { field: "estimator" }, { field: "estimate", format: ".3f" },
              { field: "ci_low", format: ".3f" }, { field: "ci_high", format: ".3f" }] } }
      ]
    });
  };

  function render(root) {
    if (typeof window.vegaEmbed !== "function") return;
    var scope = root && root.querySelectorAll ? root : document;
    var source = scope.querySelector("#analytics-data") || document.getElementById("analytics-data");
    if (!source) return;
    var data = JSON.parse(source.textContent);
    scope.querySelectorAll(".chart[data-chart]").forEach(function (el) {
      if (el.dataset.rendered) return;
      var build = SPECS[el.dataset.chart];
      var spec = build ? titled(build(data[el.dataset.chart] || [])) : null;
      if (!spec) { el.hidden = true; return; }
      el.dataset.rendered = "1";
      window.vegaEmbed(el, spec, EMBED).catch(function (err) {
        el.textContent = label("unavailable", "Chart unavailable:") + " " + err;
      });
    });
  }

  if (window.htmx) { window.htmx.onLoad(render); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { render(document); });
  } else {
    render(document);
  }
})();
