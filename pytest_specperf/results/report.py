"""Terminal and markdown reports from results: the seed's table per depth and the trade-off.

Each table is built once as a ``results.tables.Table`` (``depth_table``, ``tradeoff_table``,
the speculation, goodput and recommendation tables): the terminal summary (``full_report``)
shows their plain text, report.md their markdown. report.md is the sections of
``MARKDOWN_SECTIONS`` in order: each takes a ``ReportContext`` and returns a block of markdown,
or None to leave itself out; a new section is one function added there (or passed to
``markdown_report``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_specperf.results.ab_report import ab_markdown
from pytest_specperf.results.client_health import fell_behind
from pytest_specperf.results.formats import (
    METRIC_LABELS,
    core_speeds_note,
    count,
    counted,
    millis,
    number,
)
from pytest_specperf.results.plot_style import Plot
from pytest_specperf.results.recommendation_report import (
    goodput_table,
    recommendation_table,
    recommendation_text,
)
from pytest_specperf.results.schema import (
    CPU_BOUND_MEANING,
    CPU_BOUND_SHARE,
    AbComparison,
    DepthRun,
    Interval,
    OutputComparison,
    PointMetrics,
    Recommendation,
    Slo,
    Verdict,
    Warmup,
)
from pytest_specperf.results.speculation_report import (
    self_test_lines,
    speculation_blocks,
    speculation_tables,
)
from pytest_specperf.results.stats import MIN_SAMPLES_FOR_INTERVAL, is_min_max
from pytest_specperf.results.tables import Table, md_table


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
        parts.append(f"max_total_num_tokens={count(server.max_total_num_tokens)}")
        parts.append(f"max_running_requests={count(server.max_running_requests)}")
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


def warmup_line(warmup: Warmup) -> str:
    """``warm-up boot 1: 3 rounds in 12.4 s, settled within 5%; agg tok/s by round: C=1 ...``"""
    why = {
        "settled": f"settled within {warmup.tolerance:.0%}",
        "rounds": f"NOT settled within {warmup.tolerance:.0%} in "
        f"{counted(warmup.max_rounds, 'round')}",
        "seconds": f"NOT settled within {warmup.tolerance:.0%}: stopped by the "
        f"{warmup.max_seconds or 0:g} s bound",
    }.get(warmup.stopped_by, warmup.stopped_by)
    figures = "; ".join(
        f"C={level} " + " / ".join(number(r[index]) for r in warmup.agg_tok_s if index < len(r))
        for index, level in enumerate(warmup.concurrency)
    )
    return (
        f"warm-up boot {warmup.boot + 1}: {counted(warmup.rounds, 'round')} in "
        f"{warmup.seconds:.1f} s, "
        f"{why}; agg tok/s by round: {figures}"
    )


def server_cpu_line(points: Sequence[PointMetrics]) -> str | None:
    """``server CPU: sglang::scheduler at C=1 100%, C=4 99% of one core; CPU-bound ...``"""
    measured = [(p.concurrency, p.server_cpu) for p in points if p.server_cpu is not None]
    if not measured:
        return None
    names = {cpu.process for _, cpu in measured}
    if len(names) == 1:
        shares = ", ".join(f"C={c} {cpu.share:.0%}" for c, cpu in measured)
        text = f"server CPU: {names.pop()} at {shares} of one core"
    else:
        shares = ", ".join(f"C={c} {cpu.process} {cpu.share:.0%}" for c, cpu in measured)
        text = f"server CPU, the busiest process of one core: {shares}"
    if any(cpu.share > 1 for _, cpu in measured):
        text += " (over 100%: the process has more than one busy thread)"
    bound = [c for c, cpu in measured if cpu.cpu_bound]
    if len(bound) == len(measured):
        where = "at every point"
    elif bound:
        where = "at " + ", ".join(f"C={c}" for c in bound)
    else:
        return text
    text = f"{text}; CPU-bound {where} (at {CPU_BOUND_SHARE:.0%} or more): {CPU_BOUND_MEANING}"
    speeds = [
        sample.server_cpu.core_speed
        for point in points
        for sample in point.all_samples()
        if sample.server_cpu is not None and sample.server_cpu.core_speed is not None
    ]
    if speeds:
        text += f"; {core_speeds_note(speeds, counted(len(speeds), 'sample'))}"
    return text


def depth_table(run: DepthRun) -> Table:
    """The depth's seed table (medians with intervals when repeated), the notes its rows
    need, and each boot's warm-up."""
    points = sorted(run.points, key=lambda p: p.concurrency)
    header, rows = point_table(run)
    notes = [
        f"C={point.concurrency}: {note}" for point in points for note in point_notes(run, point)
    ]
    min_max = min_max_note([run])
    if min_max:
        notes.append(min_max)
    cpu = server_cpu_line(points)
    if cpu:
        notes.append(cpu)
    notes += [warmup_line(w) for w in run.warmups]
    return Table(
        f"steps={run.depth}",
        header,
        rows,
        notes,
        caption=depth_heading(run),
        empty="(no point measured)",
    )


