"""Terminal and markdown reports from results: the seed's table per depth and the trade-off.

Each table is built once as a ``results.report_table.Table`` (``depth_table``,
``tradeoff_table``, the speculation, goodput and recommendation tables): the terminal summary
(``full_report``) shows their plain text, report.md their markdown. report.md is the sections of
``MARKDOWN_SECTIONS`` in order: each takes a ``ReportContext`` and returns a block of markdown,
or None to leave itself out; a new section is one function added there (or passed to
``markdown_report``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_specperf.results.ab_report import ab_markdown
from pytest_specperf.results.client_bound import fell_behind
from pytest_specperf.results.formats import (
    core_speeds_note,
    count,
    counted,
    millis,
    number,
)
from pytest_specperf.results.open_loop_report import open_loop_tables
from pytest_specperf.results.plot_style import Plot
from pytest_specperf.results.recommendation_report import (
    goodput_table,
    recommendation_table,
    recommendation_text,
)
from pytest_specperf.results.report_table import Table
from pytest_specperf.results.schema import (
    CPU_BOUND_MEANING,
    CPU_BOUND_SHARE,
    GPU_BUSY_SHARE,
    AbComparison,
    DepthRun,
    Interval,
    OutputComparison,
    PointMetrics,
    Recommendation,
    Slo,
    Warmup,
    follows_its_core,
)
from pytest_specperf.results.speculation_report import (
    self_test_lines,
    speculation_blocks,
    speculation_tables,
)
from pytest_specperf.results.stats import MIN_SAMPLES_FOR_INTERVAL, is_min_max
from pytest_specperf.results.verdict_report import interval_text, verdict_markdown


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
    measured = [p for p in points if p.server_cpu is not None]
    if not measured:
        return None
    cpus = [(p.concurrency, p.server_cpu) for p in measured if p.server_cpu is not None]
    names = {cpu.process for _, cpu in cpus}
    if len(names) == 1:
        shares = ", ".join(f"C={c} {cpu.share:.0%}" for c, cpu in cpus)
        text = f"server CPU: {names.pop()} at {shares} of one core"
    else:
        shares = ", ".join(f"C={c} {cpu.process} {cpu.share:.0%}" for c, cpu in cpus)
        text = f"server CPU, the busiest process of one core: {shares}"
    if any(cpu.share > 1 for _, cpu in cpus):
        text += " (over 100%: the process has more than one busy thread)"
    waits = [(c, cpu.gpu_wait) for c, cpu in cpus if cpu.gpu_wait is not None]
    if waits:
        text += (
            "; of which waiting for the GPU (py-spy, in torch's CUDA synchronize): "
            + ", ".join(f"C={c} {wait:.0%}" for c, wait in waits)
        )
    bound = [p.concurrency for p in measured if follows_its_core(p.server_cpu, p.bound)]
    # A full core beside a GPU busy 90% or more is the scheduler waiting on the GPU.
    waiting = [
        p.concurrency
        for p in measured
        if p.bound == "gpu-bound" and p.server_cpu is not None and p.server_cpu.cpu_bound
    ]
    if waiting:
        text += (
            f"; gpu-bound at {', '.join(f'C={c}' for c in waiting)} (the GPU busy "
            f"{GPU_BUSY_SHARE:.0%} or more: the scheduler's core reads full while it spins "
            "waiting for the GPU)"
        )
    if not bound:
        return text
    where = (
        "at every point"
        if len(bound) == len(measured)
        else "at " + ", ".join(f"C={c}" for c in bound)
    )
    less = " less its wait for the GPU" if waits else ""
    text = (
        f"{text}; CPU-bound {where} (at {CPU_BOUND_SHARE:.0%} of a core or more{less}): "
        f"{CPU_BOUND_MEANING}"
    )
    speeds = [
        sample.server_cpu.core_speed
        for point in points
        for sample in point.all_samples()
        if sample.server_cpu is not None and sample.server_cpu.core_speed is not None
    ]
    if speeds:
        text += f"; {core_speeds_note(speeds, counted(len(speeds), 'sample'))}"
    return text


def gpu_line(points: Sequence[PointMetrics]) -> str | None:
    """``GPU (NVML every 0.2 s): SM clock 1,980 MHz, 650 W; bound: GPU busy >= 90% ...``"""
    read = [p.gpu for p in points if p.gpu is not None]
    if not read and not any(p.bound for p in points):
        return None
    parts = []
    if read:
        clocks = [g.sm_clock_mhz for g in read if g.sm_clock_mhz is not None]
        power = [g.power_w for g in read if g.power_w is not None]
        figures = []
        if clocks:
            figures.append(f"SM clock {_span(clocks, '{:,.0f}')} MHz")
        if power:
            figures.append(f"{_span(power, '{:,.0f}')} W")
        parts.append(
            f"GPU busy: NVML's utilization read every {read[0].interval_s:g} s during each "
            f"sample" + (f" ({', '.join(figures)})" if figures else "")
        )
    parts.append(
        f"bound: gpu-bound where the GPU was busy {GPU_BUSY_SHARE:.0%} or more (whatever the "
        f"server's CPU read: SGLang's scheduler spins on the GPU while it waits), else "
        f"cpu-bound where the server's busiest process held {CPU_BOUND_SHARE:.0%} of a core or "
        f"more (less its wait for the GPU where py-spy read it), else mixed"
    )
    return "; ".join(parts)


def _span(values: Sequence[float], form: str) -> str:
    low, high = min(values), max(values)
    if round(low) == round(high):
        return form.format(low)
    return f"{form.format(low)}-{form.format(high)}"


def depth_table(run: DepthRun) -> Table:
    """The depth's seed table (medians with intervals when repeated), the notes its rows
    need, and each boot's warm-up."""
    points = sorted(run.points, key=lambda p: p.concurrency)
    header, rows = point_table(run)
    notes = [
        f"{point.key}: {note}"
        for point in [*points, *run.rate_points]
        for note in point_notes(run, point)
    ]
    min_max = min_max_note([run])
    if min_max:
        notes.append(min_max)
    cpu = server_cpu_line(points)
    if cpu:
        notes.append(cpu)
    gpu = gpu_line(points)
    if gpu:
        notes.append(gpu)
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
    rows.append(["accept length"] + [_accept_length_cell(run) for run in ordered])
    return header, rows


