"""Terminal and markdown reports from results: the seed's table per depth and the trade-off."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.measure.client_health import fell_behind
from pytest_specperf.results.schema import DepthRun, PointMetrics

SEED_HEADER = (
    "C | Agg tok/s | Per-req tok/s | Tokens | Wall(s) | Ok | TTFT p50/p99 (ms) | Accept len"
)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def point_row(point: PointMetrics) -> str:
    ttft = f"{_ms(point.ttft_s.p50)}/{_ms(point.ttft_s.p99)}" if point.ttft_s else "-"
    return (
        f"{point.concurrency} | {_num(point.agg_tok_s)} | {_num(point.per_req_tok_s)} | "
        f"{point.tokens} | {point.wall_s:.1f} | {point.ok}/{point.requests} | {ttft} | "
        f"{_num(point.accept_length, 2)}"
    )


def depth_heading(run: DepthRun) -> str:
    server = run.server
    parts = [f"steps={run.depth}", f"profile={run.profile}", f"hardware={run.hardware}"]
    if server is not None:
        if server.speculative_algorithm:
            parts.append(
                f"{server.speculative_algorithm} steps/topk/draft="
                f"{server.speculative_num_steps}/{server.speculative_eagle_topk}/"
                f"{server.speculative_num_draft_tokens}"
            )
        parts.append(f"max_total_num_tokens={_int(server.max_total_num_tokens)}")
        parts.append(f"max_running_requests={_int(server.max_running_requests)}")
        if server.version:
            parts.append(f"version={server.version}")
        if server.boot_s is not None:
            parts.append(f"boot={server.boot_s:.1f}s")
        if server.gpus is not None:
            parts.append(f"gpus={','.join(server.gpus)}")
    accept = run.accept_length
    if accept is not None:
        parts.append(f"accept length={accept:.2f}")
    if run.failure:
        parts.append(f"FAILED: {run.failure.splitlines()[0]}")
    return " ".join(parts)


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def seed_table(run: DepthRun) -> str:
    lines = [depth_heading(run), SEED_HEADER, "-" * len(SEED_HEADER)]
    points = sorted(run.points, key=lambda p: p.concurrency)
    lines += [point_row(p) for p in points]
    if not run.points:
        lines.append("(no point measured)")
    for point in points:
        note = fell_behind(point.client)
        if note:
            lines.append(f"note C={point.concurrency}: {note}")
        for problem in point.truth_problems:
            lines.append(f"note C={point.concurrency}: figures that cannot be true: {problem}")
    return "\n".join(lines)


def tradeoff_table(runs: Sequence[DepthRun]) -> str:
    """Per concurrency, each depth's agg / per-req figures; then the KV each depth leaves."""
    ordered = sorted(runs, key=lambda r: r.depth)
    header = "C | " + " | ".join(f"steps={r.depth} agg / per-req tok/s" for r in ordered)
    lines = ["Speculation depth trade-off", header, "-" * len(header)]
    concurrencies = sorted({p.concurrency for r in ordered for p in r.points})
    for concurrency in concurrencies:
        cells = []
        for run in ordered:
            point = run.point(concurrency)
            cells.append(
                "-" if point is None else f"{_num(point.agg_tok_s)} / {_num(point.per_req_tok_s)}"
            )
        lines.append(f"{concurrency} | " + " | ".join(cells))
    kv_cells = []
    for run in ordered:
        server = run.server
        tokens = server.max_total_num_tokens if server else None
        running = server.max_running_requests if server else None
        kv_cells.append(f"{_int(tokens)} tokens, {_int(running)} running")
    lines.append("KV | " + " | ".join(kv_cells))
    accepts = [_num(run.accept_length, 2) for run in ordered]
    lines.append("accept length | " + " | ".join(accepts))
    return "\n".join(lines)


def full_report(runs: Sequence[DepthRun]) -> str:
    blocks = [seed_table(run) for run in sorted(runs, key=lambda r: r.depth)]
    if len(runs) > 1:
        blocks.append(tradeoff_table(runs))
    return "\n\n".join(blocks)


def markdown_report(runs: Sequence[DepthRun]) -> str:
    """The same tables, fenced for a CI step summary or a PR comment."""
    return "# pytest-specperf results\n\n```\n" + full_report(runs) + "\n```\n"
