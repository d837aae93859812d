"""The history site in a real browser: six simulator nights with a slowdown from night 4
(tests/support/nights.py, shared with tests/e2e/test_history_nights.py: steps=3 with the
control beside it), `specperf history site` over their store, then index.html, a series
page and the speculation page opened from file:// in headless Chromium (Debian's chromium
and chromium-driver, through Selenium).

Each page must load without a console error, draw its charts (Plotly's SVG in every chart's
element), and show the change point's first run and commit; the filter must narrow the
cards. The same checks find the problems of a site whose chart library is missing.

CI sets SPECPERF_REQUIRE_BROWSER=1: there a missing browser is an error, never a skip.
With SPECPERF_SCREENSHOTS=DIR the test writes index.png, series.png and speculation.png
there (the pictures in docs/how-to/history.md).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.nights import Nights
from tests.support.scripts import run_in_repo

CHROMIUM = os.environ.get("SPECPERF_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SPECPERF_CHROMEDRIVER", "/usr/bin/chromedriver")
REQUIRE_BROWSER = os.environ.get("SPECPERF_REQUIRE_BROWSER") == "1"
SCREENSHOTS = os.environ.get("SPECPERF_SCREENSHOTS")


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return 'selenium is not installed (pip install -e ".[test]")'
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"{path} not found (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _browser_missing()
    if missing is not None:
        if REQUIRE_BROWSER:
            pytest.fail(f"SPECPERF_REQUIRE_BROWSER=1 and {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1800",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def site(nights: Nights, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    done = run_in_repo(
        "-m",
        "pytest_specperf.cli",
        "history",
        "site",
        "--history",
        str(nights.store),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 runs, 2 series pages" in done.stdout
    return out


def open_page(driver: Any, page: Path) -> list[str]:
    """Open a page and wait for its charts; the problems found (empty: none)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # what earlier pages logged is theirs
    driver.get(page.as_uri())
    charts = len(driver.find_elements("css selector", "[data-figure]"))
    problems = []
    if charts == 0:
        problems.append("no chart on the page")
    # Done when every chart is drawn, or at once when the chart library never loaded.
    with contextlib.suppress(TimeoutException):
        WebDriverWait(driver, 30).until(
            lambda d: (
                d.execute_script("return typeof Plotly === 'undefined'")
                or (
                    len(d.find_elements("css selector", "[data-figure] svg.main-svg")) > 0
                    and all(
                        e.find_elements("css selector", "svg.main-svg")
                        for e in d.find_elements("css selector", "[data-figure]")
                    )
                )
            )
        )
    drawn = sum(
        1
        for e in driver.find_elements("css selector", "[data-figure]")
        if e.find_elements("css selector", "svg.main-svg")
    )
    if drawn < charts:
        problems.append(f"{drawn} of {charts} charts drawn")
    traces = driver.find_elements("css selector", "[data-figure] .trace")
    if charts and not traces:
        problems.append("no trace drawn in any chart")
    problems.extend(
        f"console: {entry['message']}"
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE"
    )
    return problems


def _screenshot(driver: Any, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(1400, min(max(int(height) + 40, 900), 3200))
        driver.save_screenshot(str(Path(SCREENSHOTS) / f"{name}.png"))
        driver.set_window_size(1400, 1800)


def _series_page(site: Path) -> Path:
    (page,) = site.glob("series/*steps3.html")
    return page


def test_the_index_draws_its_cards_and_names_the_change_point(
    browser: Any, site: Path, nights: Nights
) -> None:
    assert open_page(browser, site / "index.html") == []
    cards = browser.find_elements("css selector", "#cards .card")
    assert len(cards) == 2  # steps=3 and the control
    text = browser.find_element("tag name", "body").text
    assert nights.run_id in text and nights.commit in text
    _screenshot(browser, "index")


def test_the_filter_narrows_the_cards(browser: Any, site: Path) -> None:
    from selenium.webdriver.support.ui import Select

    assert open_page(browser, site / "index.html") == []
    form = browser.find_element("id", "filter")
    Select(form.find_element("name", "depth")).select_by_value("3")
    shown = [c for c in browser.find_elements("css selector", "#cards .card") if c.is_displayed()]
    assert [c.get_attribute("data-depth") for c in shown] == ["3"]
    assert browser.find_element("id", "filter-count").text == "1 of 2 shown"
    Select(form.find_element("name", "depth")).select_by_value("")
    Select(form.find_element("name", "concurrency")).select_by_value("4")
    spark = shown[0].find_element("css selector", ".spark")
    visible = browser.execute_script(
        "return arguments[0].data.map(t => [t.meta, t.visible])", spark
    )
    assert visible == [[1, False], [4, True]]


def test_a_series_page_draws_the_change_point_with_its_run_and_commit(
    browser: Any, site: Path, nights: Nights
) -> None:
    assert open_page(browser, _series_page(site)) == []
    table = browser.find_element("css selector", "table.changes").text
    assert nights.run_id in table and nights.commit in table
    labels = [e.text for e in browser.find_elements("css selector", "#agg .annotation-text")]
    assert any(nights.commit in label for label in labels), labels
    drawn = browser.find_elements("css selector", ".chart svg.main-svg")
    assert {c.get_attribute("id") for c in browser.find_elements("css selector", ".chart")} >= {
        "agg",
        "per-req",
        "ttft",
        "itl",
        "accept-length",
        "positions",
        "step-time",
        "kv",
    }
    assert drawn
    _screenshot(browser, "series")


def test_the_speculation_page_draws_speedup_and_schedule(browser: Any, site: Path) -> None:
    assert open_page(browser, site / "speculation.html") == []
    names = {c.get_attribute("id") for c in browser.find_elements("css selector", ".chart")}
    assert {"g0-speedup-3", "g0-schedule"} <= names
    _screenshot(browser, "speculation")


def test_the_checks_fail_a_site_without_its_chart_library(
    browser: Any, site: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    (broken / "assets" / "plotly.min.js").unlink()
    problems = open_page(browser, broken / "index.html")
    assert any("plotly.min.js" in p for p in problems), problems
    assert any("charts drawn" in p for p in problems), problems