def _accept_length_cell(run: DepthRun) -> str:
    """The run's accept length over its closed-loop points; a run of open-loop points only (a
    trace's replay, request rates) has its accept length from those, and says so."""
    open_loop = run.open_loop_accept_length
    if run.accept_length is not None or open_loop is None:
        return number(run.accept_length, 2)
    return f"{open_loop:.2f} (open loop)"


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
    blocks += [table.text() for table in open_loop_tables(runs, slo)]
    if recommendation is not None:
        blocks.append(recommendation_text(recommendation))
    return "\n\n".join(blocks)


# -- markdown (report.md, CI job summary) ------------------------------------------------------
UNKNOWN = "unknown"


@dataclass(frozen=True)
class ReportContext:
    """Everything a markdown section may show; built once per report."""

    runs: Sequence[DepthRun]
    started_at: str | None = None
    run_id: str | None = None
    tool_version: str | None = None
    tested_commit: str | None = None
    # How the run ended (RunResults.exit_status, exit_reasons, exit_notes, interrupted): the
    # verdict section never reads green, nor "no verdicts recorded", under a red run, nor
    # only that under an exploratory one.
    exit_status: int | None = None
    exit_reasons: Sequence[str] = ()
    exit_notes: Sequence[str] = ()
    interrupted: str | None = None
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


def _with_interval(value: float | None, interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return number(value, digits)
    return f"{number(value, digits)} {interval_text(interval, digits)}"


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


def verdict_section(context: ReportContext) -> str:
    """The gate's verdicts (results/verdict_report.py), under how the run ended."""
    return verdict_markdown(
        context.runs,
        ab=context.ab,
        exit_status=context.exit_status,
        exit_reasons=context.exit_reasons,
        interrupted=context.interrupted,
        exit_notes=context.exit_notes,
    )


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
        str(point.concurrency) if point.load is None else point.key,
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
    if running is not None and point.load is None and point.concurrency > running:
        notes.append(
            f"C={point.concurrency} exceeds the server's max_running_requests ({running}): "
            f"{point.concurrency - running} requests wait in its queue at a time, so TTFT and "
            "e2e include queueing"
        )
    return notes


def point_table(run: DepthRun) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a depth's table (medians with intervals when repeated); its
    open-loop points (C column: their load) after the closed-loop ones."""
    points = [*sorted(run.points, key=lambda p: p.concurrency), *run.rate_points]
    repeated = any(len(p.samples) > 1 or p.intervals for p in points)
    level = _level_text(_interval_level([run]))
    header = (
        [cell.format(level=level) for cell in MD_REPEATED_HEADER]
        if repeated
        else list(MD_SEED_HEADER)
    )
    rows = [_md_point_row(p, repeated) for p in points]
    if any(p.gpu is not None or p.bound is not None for p in points):
        header += list(BOUND_HEADER)
        rows = [[*row, *_bound_cells(p)] for row, p in zip(rows, points, strict=True)]
    return header, rows


# Shown where a point's GPUs were read (a real server on this machine) or its bound is known.
BOUND_HEADER = ("GPU busy", "Server CPU", "Bound")


def _bound_cells(point: PointMetrics) -> list[str]:
    """``93% (50-99%)``, the scheduler's share of a core, ``gpu-bound`` (``-``: not read)."""
    gpu = point.gpu
    busy = (
        "-"
        if gpu is None
        else f"{gpu.busy:.0%} ({gpu.busy_low * 100:.0f}-{gpu.busy_high * 100:.0f}%)"
    )
    server = point.server_cpu
    cpu = "-" if server is None else f"{server.share:.0%}"
    if server is not None and server.gpu_wait is not None:
        cpu += f" (GPU wait {server.gpu_wait:.0%})"
    return [busy, cpu, point.bound or "-"]


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


def open_loop_section(context: ReportContext) -> str | None:
    tables = open_loop_tables(context.runs, context.slo)
    return "\n\n".join(table.markdown(level=2) for table in tables) or None


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
    open_loop_section,
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
