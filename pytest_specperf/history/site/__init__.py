"""``specperf history site``: the history store as a static site (index, a page per series,
speculation), its charts drawn by Plotly from the plotly.min.js shipped in the site's
assets/ folder: it opens from ``file://``, GitHub Pages or any artifact viewer, offline."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.changes import DetectionSettings
from pytest_specperf.history.site.data import SiteData, gather
from pytest_specperf.history.store import HistoryStore

REPO_URL_ENV = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY")


def repo_url_from_env(environ: Mapping[str, str]) -> str | None:
    """The repository of a GitHub Actions job (``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY``)."""
    server, repository = (environ.get(name) for name in REPO_URL_ENV)
    return f"{server.rstrip('/')}/{repository}" if server and repository else None


# Written into every site folder: a folder holding it may be replaced by a new build, any
# other non-empty folder is refused (nothing of the user's is deleted).
MARKER = ".specperf-site"


@dataclass(frozen=True)
class BuiltSite:
    out_dir: Path
    pages: int
    runs: int
    series: int
    changes: int

    @property
    def index(self) -> Path:
        return self.out_dir / "index.html"


def _check_target(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise SpecperfError(f"history site: {out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).exists():
        raise SpecperfError(
            f"history site: {out_dir} is not empty and holds no earlier site; give a new or "
            "empty folder"
        )


def write_site(
    site: SiteData, out_dir: Path, *, min_size: int = 2, built_at: str | None = None
) -> BuiltSite:
    """Render every page and copy the assets into a fresh folder beside ``out_dir``, then put
    it in place of ``out_dir`` (a failed build leaves the earlier site as it was)."""
    from pytest_specperf.history.site.assets import write_assets

    try:
        from pytest_specperf.history.site.pages import all_pages
    except ImportError as exc:
        raise SpecperfError(
            f"history site: needs plotly and jinja2 (pip install 'pytest-specperf[site]'): {exc}"
        ) from None
    _check_target(out_dir)
    built_at = built_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        pages = all_pages(site, min_size, built_at)
        for page in pages:
            path = fresh / page.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page.html, encoding="utf-8")
        write_assets(fresh)
        (fresh / MARKER).write_text("built by specperf history site\n", encoding="utf-8")
        fresh.chmod(0o755)
        old = None
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old.", dir=out_dir.parent))
            out_dir.rename(old / "site")
        fresh.rename(out_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return BuiltSite(
        out_dir=out_dir,
        pages=len(pages),
        runs=len(site.runs),
        series=len(site.panels),
        changes=len(site.changes),
    )


def build_site(
    store: HistoryStore,
    out_dir: Path,
    *,
    settings: DetectionSettings | None = None,
    kind: str | None = "nightly",
    repo_url: str | None = None,
) -> BuiltSite:
    """The store's site in ``out_dir``: complete runs of ``kind`` (None: every kind)."""
    settings = settings or DetectionSettings()
    site = gather(store, settings=settings, kind=kind, repo_url=repo_url)
    return write_site(site, out_dir, min_size=settings.min_size)
