"""Report text of what speculation buys: the speedup over the control, acceptance per draft
position, greedy-output equality across depths and the gate's self-test.

Separate from report.py's seed and trade-off tables so that another report format can place
each section on its own; ``speculation_blocks`` gives them in report order.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.measure.acceptance import tokens_per_verify_step
from pytest_specperf.measure.speedup import speedups
from pytest_specperf.results.schema import DepthRun, OutputComparison, SelfTest, Speedup


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


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


def speculation_blocks(
    runs: Sequence[DepthRun], comparisons: Sequence[OutputComparison] = ()
) -> list[str]:
    """The speedup table (with the control in the run), acceptance per position, greedy
    output equality and self-test lines: each only when the runs hold something for it."""
    found = speedups(runs)
    blocks = [speedup_table(found)] if found else []
    extra = (acceptance_table(runs), lossless_table(comparisons), self_test_lines(runs))
    return blocks + [block for block in extra if block]
