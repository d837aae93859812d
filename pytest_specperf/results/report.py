"""Terminal and markdown reports from results: the seed's table per depth and the trade-off."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.measure.acceptance import tokens_per_verify_step
from pytest_specperf.measure.client_health import fell_behind
from pytest_specperf.measure.speedup import speedups
from pytest_specperf.results.schema import (
    DepthRun,
    OutputComparison,
    PointMetrics,
    SelfTest,
    Speedup,
)

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


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def speedup_table(found: Sequence[Speedup]) -> str:
    """Per concurrency, each speculative depth's agg / per-req tok/s over the control's."""
    depths = sorted({s.depth for s in found})
    by_key = {(s.depth, s.concurrency): s for s in found}
    header = "C | " + " | ".join(f"steps={d} agg / per-req" for d in depths)
    lines = ["Speedup over no speculation (steps=0)", header, "-" * len(header)]
    for concurrency in sorted({s.concurrency for s in found}):
        cells = []
        for depth in depths:
            item = by_key.get((depth, concurrency))
            cells.append("-" if item is None else f"{_ratio(item.agg)} / {_ratio(item.per_req)}")
        lines.append(f"{concurrency} | " + " | ".join(cells))
    return "\n".join(lines)


def acceptance_table(runs: Sequence[DepthRun]) -> str | None:
    """Per depth, the acceptance rate of each draft position over the depth's whole run."""
    rows = [run for run in sorted(runs, key=lambda r: r.depth) if run.position_accept_rate]
    if not rows:
        return None
    width = max(len(run.position_accept_rate) for run in rows)
    header = "steps | tokens/verify step | " + " | ".join(f"pos {i}" for i in range(1, width + 1))
    lines = ["Acceptance per draft position (share of verify steps)", header, "-" * len(header)]
    for run in rows:
        rates = [f"{rate:.3f}" for rate in run.position_accept_rate]
        rates += ["-"] * (width - len(rates))
        per_step = _num(tokens_per_verify_step(run.accept_histogram), 2)
        lines.append(f"{run.depth} | {per_step} | " + " | ".join(rates))
    return "\n".join(lines)


def lossless_table(comparisons: Sequence[OutputComparison]) -> str | None:
    """Greedy outputs of each depth against the earlier depths: match rate, first divergence."""
    if not comparisons:
        return None
    header = "steps vs steps | identical | first divergence (prompt: token index)"
    lines = ["Greedy output equality (temperature 0)", header, "-" * len(header)]
    for item in sorted(comparisons, key=lambda c: (c.reference_depth, c.depth)):
        diverged = ", ".join(f"{name}: {index}" for name, index in item.first_divergence.items())
        lines.append(
            f"{item.depth} vs {item.reference_depth} | {item.identical}/{item.prompts} "
            f"({item.match_rate:.0%}) | {diverged or '-'}"
        )
    return "\n".join(lines)


def self_test_line(depth: int, result: SelfTest) -> str:
    """One report line of --specperf-self-test."""

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f}"

    head = (
        f"self-test steps={depth}: /slow_down {result.slowdown_s * 1000:.2f} ms per forward "
        f"pass at C={result.concurrency}: per-req tok/s {rate(result.before_per_req_tok_s)} -> "
        f"{rate(result.slowed_per_req_tok_s)}, agg {rate(result.before_agg_tok_s)} -> "
        f"{rate(result.slowed_agg_tok_s)}; "
    )
    verdict = (
        f"the gate CAUGHT it (against {result.reference})"
        if result.caught
        else f"the gate MISSED it (against {result.reference})"
    )
    reset = (
        f"reset: agg tok/s back to {rate(result.after_agg_tok_s)}"
        if result.reset
        else f"reset: FAILED ({result.problem})"
    )
    if result.problem and not result.reset and result.slowed_agg_tok_s is None:
        return head + f"not completed: {result.problem}"
    return head + verdict + "; " + reset


def self_test_lines(runs: Sequence[DepthRun]) -> str | None:
    """One line per depth that ran --specperf-self-test."""
    lines = [self_test_line(run.depth, run.self_test) for run in runs if run.self_test is not None]
    return "\n".join(lines) or None


def full_report(runs: Sequence[DepthRun], comparisons: Sequence[OutputComparison] = ()) -> str:
    blocks = [seed_table(run) for run in sorted(runs, key=lambda r: r.depth)]
    if len(runs) > 1:
        blocks.append(tradeoff_table(runs))
    found = speedups(runs)
    if found:
        blocks.append(speedup_table(found))
    extra = (acceptance_table(runs), lossless_table(comparisons), self_test_lines(runs))
    blocks += [block for block in extra if block]
    return "\n\n".join(blocks)


def markdown_report(runs: Sequence[DepthRun], comparisons: Sequence[OutputComparison] = ()) -> str:
    """The same tables, fenced for a CI step summary or a PR comment."""
    return "# pytest-specperf results\n\n```\n" + full_report(runs, comparisons) + "\n```\n"
