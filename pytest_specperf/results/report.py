"""Terminal and markdown reports from results: the seed's table per depth and the trade-off.

The terminal summary is plain text (``full_report``). report.md is markdown built from a list
of section renderers (``MARKDOWN_SECTIONS``): each takes a ``ReportContext`` and returns a
block of markdown, or None to leave itself out. A new section is one function appended (or
inserted) there; nothing else needs to change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_specperf.measure.client_health import fell_behind
from pytest_specperf.results.schema import DepthRun, Interval, PointMetrics, Verdict

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


def full_report(runs: Sequence[DepthRun]) -> str:
    blocks = [seed_table(run) for run in sorted(runs, key=lambda r: r.depth)]
    if len(runs) > 1:
        blocks.append(tradeoff_table(runs))
    return "\n\n".join(blocks)


# -- markdown (report.md, CI job summary) ------------------------------------------------------
UNKNOWN = "unknown"
# Verdicts are listed in this order: what needs attention first.
VERDICT_ORDER = ("regression", "improvement", "pass", "recorded", "no-baseline", "unjudged")
METRIC_LABELS = {
    "agg_tok_s": "agg tok/s",
    "per_req_tok_s": "per-req tok/s",
    "accept_length": "accept length",
    "max_total_num_tokens": "KV tokens",
    "max_running_requests": "max running requests",
}


@dataclass(frozen=True)
class Plot:
    """A picture written beside report.md; ``file`` is relative to report.md."""

    title: str
    file: str


@dataclass(frozen=True)
class ReportContext:
    """Everything a markdown section may show; built once per report."""

    runs: Sequence[DepthRun]
    started_at: str | None = None
    run_id: str | None = None
    tool_version: str | None = None
    tested_commit: str | None = None
    plots: Sequence[Plot] = ()
    # Images embedded (report.md beside its PNGs) or only named (a CI job summary, which
    # cannot show files of the job's artifacts).
    embed_plots: bool = True
    notes: Sequence[str] = field(default_factory=tuple)

    @property
    def ordered_runs(self) -> list[DepthRun]:
        return sorted(self.runs, key=lambda run: run.depth)


Section = Callable[[ReportContext], str | None]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table (cells escaped; numbers right-aligned by the caller)."""
    lines = [
        "| " + " | ".join(_md_cell(cell) for cell in header) + " |",
        "|" + "|".join(" --- " for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _distinct(values: Sequence[str | None]) -> str:
    seen = [value for value in dict.fromkeys(values) if value]
    return ", ".join(seen) if seen else UNKNOWN


def _interval_text(interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return "-"
    return f"[{_num(interval.low, digits)}, {_num(interval.high, digits)}] ({interval.level:.0%})"


def _with_interval(value: float | None, interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return _num(value, digits)
    return f"{_num(value, digits)} {_interval_text(interval, digits)}"


def run_section(context: ReportContext) -> str:
    runs = context.ordered_runs
    versions = [run.server.version if run.server else None for run in runs]
    items = [
        ("profile", _distinct([run.profile for run in runs])),
        ("hardware", _distinct([run.hardware for run in runs])),
        ("backend", _distinct([run.backend for run in runs])),
        ("SGLang version", _distinct(versions)),
        ("depths", ", ".join(str(run.depth) for run in runs) or "-"),
        ("tested commit", context.tested_commit or UNKNOWN),
        ("started", context.started_at or UNKNOWN),
        ("run id", context.run_id or UNKNOWN),
        ("pytest-specperf", context.tool_version or UNKNOWN),
    ]
    lines = ["## Run", ""] + [f"- **{name}**: {value}" for name, value in items]
    lines += [f"- {note}" for note in context.notes]
    return "\n".join(lines)


def _verdict_where(verdict: Verdict) -> str:
    where = f"steps={verdict.depth}"
    return where if verdict.concurrency is None else f"{where} C={verdict.concurrency}"


def _verdict_order(verdict: Verdict) -> tuple[int, int, int, str]:
    rank = VERDICT_ORDER.index(verdict.outcome) if verdict.outcome in VERDICT_ORDER else 99
    return rank, verdict.depth, verdict.concurrency or 0, verdict.metric


_PLURALS = {"regression": "regressions", "improvement": "improvements", "pass": "passes"}
# Shown in full; the other outcomes are folded under a <details> toggle.
_ATTENTION = ("regression", "improvement")


def _verdict_rows(verdicts: Sequence[Verdict]) -> str:
    header = ["outcome", "point", "metric", "measured", "interval", "floor", "baseline", "note"]
    rows = []
    for v in verdicts:
        digits = 2 if v.metric == "accept_length" else 1
        rows.append(
            [
                f"**{v.outcome}**" if v.outcome == "regression" else v.outcome,
                _verdict_where(v),
                METRIC_LABELS.get(v.metric, v.metric),
                _num(v.measured, digits),
                _interval_text(v.interval, digits),
                _num(v.floor, digits),
                _num(v.baseline, digits),
                v.message.splitlines()[0] if v.message else "",
            ]
        )
    return md_table(header, rows)


def verdict_section(context: ReportContext) -> str:
    verdicts = sorted((v for run in context.runs for v in run.verdicts), key=_verdict_order)
    if not verdicts:
        return "## Verdict\n\nno verdicts recorded"
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
    summary = ", ".join(
        f"{count} {outcome if count == 1 else _PLURALS.get(outcome, outcome)}"
        for outcome, count in counts.items()
    )
    if counts.get("regression"):
        summary = f"**{summary}**"
    blocks = ["## Verdict", summary]
    attention = [v for v in verdicts if v.outcome in _ATTENTION]
    rest = [v for v in verdicts if v.outcome not in _ATTENTION]
    if attention:
        blocks.append(_verdict_rows(attention))
    if rest:
        # A blank line after <summary> lets GitHub render the table inside the toggle.
        blocks.append(
            f"<details><summary>{len(rest)} other verdicts (pass, recorded, ...)</summary>\n\n"
            f"{_verdict_rows(rest)}\n\n</details>"
        )
    return "\n\n".join(blocks)


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


def _md_point_row(point: PointMetrics) -> list[str]:
    ttft = f"{_ms(point.ttft_s.p50)}/{_ms(point.ttft_s.p99)}" if point.ttft_s else "-"
    return [
        str(point.concurrency),
        _with_interval(point.agg_tok_s, point.intervals.get("agg_tok_s")),
        _with_interval(point.per_req_tok_s, point.intervals.get("per_req_tok_s")),
        f"{point.tokens:,}",
        f"{point.wall_s:.1f}",
        f"{point.ok}/{point.requests}",
        ttft,
        _with_interval(point.accept_length, point.intervals.get("accept_length"), 2),
    ]


def _point_notes(point: PointMetrics) -> list[str]:
    notes = []
    behind = fell_behind(point.client)
    if behind:
        notes.append(behind)
    if point.client_bound:
        notes.append(f"client-bound: {point.client_bound}")
    notes += [f"cannot be true: {problem}" for problem in point.truth_problems]
    if point.errors:
        notes.append(
            "failures: " + ", ".join(f"{why}: {n}" for why, n in sorted(point.errors.items()))
        )
    return [f"- C={point.concurrency}: {note}" for note in notes]


def depth_markdown(run: DepthRun) -> str:
    lines = [f"### steps={run.depth}", "", depth_heading(run), ""]
    points = sorted(run.points, key=lambda p: p.concurrency)
    if points:
        lines.append(md_table(MD_SEED_HEADER, [_md_point_row(p) for p in points]))
    else:
        lines.append("(no point measured)")
    notes = [note for point in points for note in _point_notes(point)]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def depth_tables_section(context: ReportContext) -> str:
    blocks = [depth_markdown(run) for run in context.ordered_runs]
    return "## Results per depth\n\n" + "\n\n".join(blocks)


def tradeoff_section(context: ReportContext) -> str | None:
    runs = context.ordered_runs
    if len(runs) < 2:
        return None
    header = ["C"] + [f"steps={run.depth} agg / per-req tok/s" for run in runs]
    rows = []
    for concurrency in sorted({p.concurrency for run in runs for p in run.points}):
        cells = [str(concurrency)]
        for run in runs:
            point = run.point(concurrency)
            cells.append(
                "-" if point is None else f"{_num(point.agg_tok_s)} / {_num(point.per_req_tok_s)}"
            )
        rows.append(cells)
    kv_row = ["KV"]
    for run in runs:
        server = run.server
        tokens = server.max_total_num_tokens if server else None
        running = server.max_running_requests if server else None
        kv_row.append(f"{_int(tokens)} tokens, {_int(running)} running")
    rows.append(kv_row)
    rows.append(["accept length"] + [_num(run.accept_length, 2) for run in runs])
    return "## Speculation depth trade-off\n\n" + md_table(header, rows)


def plots_section(context: ReportContext) -> str | None:
    if not context.plots:
        return None
    if context.embed_plots:
        lines = [f"![{plot.title}]({plot.file})" for plot in context.plots]
        return "## Plots\n\n" + "\n\n".join(lines)
    names = ", ".join(f"`{plot.file}` ({plot.title})" for plot in context.plots)
    return f"## Plots\n\nIn the run's artifacts, beside report.md: {names}"


# The report, top to bottom. Other parts of the suite add their sections here.
MARKDOWN_SECTIONS: list[Section] = [
    run_section,
    verdict_section,
    depth_tables_section,
    tradeoff_section,
    plots_section,
]

REPORT_TITLE = "# pytest-specperf results"


def markdown_report(context: ReportContext) -> str:
    blocks = [REPORT_TITLE]
    for section in MARKDOWN_SECTIONS:
        block = section(context)
        if block:
            blocks.append(block.strip())
    return "\n\n".join(blocks) + "\n"
