"""history/site/assets.py: the shared files every page loads, shipped inside DIR."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.history.site.assets import plotly_js, write_assets


def test_plotly_js_comes_from_the_installed_plotly_package() -> None:
    path = plotly_js()
    assert path.name == "plotly.min.js" and path.stat().st_size > 1_000_000


def test_the_assets_are_written_once_into_the_site(tmp_path: Path) -> None:
    written = write_assets(tmp_path)
    assert sorted(p.name for p in written) == ["plotly.min.js", "site.css", "site.js"]
    assert (tmp_path / "assets" / "plotly.min.js").read_bytes() == plotly_js().read_bytes()
