// The history site's glue: Plotly draws every chart from the figures on the page; this file
// only fills each trace's x and hover text from the page's table of runs, and filters the
// index's cards.
"use strict";

var specperfSite = (function () {
  function readJson(id) {
    var element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  // A trace over runs carries the runs' indices as customdata: x is each run's start time,
  // the hover text its run id, commit, SGLang version, runner and fingerprint.
  function hydrate(figure, runs) {
    figure.data.forEach(function (trace) {
      if (trace.type === "scatter" && Array.isArray(trace.customdata)) {
        trace.x = trace.customdata.map(function (i) { return runs[i][0]; });
        trace.text = trace.customdata.map(function (i) { return runs[i][1]; });
      }
    });
    return figure;
  }

  function draw() {
    if (typeof Plotly === "undefined") {
      throw new Error("specperf history site: assets/plotly.min.js did not load");
    }
    var runs = readJson("site-runs") || [];
    var figures = readJson("site-figures") || {};
    document.querySelectorAll("[data-figure]").forEach(function (element) {
      var figure = figures[element.dataset.figure];
      if (!figure) {
        throw new Error("specperf history site: no figure " + element.dataset.figure);
      }
      var small = element.classList.contains("spark");
      Plotly.newPlot(element, hydrate(figure, runs).data, figure.layout, {
        responsive: true,
        displaylogo: false,
        displayModeBar: small ? false : "hover",
        modeBarButtons: [["toImage", "zoom2d", "pan2d", "resetScale2d"]]
      });
    });
    var form = document.getElementById("filter");
    if (form) {
      form.addEventListener("change", filterCards);
      filterCards();
    }
  }

  // The index's filter: a card stays when it matches every chosen value; with a concurrency
  // chosen, its sparkline shows that concurrency only.
  function filterCards() {
    var form = document.getElementById("filter");
    var chosen = {};
    ["profile", "hardware", "depth", "concurrency"].forEach(function (name) {
      chosen[name] = form.elements[name].value;
    });
    var cards = document.querySelectorAll("#cards .card");
    var shown = 0;
    cards.forEach(function (card) {
      var keep =
        (!chosen.profile || card.dataset.profile === chosen.profile) &&
        (!chosen.hardware || card.dataset.hardware === chosen.hardware) &&
        (!chosen.depth || card.dataset.depth === chosen.depth) &&
        (!chosen.concurrency || card.dataset.concurrency.indexOf(" " + chosen.concurrency + " ") >= 0);
      card.hidden = !keep;
      if (keep) {
        shown += 1;
        var spark = card.querySelector(".spark");
        if (spark && spark.data) {
          Plotly.restyle(spark, {
            visible: spark.data.map(function (trace) {
              return !chosen.concurrency || String(trace.meta) === chosen.concurrency;
            })
          });
        }
      }
    });
    document.getElementById("filter-count").textContent =
      shown + " of " + cards.length + " shown";
  }

  return { draw: draw, filterCards: filterCards };
})();
