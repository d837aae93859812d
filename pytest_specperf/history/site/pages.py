"""The site's HTML pages, rendered by Jinja2 from templates/ (autoescaped: profile names,
run ids, commits and runner names are text, never markup)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from pytest_specperf.history.site.charts import (
    METRIC_TITLES,
    Figure,
    color,
    schedule_figure,
    series_figures,
    sparkline,
    speedup_figures,
    stops_paying_figure,
)
from pytest_specperf.history.site.data import ChangeView, Panel, SiteData, SpeculationGroup
from pytest_specperf.results.formats import change_interval, noun_for, ratio_of, relative_change

# The index lists this many change points, newest first; the series pages list them all.
INDEX_CHANGES = 25


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pytest_specperf.history.site", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # Compact JSON for the figures (a store of 1,000 runs): no spaces, no re-sorting.
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "allow_nan": False}
    env.globals["metric_titles"] = METRIC_TITLES
    env.globals["fmt"] = _fmt
    env.globals["color"] = color
    env.globals["noun_for"] = noun_for
    env.globals["stored_change"] = _stored_change
    env.globals["stored_change_interval"] = _stored_change_interval
    return env


def _stored_change(fraction: float) -> str:
    """A change point's step (a fraction, after / before - 1), as every change reads."""
    return relative_change(ratio_of(fraction))


def _stored_change_interval(low: float, high: float) -> str:
    return change_interval(ratio_of(low), ratio_of(high))


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else spec.format(value)


def runs_table(site: SiteData) -> list[list[str]]:
    """Per run: its x on a chart and its hover lines (HTML-escaped, Plotly's <br> between)."""
    from html import escape

    return [
        [run.when, "<br>".join(f"{escape(k)}: {escape(v)}" for k, v in run.hover_fields())]
        for run in site.runs
    ]


@dataclass(frozen=True)
class Page:
    path: str  # relative to the site's folder
    html: str


@dataclass(frozen=True)
class _PanelChange:
    panel: Panel
    change: ChangeView


def _common(site: SiteData, page: str, root: str, built_at: str) -> dict[str, Any]:
    return {
        "site": site,
        "page": page,
        "root": root,
        "built_at": built_at,
        "kind_label": site.kind or "all",
        "runs_table": runs_table(site),
    }


def index_page(env: Environment, site: SiteData, built_at: str) -> Page:
    figures: dict[str, Figure] = {
        f"spark-{index}": sparkline(panel) for index, panel in enumerate(site.panels)
    }
    every = sorted(
        (_PanelChange(panel, change) for panel in site.panels for change in panel.changes),
        key=lambda item: (-item.change.run.index, -abs(item.change.step)),
    )
    filters = {
        "profile": sorted({p.key.profile for p in site.panels}),
        "hardware": sorted({p.key.hardware for p in site.panels}),
        "depth": sorted({p.key.depth for p in site.panels}),
        "concurrency": sorted({c for p in site.panels for c in p.concurrencies}),
    }
    html = env.get_template("index.html").render(
        **_common(site, "index", "", built_at),
        figures=figures,
        filters=filters,
        latest=site.runs[-1] if site.runs else None,
        new_changes=[c for c in site.changes if c.in_latest_run],
        recent_changes=every[:INDEX_CHANGES],
        more_changes=max(0, len(every) - INDEX_CHANGES),
    )
    return Page("index.html", html)


def series_page(env: Environment, site: SiteData, panel: Panel, built_at: str) -> Page:
    charts = series_figures(panel)
    latest = panel.latest_run
    html = env.get_template("series.html").render(
        **_common(site, "series", "../", built_at),
        panel=panel,
        charts=charts,
        figures=dict(charts),
        latest_run=site.runs[latest] if latest is not None else None,
        latest_points=[p for p in panel.points if p.run == latest],
    )
    return Page(f"series/{panel.key.slug}.html", html)


@dataclass(frozen=True)
class _GroupCharts:
    group: SpeculationGroup
    charts: list[str]


def speculation_page(env: Environment, site: SiteData, min_size: int, built_at: str) -> Page:
    figures: dict[str, Figure] = {}
    groups = []
    for number, group in enumerate(site.speculation):
        names = []
        for depth, figure in speedup_figures(group):
            names.append(f"g{number}-speedup-{depth}")
            figures[names[-1]] = figure
        for suffix, maybe in (
            ("stops-paying", stops_paying_figure(group)),
            ("schedule", schedule_figure(group, site.runs)),
        ):
            if maybe is not None:
                names.append(f"g{number}-{suffix}")
                figures[names[-1]] = maybe
        groups.append(_GroupCharts(group, names))
    html = env.get_template("speculation.html").render(
        **_common(site, "speculation", "", built_at),
        figures=figures,
        groups=groups,
        min_size=min_size,
    )
    return Page("speculation.html", html)


def all_pages(site: SiteData, min_size: int, built_at: str) -> Sequence[Page]:
    env = environment()
    return [
        index_page(env, site, built_at),
        speculation_page(env, site, min_size, built_at),
        *(series_page(env, site, panel, built_at) for panel in site.panels),
    ]
