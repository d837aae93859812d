"""Open-loop points and the server's running requests, as tables (terminal and report.md).

- ``open_loop_table``: every depth's open-loop points (a trace replay, each request rate):
  offered and achieved request rate, throughput, TTFT / ITL / E2E percentiles, goodput under
  the SLOs, how late the sends were, the server's running requests and retractions.
- ``rate_search_table``: each depth's highest request rate meeting the SLOs, its bracket and
  probes, and which depth serves the most rate under them.
- ``running_table``: per depth and point, the running requests the server reached against its
  ``max_running_requests`` (SGLang's /metrics), queued requests and retractions, and what held
  the batch: the request cap, or something below it (KV capacity, the prefill budget).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.formats import count, millis, number
from pytest_specperf.results.report_table import Table
from pytest_specperf.results.schema import DepthRun, Percentiles, PointMetrics, Slo

OPEN_LOOP_HEADER = (
    "steps",
    "load",
    "offered req/s",
    "achieved req/s",
    "Agg tok/s",
    "Per-req tok/s",
    "TTFT p50/p99 (ms)",
    "ITL p50/p99 (ms)",
    "E2E p50/p99 (ms)",
    "goodput tok/s",
    "send lag p99 (ms)",
    "running max",
    "retractions",
)


def _pair(value: Percentiles | None) -> str:
    return f"{millis(value.p50)}/{millis(value.p99)}" if value is not None else "-"


def achieved_rate(point: PointMetrics) -> float | None:
    """Requests that finished per second of the point's wall time."""
    return point.ok / point.wall_s if point.wall_s > 0 else None


def _running(point: PointMetrics, run: DepthRun) -> str:
    load = point.server_load
    cap = run.server.max_running_requests if run.server is not None else None
    if load is None or load.running_max is None:
        return "-"
    return f"{load.running_max}/{cap}" if cap is not None else str(load.running_max)


def _retractions(point: PointMetrics) -> str:
    if point.retractions is not None:
        return count(point.retractions)
    load = point.server_load
    return count(load.retractions) if load is not None and load.retractions is not None else "-"


def open_loop_table(runs: Sequence[DepthRun]) -> Table | None:
    """Every open-loop point, depth by depth; None when the run had none."""
    rows: list[list[str]] = []
    notes: list[str] = []
    for run in sorted(runs, key=lambda r: r.depth):
        for point in run.rate_points:
            goodput = point.goodput
            rows.append(
                [
                    str(run.depth),
                    point.key,
                    number(point.request_rate, 2),
                    number(achieved_rate(point), 2),
                    number(point.agg_tok_s),
                    number(point.per_req_tok_s),
                    _pair(point.ttft_s),
                    _pair(point.itl_s),
                    _pair(point.e2e_s),
                    number(goodput.goodput_tok_s) if goodput is not None else "-",
                    millis(point.send_lag_s.p99) if point.send_lag_s is not None else "-",
                    _running(point, run),
                    _retractions(point),
                ]
            )
            if point.client_bound:
                notes.append(f"steps={run.depth} {point.key}: client-bound: {point.client_bound}")
    if not rows:
        return None
    notes.append(
        "open loop: each request sent at its scheduled time whatever the server does, so a "
        "slower server queues them (latency grows) instead of receiving fewer (throughput "
        "falls): docs/explanation/open-and-closed-loop.md"
    )
    return Table("Open-loop points", list(OPEN_LOOP_HEADER), rows, notes)


def rate_search_table(runs: Sequence[DepthRun], slo: Slo | None) -> Table | None:
    """Each depth's highest request rate meeting the SLOs; None without a search."""
    searched = [run for run in sorted(runs, key=lambda r: r.depth) if run.rate_search]
    if not searched:
        return None
    rows: list[list[str]] = []
    for run in searched:
        found = run.rate_search
        assert found is not None
        probes = ", ".join(
            f"{p.rate:g} {'met' if p.meets_slo else 'missed'} ({p.attainment:.0%})"
            for p in found.probes
        )
        rows.append(
            [
                str(run.depth),
                "none" if found.max_rate is None else f"{found.max_rate:g}",
                "-" if found.high is None else f"{found.high:g}",
                str(len(found.probes)),
                found.stopped_by,
                probes,
            ]
        )
    notes = []
    best = best_rate_depth(searched)
    if best is not None:
        depth, rate = best
        notes.append(f"steps={depth} serves the most request rate within the SLOs: {rate:g}/s")
    else:
        notes.append("no depth met the SLOs at any rate probed")
    shown = _slo_text(slo)
    title = "Highest request rate meeting the SLOs" + (f" ({shown})" if shown else "")
    header = ["steps", "max rate (req/s)", "lowest missed", "probes", "stopped by", "probes"]
    header[-1] = "rates probed (attainment)"
    return Table(title, header, rows, notes)


