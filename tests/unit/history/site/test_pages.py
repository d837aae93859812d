"""history/site/pages.py: the pages rendered from the templates, values escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_specperf.history.site.data import gather
from pytest_specperf.history.site.pages import all_pages, runs_table
from pytest_specperf.history.store import HistoryStore
from tests.support.step_nights import write_nights

HOSTILE = '<script>alert("x")</script>'


def _pages(path: Path) -> dict[str, str]:
    store = HistoryStore.open(path)
    try:
        site = gather(store)
    finally:
        store.close()
    return {page.path: page.html for page in all_pages(site, 2, "now")}


def test_an_index_a_speculation_page_and_a_page_per_series(store_path: Path) -> None:
    assert sorted(_pages(store_path)) == [
        "index.html",
        "series/prof--sim-x5--greedy-synthetic--steps0.html",
        "series/prof--sim-x5--greedy-synthetic--steps3.html",
        "speculation.html",
    ]


def test_values_put_into_the_html_are_escaped(tmp_path: Path) -> None:
    path = write_nights(tmp_path / "h.sqlite", count=3, profile=HOSTILE, commit=HOSTILE)
    for name, html in _pages(path).items():
        assert HOSTILE not in html, name
        assert "<script>alert" not in html, name


def test_the_figures_are_json_that_cannot_close_their_script_element(tmp_path: Path) -> None:
    path = write_nights(tmp_path / "h.sqlite", count=3, profile=HOSTILE)
    html = _pages(path)["index.html"]
    (raw,) = re.findall(r'<script type="application/json" id="site-figures">(.*?)</script>', html)
    assert "</" not in raw
    assert json.loads(raw)  # still JSON


def test_the_hover_table_escapes_the_run_fields(tmp_path: Path) -> None:
    path = write_nights(tmp_path / "h.sqlite", count=2, commit=HOSTILE)
    store = HistoryStore.open(path)
    try:
        table = runs_table(gather(store))
    finally:
        store.close()
    assert "commit: &lt;script&gt;" in table[0][1]


def test_every_page_loads_the_one_shared_chart_library(store_path: Path) -> None:
    for name, html in _pages(store_path).items():
        root = "../" if name.startswith("series/") else ""
        assert f'<script src="{root}assets/plotly.min.js"></script>' in html
        assert "Plotly.newPlot" not in html  # drawn by assets/site.js, not inlined


def test_the_filter_offers_each_profile_depth_and_concurrency(store_path: Path) -> None:
    html = _pages(store_path)["index.html"]
    assert '<option value="3">steps=3</option>' in html
    assert '<option value="4">C=4</option>' in html
    assert 'data-concurrency=" 1 4 "' in html
