"""The files every page loads, written once into the site's assets/ folder: Plotly's own
plotly.min.js (shipped inside the ``plotly`` package, so nothing is fetched at build or view
time), the site's stylesheet and its small script."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from pytest_specperf.errors import SpecperfError

ASSETS_DIR = "assets"
PLOTLY_JS = "plotly.min.js"
_STATIC = ("site.css", "site.js")


def plotly_js() -> Path:
    """plotly.min.js as the installed ``plotly`` package ships it."""
    try:
        found = resources.files("plotly") / "package_data" / PLOTLY_JS
    except ModuleNotFoundError:
        raise SpecperfError(
            "history site: needs plotly and jinja2 (pip install 'pytest-specperf[site]')"
        ) from None
    path = Path(str(found))
    if not path.is_file():
        raise SpecperfError(f"history site: the plotly package has no {PLOTLY_JS} ({path})")
    return path


def write_assets(site_dir: Path) -> list[Path]:
    """Copy the shared assets into ``site_dir/assets``; the written paths."""
    target = site_dir / ASSETS_DIR
    target.mkdir(parents=True, exist_ok=True)
    written = [Path(shutil.copyfile(plotly_js(), target / PLOTLY_JS))]
    static = resources.files("pytest_specperf.history.site") / "static"
    for name in _STATIC:
        path = target / name
        path.write_bytes((static / name).read_bytes())
        written.append(path)
    return written