def tradeoff_table(runs: Sequence[DepthRun]) -> Table:
    """Per concurrency, each depth's agg / per-req figures; then the KV each depth leaves and
    its accept length."""
    header, rows = tradeoff_rows(runs)
    return Table("Speculation depth trade-off", header, rows, _interval_notes(runs))


def tradeoff_rows(runs: Sequence[DepthRun]) -> tuple[list[str], list[list[str]]]:
    ordered = sorted(runs, key=lambda r: r.depth)
    header = ["C"] + [f"steps={run.depth} agg / per-req tok/s" for run in ordered]
    rows = []
    for concurrency in sorted({p.concurrency for run in ordered for p in run.points}):
        cells = [str(concurrency)]
        for run in ordered:
            point = run.point(concurrency)
            cells.append(
                "-"
                if point is None
                else f"{_with_interval(point.agg_tok_s, point.intervals.get('agg_tok_s'))} / "
                f"{_with_interval(point.per_req_tok_s, point.intervals.get('per_req_tok_s'))}"
            )
        rows.append(cells)
    kv_row = ["KV"]
    for run in ordered:
        server = run.server
        tokens = server.max_total_num_tokens if server else None
        running = server.max_running_requests if server else None
        kv_row.append(f"{count(tokens)} tokens, {count(running)} running")
    rows.append(kv_row)
    rows.append(["accept length"] + [number(run.accept_length, 2) for run in ordered])
    return header, rows


def _interval_notes(runs: Sequence[DepthRun]) -> list[str]:
    notes = []
    level = _interval_level(runs)
    if level is not None:
        notes.append(f"Medians of the samples; [low, high]: their {_level_text(level)}.")
    min_max = min_max_note(runs)
    if min_max:
        notes.append(min_max)
    return notes


def full_report(
    runs: Sequence[DepthRun],
    comparisons: Sequence[OutputComparison] = (),
    *,
    slo: Slo | None = None,
    recommendation: Recommendation | None = None,
) -> str:
    blocks = [depth_table(run).text() for run in sorted(runs, key=lambda r: r.depth)]
    if len(runs) > 1:
        blocks.append(tradeoff_table(runs).text())
    blocks += speculation_blocks(runs, comparisons)
    if slo is not None:
        blocks.append(goodput_table(runs, slo).text())
    if recommendation is not None:
        blocks.append(recommendation_text(recommendation))
    return "\n\n".join(blocks)


# -- markdown (report.md, CI job summary) ------------------------------------------------------
UNKNOWN = "unknown"
# Verdicts are listed in this order: what needs attention first.
# "unjudged" fails its test too (the load generator, not the server, was measured).
VERDICT_ORDER = ("regression", "unjudged", "improvement", "pass", "recorded", "no-baseline")


