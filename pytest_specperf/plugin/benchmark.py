"""Each measured (depth, concurrency) point as a pytest-benchmark record, without re-running it.

What a round is: **one successful request of the point, timed end to end by the client**
(first byte sent to last chunk received, seconds). So pytest-benchmark's min/mean/median/max
are request latencies under that concurrency, its "rounds" is the number of successful
requests, and its OPS is 1 / mean latency. Failed requests are not rounds (they count in
``extra_info``). Every figure of the point (agg and per-request tok/s, tokens, TTFT/ITL/TPOT
percentiles, accept length, intervals, client health...) is in ``extra_info``, and the gate's
figures (floor, baseline) are added once the test has judged them.

The timings are handed to pytest-benchmark's stats object directly, the path its own
``pedantic`` mode takes after timing a call, through ``private_api.py`` (pytest-benchmark has
no public way to record timings measured elsewhere); nothing is run twice. Plain code: the
plugin passes in pytest-benchmark's ``benchmark`` fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from pytest_specperf.plugin.private_api import mark_benchmark_used, record_benchmark_rounds
from pytest_specperf.results.schema import PointMetrics

ROUND_MEANING = "one successful request's end-to-end time, client side (seconds)"
# pytest-benchmark options that write, compare or show its records (option names as pytest
# stores them). One of them set, or any other --benchmark-* flag on the command line except
# the two below, asks for pytest-benchmark's output: its banner, its table, its files.
BENCHMARK_OUTPUT_OPTIONS = (
    "benchmark_json",
    "benchmark_save",
    "benchmark_autosave",
    "benchmark_save_data",
    "benchmark_compare",
    "benchmark_compare_fail",
    "benchmark_histogram",
    "benchmark_verbose",
    "benchmark_cprofile",
)
NOT_OUTPUT_FLAGS = ("--benchmark-disable", "--benchmark-skip")
BANNER_PREFIX = "benchmark: "  # the header line pytest-benchmark adds to every run


def wants_benchmark_output(args: Sequence[str], get: Callable[[str], Any]) -> bool:
    """Did the user ask for pytest-benchmark's output? ``get(name)``: an option's value.

    Without it, a plain run shows the suite's own tables only: the measured points are not
    made benchmark records, and pytest-benchmark's banner is left out of the header.
    """
    if any(get(name) for name in BENCHMARK_OUTPUT_OPTIONS):
        return True
    flags = (str(arg).split("=", 1)[0] for arg in args)
    return any(flag.startswith("--benchmark-") and flag not in NOT_OUTPUT_FLAGS for flag in flags)


def without_benchmark_banner(header: list[Any]) -> list[Any]:
    """The report header's lines without pytest-benchmark's banner."""
    return [line for line in header if not str(line).startswith(BANNER_PREFIX)]


def point_extra_info(
    point: PointMetrics, depth: int, context: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Every figure of the point as plain JSON values, plus where it was measured."""
    info: dict[str, Any] = {"specperf_round": ROUND_MEANING, "depth": depth, **(context or {})}
    figures = msgspec.to_builtins(point)
    info.update(figures)
    info["success_rate"] = point.success_rate
    return info


def record_point(
    benchmark: Any,
    point: PointMetrics,
    request_e2e_s: Sequence[float],
    depth: int,
    context: Mapping[str, Any] | None = None,
) -> bool:
    """Make the point this test's benchmark record; False when there is nothing to record.

    Nothing is recorded when pytest-benchmark is disabled (``--benchmark-disable``, or by
    itself under xdist) or when no request of the point succeeded (no round to time).
    """
    # As pedantic() does, even when nothing is recorded: the fixture counts as used (no "fixture
    # was not used" warning), and a second use in the same test is refused by pytest-benchmark.
    mark_benchmark_used(benchmark)
    if getattr(benchmark, "disabled", True) or not request_e2e_s:
        return False
    benchmark.group = f"specperf steps={depth}"
    benchmark.extra_info.update(point_extra_info(point, depth, context))
    record_benchmark_rounds(benchmark, request_e2e_s)
    return True


def add_gate_figures(benchmark: Any, properties: Sequence[tuple[str, object]]) -> None:
    """Copy the gate's figures (the test's specperf.* user properties) into extra_info."""
    gate = {name: value for name, value in properties if name.startswith("specperf.")}
    if gate:
        benchmark.extra_info["gate"] = gate
