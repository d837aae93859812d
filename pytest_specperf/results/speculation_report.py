"""Report text of what speculation buys: the speedup over the control, acceptance per draft
position, greedy-output equality across depths and the gate's self-test.

Separate from report.py's seed and trade-off tables so that another report format can place
each section on its own; ``speculation_blocks`` gives them in report order.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.acceptance import tokens_per_verify_step
from pytest_specperf.results.formats import number, ratio
from pytest_specperf.results.report_table import Table
from pytest_specperf.results.schema import DepthRun, OutputComparison, SelfTest, Speedup
from pytest_specperf.results.speedup import speedups


def speedup_table(found: Sequence[Speedup]) -> Table:
    """Per concurrency, each speculative depth's agg / per-req tok/s over the control's."""
    depths = sorted({s.depth for s in found})
    by_key = {(s.depth, s.concurrency): s for s in found}
    rows = []
    for concurrency in sorted({s.concurrency for s in found}):
        cells = [str(concurrency)]
        for depth in depths:
            item = by_key.get((depth, concurrency))
            cells.append("-" if item is None else f"{ratio(item.agg)} / {ratio(item.per_req)}")
        rows.append(cells)
    header = ["C", *(f"steps={d} agg / per-req" for d in depths)]
    return Table("Speedup over no speculation (steps=0)", header, rows)


def acceptance_table(runs: Sequence[DepthRun]) -> Table | None:
    """Per depth, the acceptance rate of each draft position over the depth's whole run."""
    depths = [run for run in sorted(runs, key=lambda r: r.depth) if run.position_accept_rate]
    if not depths:
        return None
    width = max(len(run.position_accept_rate) for run in depths)
    rows = []
    for run in depths:
        rates = [f"{rate:.3f}" for rate in run.position_accept_rate]
        rates += ["-"] * (width - len(rates))
        per_step = number(tokens_per_verify_step(run.accept_histogram), 2)
        rows.append([str(run.depth), per_step, *rates])
    header = ["steps", "tokens/verify step", *(f"pos {i}" for i in range(1, width + 1))]
    return Table("Acceptance per draft position (share of verify steps)", header, rows)


def lossless_table(comparisons: Sequence[OutputComparison]) -> Table | None:
    """Greedy outputs of each depth against the earlier depths: match rate, first divergence."""
    if not comparisons:
        return None
    rows = []
    for item in sorted(comparisons, key=lambda c: (c.reference_depth, c.depth)):
        diverged = ", ".join(f"{name}: {index}" for name, index in item.first_divergence.items())
        rows.append(
            [
                f"{item.depth} vs {item.reference_depth}",
                f"{item.identical}/{item.prompts} ({item.match_rate:.0%})",
                diverged or "-",
            ]
        )
    header = ["steps vs steps", "identical", "first divergence (prompt: token index)"]
    return Table("Greedy output equality (temperature 0)", header, rows)


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


def self_test_lines(runs: Sequence[DepthRun]) -> list[str]:
    """One line per depth that ran --specperf-self-test."""
    return [self_test_line(run.depth, run.self_test) for run in runs if run.self_test is not None]


def speculation_tables(
    runs: Sequence[DepthRun], comparisons: Sequence[OutputComparison] = ()
) -> list[Table]:
    """The speedup table (with the control in the run), acceptance per position and greedy
    output equality: each only when the runs hold something for it."""
    found = speedups(runs)
    tables = [speedup_table(found)] if found else []
    extra = (acceptance_table(runs), lossless_table(comparisons))
    return tables + [table for table in extra if table is not None]


def speculation_blocks(
    runs: Sequence[DepthRun], comparisons: Sequence[OutputComparison] = ()
) -> list[str]:
    """The terminal text of ``speculation_tables``, then the self-test lines."""
    blocks = [table.text() for table in speculation_tables(runs, comparisons)]
    lines = self_test_lines(runs)
    return blocks + (["\n".join(lines)] if lines else [])