@dataclass(frozen=True)
class ReportContext:
    """Everything a markdown section may show; built once per report."""

    runs: Sequence[DepthRun]
    started_at: str | None = None
    run_id: str | None = None
    tool_version: str | None = None
    tested_commit: str | None = None
    # Greedy outputs compared across depths, the SLOs of goodput, the depth recommendation.
    comparisons: Sequence[OutputComparison] = ()
    slo: Slo | None = None
    recommendation: Recommendation | None = None
    plots: Sequence[Plot] = ()
    # A/B mode: each depth's comparison of base and head.
    ab: Sequence[AbComparison] = ()
    # Images embedded (report.md beside its PNGs) or only named (a CI job summary, which
    # cannot show files of the job's artifacts).
    embed_plots: bool = True
    notes: Sequence[str] = field(default_factory=tuple)

    @property
    def ordered_runs(self) -> list[DepthRun]:
        return sorted(self.runs, key=lambda run: run.depth)


Section = Callable[[ReportContext], str | None]


def _distinct(values: Sequence[str | None]) -> str:
    seen = [value for value in dict.fromkeys(values) if value]
    return ", ".join(seen) if seen else UNKNOWN


def _interval_text(interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return "-"
    if is_min_max(interval):
        return f"[min-max {number(interval.low, digits)}, {number(interval.high, digits)}]"
    return f"[{number(interval.low, digits)}, {number(interval.high, digits)}]"


def _with_interval(value: float | None, interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return number(value, digits)
    return f"{number(value, digits)} {_interval_text(interval, digits)}"


def _interval_level(runs: Sequence[DepthRun]) -> float | None:
    """The level of the intervals the runs' points carry (None: no point was repeated)."""
    for run in runs:
        for point in run.points:
            for interval in point.intervals.values():
                if not is_min_max(interval):
                    return interval.level
    return None


def min_max_note(runs: Sequence[DepthRun]) -> str | None:
    """The line that says some intervals are only min-max (points of fewer than 3 samples)."""
    shown = any(
        is_min_max(interval)
        for run in runs
        for point in run.points
        for interval in point.intervals.values()
    )
    return (
        f"[min-max ...]: a point of fewer than {MIN_SAMPLES_FOR_INTERVAL} samples shows their "
        "range, not a confidence interval (too few samples for one)"
        if shown
        else None
    )


def run_section(context: ReportContext) -> str:
    runs = context.ordered_runs
    versions = [run.server.version if run.server else None for run in runs]
    items = [
        ("profile", _distinct([run.profile for run in runs])),
        ("hardware", _distinct([run.hardware for run in runs])),
        ("backend", _distinct([run.backend for run in runs])),
        ("SGLang version", _distinct(versions)),
        ("depths", ", ".join(str(run.depth) for run in runs) or "-"),
        ("samples per point", _samples_per_point(runs)),
        ("tested commit", context.tested_commit or UNKNOWN),
        ("started", context.started_at or UNKNOWN),
        ("run id", context.run_id or UNKNOWN),
        ("pytest-specperf", context.tool_version or UNKNOWN),
    ]
    lines = ["## Run", ""] + [f"- **{name}**: {value}" for name, value in items]
    lines += [f"- {note}" for note in context.notes]
    return "\n".join(lines)


def _samples_per_point(runs: Sequence[DepthRun]) -> str:
    counts = sorted({len(point.samples) or 1 for run in runs for point in run.points})
    if not counts:
        return "-"
    text = ", ".join(map(str, counts))
    return text + (" (figures are medians of the samples)" if counts[-1] > 1 else "")


# -- the verdict -------------------------------------------------------------------------------
# The gate's verdicts (DepthRun.verdicts, written by pytest_gate.py), grouped in this
# order: what needs attention first. The pooled test of a depth has concurrency None and
# metric "throughput": its figures are ratios to the baseline.
DEPTH_METRIC = "throughput"
# Outcomes shown with every figure, in this order; the others (what was not judged) get a
# table of their messages.
_FIGURE_GROUPS = {"regression": "Regressions", "improvement": "Improvements", "pass": "Passes"}
_MESSAGE_GROUPS = {
    "unjudged": "Not judged (these tests fail)",
    "recorded": "Recorded",
    "no-baseline": "No baseline",
}
_FAILING = ("regression", "unjudged")
_PLURALS = {"regression": "regressions", "improvement": "improvements", "pass": "passes"}
VERDICT_HEADER = (
    "point",
    "metric",
    "median",
    "interval",
    "judged",
    "floor",
    "baseline",
    "change",
    "samples",
    "noise",
    "confirmation",
)


def _verdict_where(verdict: Verdict) -> str:
    if verdict.concurrency is None:
        return f"steps={verdict.depth} (all points pooled)"
    return f"steps={verdict.depth} C={verdict.concurrency}"


def _verdict_order(verdict: Verdict) -> tuple[int, int, int, str]:
    rank = VERDICT_ORDER.index(verdict.outcome) if verdict.outcome in VERDICT_ORDER else 99
    # A depth's pooled verdict after its points.
    concurrency = verdict.concurrency if verdict.concurrency is not None else 1 << 30
    return rank, verdict.depth, concurrency, verdict.metric


def _verdict_figure(verdict: Verdict, value: float | None) -> str:
    if verdict.metric == DEPTH_METRIC:
        return "-" if value is None else f"{value:.3f}x baseline"
    return number(value, 2 if verdict.metric == "accept_length" else 1)


def _verdict_change(verdict: Verdict) -> str:
    if verdict.measured is None or not verdict.baseline:
        return "-"
    return f"{verdict.measured / verdict.baseline - 1:+.1%}"


def _verdict_samples(verdict: Verdict) -> str:
    if not verdict.samples:
        return "-"
    values = ", ".join(_verdict_figure(verdict, value) for value in verdict.samples)
    return f"{len(verdict.samples)}: {values}"


def _confirmation(verdict: Verdict) -> str:
    if verdict.confirmed:
        return "confirmed by re-measuring"
    if verdict.remeasured:
        return "borderline, re-measured: not confirmed"
    return "not re-measured"


def verdict_row(verdict: Verdict) -> list[str]:
    """One verdict as a row of VERDICT_HEADER: the median and interval of the samples, the
    figure the gate judged (their geometric mean), floor, baseline, every sample, the noise the
    decision assumed and whether re-measuring confirmed it."""
    median = statistics.median(verdict.samples) if verdict.samples else None
    digits = 2 if verdict.metric == "accept_length" else 1
    return [
        _verdict_where(verdict),
        METRIC_LABELS.get(verdict.metric, verdict.metric),
        _verdict_figure(verdict, median),
        _interval_text(verdict.interval, digits),
        _verdict_figure(verdict, verdict.measured),
        _verdict_figure(verdict, verdict.floor),
        _verdict_figure(verdict, verdict.baseline),
        _verdict_change(verdict),
        _verdict_samples(verdict),
        verdict.noise_source or "-",
        _confirmation(verdict),
    ]


def _verdict_table(verdicts: Sequence[Verdict]) -> str:
    return md_table(VERDICT_HEADER, [verdict_row(v) for v in verdicts])


def _folded(summary: str, body: str) -> str:
    # A blank line after <summary> lets GitHub render the markdown inside the toggle.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _refresh_commands(verdicts: Sequence[Verdict]) -> str:
    commands = list(dict.fromkeys(v.refresh_command for v in verdicts if v.refresh_command))
    if not commands:
        return ""
    block = "\n".join(commands)
    return f"After review, refresh the baseline:\n\n```\n{block}\n```"


def _verdict_summary(verdicts: Sequence[Verdict]) -> str:
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
    summary = ", ".join(
        f"{count} {outcome if count == 1 else _PLURALS.get(outcome, outcome)}"
        for outcome, count in counts.items()
    )
    return f"**{summary}**" if any(counts.get(outcome) for outcome in _FAILING) else summary


def floor_lines(runs: Sequence[DepthRun]) -> list[str]:
    """Each depth's pooled floor and where its width comes from (the calibration, or the
    runner's history with --specperf-history): shown in the terminal and in report.md."""
    return [
        f"gate floor: steps={v.depth}: {v.floor - 1:+.1%} vs baseline ({v.outcome}, "
        f"{v.measured - 1:+.1%}); width: {v.noise_source}"
        for run in runs
        for v in run.verdicts
        if v.concurrency is None and v.floor is not None and v.measured is not None
    ]


def verdict_section(context: ReportContext) -> str:
    """Regressions, then improvements (with the command that re-records the baseline), then
    passes (folded: there are many), each with its figures; what was not judged (its test
    fails too) comes right after the regressions, what was recorded last."""
    verdicts = sorted((v for run in context.runs for v in run.verdicts), key=_verdict_order)
    if not verdicts:
        return "## Verdict\n\nno verdicts recorded"
    blocks = ["## Verdict", _verdict_summary(verdicts)]
    floors = floor_lines(context.runs)
    if floors:
        blocks.append("\n".join(f"- {line}" for line in floors))
    for outcome in dict.fromkeys((*VERDICT_ORDER, *(v.outcome for v in verdicts))):
        group = [v for v in verdicts if v.outcome == outcome]
        if not group:
            continue
        if outcome not in _FIGURE_GROUPS:
            title = _MESSAGE_GROUPS.get(outcome, outcome)
            rows = [
                [_verdict_where(v), METRIC_LABELS.get(v.metric, v.metric), v.message] for v in group
            ]
            blocks += [f"### {title} ({len(group)})", md_table(["point", "metric", "why"], rows)]
            continue
        blocks.append(f"### {_FIGURE_GROUPS[outcome]} ({len(group)})")
        if outcome == "pass":
            count = f"{len(group)} {'pass' if len(group) == 1 else _PLURALS['pass']}"
            blocks.append(_folded(count, _verdict_table(group)))
            continue
        blocks.append(_verdict_table(group))
        if outcome == "regression":
            messages = "\n".join(f"- {v.message}" for v in group if v.message)
            blocks.append(_folded("what the failing tests said", messages) if messages else "")
        else:
            blocks.append(_refresh_commands(group))
    return "\n\n".join(block for block in blocks if block)


MD_SEED_HEADER = (
    "C",
    "Agg tok/s",
    "Per-req tok/s",
    "Tokens",
    "Wall (s)",
    "Ok",
    "TTFT p50/p99 (ms)",
    "Accept len",
)
# With repeats: the figures are medians, their intervals beside them, and the sample count.
MD_REPEATED_HEADER = (
    "C",
    "Agg tok/s median [{level}]",
    "Per-req tok/s median [{level}]",
    "Samples",
    "Tokens",
    "Wall (s)",
    "Ok",
    "TTFT p50/p99 (ms)",
    "Accept len",
)


def _md_point_row(point: PointMetrics, repeated: bool) -> list[str]:
    ttft = f"{millis(point.ttft_s.p50)}/{millis(point.ttft_s.p99)}" if point.ttft_s else "-"
    row = [
        str(point.concurrency),
        _with_interval(point.agg_tok_s, point.intervals.get("agg_tok_s")),
        _with_interval(point.per_req_tok_s, point.intervals.get("per_req_tok_s")),
    ]
    if repeated:
        row.append(str(len(point.samples) or 1))
    return [
        *row,
        f"{point.tokens:,}",
        f"{point.wall_s:.1f}",
        f"{point.ok}/{point.requests}",
        ttft,
        _with_interval(point.accept_length, point.intervals.get("accept_length"), 2),
    ]


def point_notes(run: DepthRun, point: PointMetrics) -> list[str]:
    """What a reader of the point's row must know (the terminal and report.md show the same)."""
    notes = []
    behind = fell_behind(point.client)
    if behind:
        notes.append(behind)
    if point.client_bound:
        notes.append(f"client-bound: {point.client_bound}")
    notes += [f"figures that cannot be true: {problem}" for problem in point.truth_problems]
    if point.errors:
        notes.append(
            "failures: " + ", ".join(f"{why}: {n}" for why, n in sorted(point.errors.items()))
        )
    running = run.server.max_running_requests if run.server else None
    if running is not None and point.concurrency > running:
        notes.append(
            f"C={point.concurrency} exceeds the server's max_running_requests ({running}): "
            f"{point.concurrency - running} requests wait in its queue at a time, so TTFT and "
            "e2e include queueing"
        )
    return notes


def point_table(run: DepthRun) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a depth's table (medians with intervals when repeated)."""
    points = sorted(run.points, key=lambda p: p.concurrency)
    repeated = any(len(p.samples) > 1 or p.intervals for p in points)
    level = _level_text(_interval_level([run]))
    header = (
        [cell.format(level=level) for cell in MD_REPEATED_HEADER]
        if repeated
        else list(MD_SEED_HEADER)
    )
    return header, [_md_point_row(p, repeated) for p in points]


def _level_text(level: float | None) -> str:
    return f"{level:.0%} interval" if level is not None else "interval"


def depth_tables_section(context: ReportContext) -> str:
    blocks = [depth_table(run).markdown(level=3) for run in context.ordered_runs]
    return "## Results per depth\n\n" + "\n\n".join(blocks)


def tradeoff_section(context: ReportContext) -> str | None:
    runs = context.ordered_runs
    if len(runs) < 2:
        return None
    return tradeoff_table(runs).markdown(level=2)


def speculation_section(context: ReportContext) -> str | None:
    """What speculation buys: the speedup over the control, acceptance per draft position,
    greedy-output equality and the self-test, each only when the run holds it."""
    blocks = [table.markdown() for table in speculation_tables(context.runs, context.comparisons)]
    lines = self_test_lines(context.runs)
    if lines:
        blocks.append("### Gate self-test\n\n" + "\n".join(f"- {line}" for line in lines))
    if not blocks:
        return None
    return "## What speculation buys\n\n" + "\n\n".join(blocks)


def goodput_section(context: ReportContext) -> str | None:
    if context.slo is None:
        return None
    return goodput_table(context.runs, context.slo).markdown(level=2)


def recommendation_section(context: ReportContext) -> str | None:
    if context.recommendation is None:
        return None
    table = recommendation_table(context.recommendation)
    if table.rows:
        return table.markdown(level=2)
    return f"## {table.title}\n\n" + "\n".join(f"- {note}" for note in table.notes)


def plots_section(context: ReportContext) -> str | None:
    if not context.plots:
        return None
    if context.embed_plots:
        lines = [f"![{plot.title}]({plot.file})" for plot in context.plots]
        return "## Plots\n\n" + "\n\n".join(lines)
    names = ", ".join(f"`{plot.file}` ({plot.title})" for plot in context.plots)
    return f"## Plots\n\nIn the run's artifacts, beside report.md: {names}"


# The report, top to bottom. Other parts of the suite add their sections here.
def ab_section(context: ReportContext) -> str | None:
    """A/B mode: the report opens with the verdict per depth."""
    return ab_markdown(context.ab)


MARKDOWN_SECTIONS: tuple[Section, ...] = (
    ab_section,
    run_section,
    verdict_section,
    depth_tables_section,
    tradeoff_section,
    speculation_section,
    goodput_section,
    recommendation_section,
    plots_section,
)

REPORT_TITLE = "# pytest-specperf results"


def markdown_report(context: ReportContext, sections: Sequence[Section] = MARKDOWN_SECTIONS) -> str:
    blocks = [REPORT_TITLE]
    for section in sections:
        block = section(context)
        if block:
            blocks.append(block.strip())
    return "\n\n".join(blocks) + "\n"
