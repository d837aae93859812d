"""Every use of another plugin's private API, in one place, each checked by a test.

Neither plugin has a public way to do these two things, so the suite uses their internals
here and nowhere else; ``tests/unit/plugin/test_private_api.py`` fails when an installed version
changes what is used below.

- pytest-benchmark: a record made from timings measured elsewhere. Its public API times a
  call it makes itself (``benchmark(...)``, ``benchmark.pedantic(...)``), which would send
  every request again; instead the timings go into the stats object ``_make_stats`` creates,
  and ``_mode`` marks the fixture used, as ``pedantic`` does.
- pytest-xdist: tests grouped by depth on one worker. Its public hook
  (``pytest_xdist_make_scheduler``) returns a scheduler; ``LoadScopeScheduling`` groups by the
  scope its ``_split_scope`` gives a node id, which is overridden here.

No pytest import: the modules are loaded by name, when the plugin asks for them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from pytest_specperf.errors import SpecperfError

BENCHMARK_MODE = "pytest-specperf (the measured point)"


def mark_benchmark_used(benchmark: Any) -> None:
    """The fixture counts as used: no "fixture was not used" warning, no second use."""
    benchmark._mode = BENCHMARK_MODE


def record_benchmark_rounds(benchmark: Any, seconds: Any) -> None:
    """Each value of ``seconds`` becomes one round of the fixture's record."""
    make_stats = getattr(benchmark, "_make_stats", None)
    if make_stats is None:
        raise SpecperfError(
            "this pytest-benchmark has no stats API (BenchmarkFixture._make_stats); "
            "pytest-specperf needs pytest-benchmark >=4,<6"
        )
    stats = make_stats(1)
    for value in seconds:
        stats.update(value)


def scope_scheduling(split_scope: Callable[[str], str]) -> type:
    """xdist's LoadScopeScheduling with its scopes given by ``split_scope(nodeid)``."""
    base: type = importlib.import_module("xdist.scheduler").LoadScopeScheduling

    def _split_scope(self: Any, nodeid: str) -> str:
        return split_scope(nodeid)

    return type("DepthScheduling", (base,), {"_split_scope": _split_scope})