def best_rate_depth(runs: Sequence[DepthRun]) -> tuple[int, float] | None:
    """(depth, rate) of the depth with the highest SLO rate; the shallower one on a tie."""
    found = [
        (run.rate_search.max_rate, -run.depth)
        for run in runs
        if run.rate_search is not None and run.rate_search.max_rate is not None
    ]
    if not found:
        return None
    rate, depth = max(found)
    return -depth, rate


def _slo_text(slo: Slo | None) -> str:
    if slo is None:
        return ""
    parts = [
        f"{name}={value:g}"
        for name, value in (
            ("ttft_p99_ms", slo.ttft_p99_ms),
            ("itl_p99_ms", slo.itl_p99_ms),
            ("e2e_p99_ms", slo.e2e_p99_ms),
        )
        if value is not None
    ]
    return ", ".join([*parts, f"attainment {slo.attainment:.0%}"])


def batch_held_by(running_max: int | None, cap: int | None, queued_max: int | None) -> str:
    """What held a point's batch, from the server's own gauges: ``no queue`` where no request
    waited; ``request cap`` where the running count reached ``max_running_requests`` less
    one (SGLang sets its running gauge at a prefill from the requests already running, before
    the new ones join, so a full batch reads one below the cap: its log then says
    ``#running-req: 63, #new-seq: 1`` at a cap of 64); else ``below the cap``: requests waited
    while the batch had room, held back by KV capacity or the prefill budget."""
    if running_max is None or queued_max is None:
        return "-"
    if queued_max == 0:
        return "no queue"
    if cap is not None and running_max >= cap - 1:
        return "request cap"
    return "below the cap"


def running_table(runs: Sequence[DepthRun]) -> Table | None:
    """Running requests reached per depth and point, against max_running_requests; None when
    no point watched them."""
    rows: list[list[str]] = []
    for run in sorted(runs, key=lambda r: r.depth):
        cap = run.server.max_running_requests if run.server is not None else None
        kv = run.server.max_total_num_tokens if run.server is not None else None
        for point in [*sorted(run.points, key=lambda p: p.concurrency), *run.rate_points]:
            load = point.server_load
            if load is None:
                continue
            rows.append(
                [
                    str(run.depth),
                    point.key,
                    count(load.running_max),
                    count(cap),
                    count(kv),
                    count(load.queued_max),
                    _retractions(point),
                    batch_held_by(load.running_max, cap, load.queued_max),
                ]
            )
    if not rows:
        return None
    header = [
        "steps",
        "point",
        "running max",
        "max_running_requests",
        "max_total_num_tokens",
        "queued max",
        "retractions",
        "batch held by",
    ]
    notes = [
        "running and queued: the highest of SGLang's /metrics gauges polled every 0.1 s "
        "(sglang:num_running_reqs, sglang:num_queue_reqs); retractions: the requests' "
        "meta_info num_retractions. Batch held by: the request cap where requests queued with "
        "the running count at max_running_requests or one below it (SGLang counts the running "
        "requests at a prefill before the new ones join); below the cap, requests queued while "
        "the batch had room: KV capacity (SGLang reserves room for each request's output) or "
        "the prefill budget held them back."
    ]
    return Table("Running requests (the server's own count)", header, rows, notes)


def open_loop_tables(runs: Sequence[DepthRun], slo: Slo | None) -> list[Table]:
    """Every table of this module that has rows, in report order."""
    found = [open_loop_table(runs), rate_search_table(runs, slo), running_table(runs)]
    return [table for table in found if table is not None]
