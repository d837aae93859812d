"""pytest-specperf: performance regression suite for SGLang speculative decoding.

Public names are re-exported here and imported on first use, so that code written against
``pytest_specperf.X`` keeps working when a module moves, and importing the package (the
simulator does) never pulls in pytest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_specperf.version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "SpecperfGate": "pytest_specperf.plugin.gate",
    "Baseline": "pytest_specperf.gate.baselines",
    "load_baseline": "pytest_specperf.gate.baselines",
    "DepthRun": "pytest_specperf.results.schema",
    "PointMetrics": "pytest_specperf.results.schema",
    "RequestRecord": "pytest_specperf.results.schema",
    "RunResults": "pytest_specperf.results.schema",
    "ServerSummary": "pytest_specperf.results.schema",
    "Settings": "pytest_specperf.config.settings",
    "Profile": "pytest_specperf.server.profiles",
    "Workload": "pytest_specperf.measure.workload",
    "DepthSession": "pytest_specperf.run.depth_session",
    "SpecperfError": "pytest_specperf.errors",
    "UsageError": "pytest_specperf.errors",
}

__all__ = [
    "Baseline",
    "DepthRun",
    "DepthSession",
    "PointMetrics",
    "Profile",
    "RequestRecord",
    "RunResults",
    "ServerSummary",
    "Settings",
    "SpecperfError",
    "SpecperfGate",
    "UsageError",
    "Workload",
    "__version__",
    "load_baseline",
]

if TYPE_CHECKING:
    from pytest_specperf.config.settings import Settings
    from pytest_specperf.errors import SpecperfError, UsageError
    from pytest_specperf.gate.baselines import Baseline, load_baseline
    from pytest_specperf.measure.workload import Workload
    from pytest_specperf.plugin.gate import SpecperfGate
    from pytest_specperf.results.schema import (
        DepthRun,
        PointMetrics,
        RequestRecord,
        RunResults,
        ServerSummary,
    )
    from pytest_specperf.run.depth_session import DepthSession
    from pytest_specperf.server.profiles import Profile


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_specperf' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
