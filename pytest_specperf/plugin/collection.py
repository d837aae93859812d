"""Which of the suite's tests a run has, and in what order: each depth, concurrency and
open-loop load a test of its own; the tests no option asked for deselected; each depth's
tests together, so that its server boots once.

No hooks here: plugin/__init__.py's pytest_generate_tests and pytest_collection_modifyitems
call these with the run's settings.
"""

from __future__ import annotations

import pytest

from pytest_specperf.config.settings import Settings
from pytest_specperf.plugin.fixtures import load_id


def parametrize(metafunc: pytest.Metafunc, settings: Settings) -> None:
    """The depth, concurrency and open-loop load of each test that asks for them."""
    if "specperf_depth" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_depth",
            settings.depths,
            indirect=True,
            scope="session",
            ids=[f"steps{d}" for d in settings.depths],
        )
    if "specperf_concurrency" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_concurrency",
            settings.concurrency,
            ids=[f"c{c}" for c in settings.concurrency],
        )
    if "specperf_load" in metafunc.fixturenames:
        # No open-loop point asked for: the tests are deselected (arrange_items).
        loads = settings.open_loads or ("none",)
        metafunc.parametrize("specperf_load", loads, ids=[load_id(load) for load in loads])


def arrange_items(config: pytest.Config, items: list[pytest.Item], settings: Settings) -> None:
    """Deselects the suite's tests the run did not ask for; groups the rest by depth, then
    phase, then concurrency ascending, each depth an xdist group of its own."""
    specperf_items = [i for i in items if "specperf_depth" in getattr(i, "fixturenames", ())]
    if not specperf_items:
        return
    unasked = [i for i in specperf_items if _not_asked_for(i, settings)]
    if unasked:
        config.hook.pytest_deselected(items=unasked)
        specperf_items = [i for i in specperf_items if i not in unasked]
        items[:] = [i for i in items if i not in unasked]
    others = [i for i in items if i not in specperf_items]
    specperf_items.sort(key=lambda item: _item_order(item, settings))
    for item in specperf_items:
        depth = _item_order(item, settings)[0]
        item.add_marker(pytest.mark.xdist_group(f"specperf-steps{depth}"))
    items[:] = others + specperf_items


def _item_order(item: pytest.Item, settings: Settings) -> tuple[int, int, int, int]:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec else {}
    depth = int(params.get("specperf_depth", 0))
    concurrency = int(params.get("specperf_concurrency", 0))
    marker = item.get_closest_marker("specperf_phase")
    phase = int(marker.args[0]) if marker is not None else 1
    # Open-loop points after the closed-loop ones of their phase, in the order asked for.
    load = params.get("specperf_load")
    open_index = settings.open_loads.index(load) + 1 if load in settings.open_loads else 0
    return depth, phase, open_index, concurrency


def _not_asked_for(item: pytest.Item, settings: Settings) -> bool:
    """An open-loop test of a run without open-loop points, or a rate search without rates
    and SLOs: deselected, not skipped (the run asked for none of it)."""
    fixtures = getattr(item, "fixturenames", ())
    if "specperf_load" in fixtures and not settings.open_loads:
        return True
    if item.get_closest_marker("specperf_rate_search") is not None:
        return not (settings.request_rates and settings.slo is not None)
    return False
