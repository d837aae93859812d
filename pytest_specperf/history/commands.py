"""``specperf history show | changes | plot | site | red-range | export | import``: the store
from the CLI."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.changes import DetectionSettings
from pytest_specperf.history.plots import have_matplotlib, write_trend_plots
from pytest_specperf.history.report import HistoryFindings, findings, text_lines
from pytest_specperf.history.rows import SGLANG_GIT_HASH_ENV, RunContext
from pytest_specperf.history.site import build_site, repo_url_from_env
from pytest_specperf.history.store import DEFAULT_HISTORY, HistoryStore
from pytest_specperf.history.transfer import (
    export_benchmark_action,
    export_csv,
    import_results,
)
from pytest_specperf.results.formats import counted

HISTORY_ENV = "SPECPERF_HISTORY"  # also the default of pytest's --specperf-history
DEFAULT_PLOT_DIR = Path(".specperf") / "trends"
_DEFAULTS = DetectionSettings()


def add_history_commands(commands: Any) -> None:
    history = commands.add_parser("history", help="the history store: runs, change points, plots")
    actions = history.add_subparsers(dest="action", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
        parser.add_argument(
            "--history",
            default=None,
            help=f"store: a file path or a database URL (default: ${HISTORY_ENV}, else "
            f"{DEFAULT_HISTORY})",
        )
        return parser

    show = action("show", "the runs in the store, newest last")
    show.add_argument("--last", type=int, default=20, help="how many runs (default: 20)")
    for name, text in (
        ("changes", "change points per series, with their first run and attribution"),
        ("plot", "trend plots: nightly medians, intervals, change points"),
        ("site", "a static site: cards per series, a page per series, speculation over time"),
    ):
        parser = action(name, text)
        parser.add_argument(
            "--kind",
            default="nightly",
            help="runs of this kind only (nightly, pr, calibration, run; 'all': every kind; "
            "default: nightly)",
        )
        parser.add_argument(
            "--penalty",
            type=float,
            default=_DEFAULTS.penalty,
            help="PELT's penalty per change point, in units of the series' noise: higher "
            f"finds fewer (default: {_DEFAULTS.penalty:g})",
        )
        parser.add_argument(
            "--min-effect",
            type=float,
            default=_DEFAULTS.min_effect,
            help="smallest relative change reported, e.g. 0.03 = 3%% "
            f"(default: {_DEFAULTS.min_effect:g})",
        )
        parser.add_argument(
            "--alpha",
            type=float,
            default=_DEFAULTS.alpha,
            help="significance of the test each change point must pass "
            f"(default: {_DEFAULTS.alpha:g})",
        )
        parser.add_argument(
            "--min-size",
            type=int,
            default=_DEFAULTS.min_size,
            help=f"fewest runs on each side of a change point (default: {_DEFAULTS.min_size})",
        )
    changes = actions.choices["changes"]
    changes.add_argument(
        "--fail-on-new",
        action="store_true",
        help="exit 1 when the newest run brings a change point (and fail when the store holds "
        "no complete run of --kind)",
    )
    plot = actions.choices["plot"]
    plot.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_PLOT_DIR,
        help=f"folder of the PNG files (default: {DEFAULT_PLOT_DIR})",
    )
    plot.add_argument("--all", action="store_true", help="every series, not only changed ones")
    site = actions.choices["site"]
    site.add_argument("--out", type=Path, default=Path("specperf-site"), help="the site's folder")
    site.add_argument(
        "--repo-url",
        default=None,
        help="the tested repository (https://github.com/OWNER/NAME), for commit links "
        "(default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY where set)",
    )
    red = action(
        "red-range",
        "the newest run if red, and the last green run before it: the range specperf bisect "
        "takes (prints good=SHA and bad=SHA)",
    )
    red.add_argument("--kind", default="nightly", help="runs of this kind (default: nightly)")
    red.add_argument(
        "--commit",
        choices=("tested", "sglang"),
        default="tested",
        help="which commit of each run: the tested checkout's, or SGLang's "
        f"(${SGLANG_GIT_HASH_ENV} at the run; default: tested)",
    )
    export = action("export", "every run as CSV or as github-action-benchmark data")
    export.add_argument(
        "--format",
        choices=("csv", "benchmark-action"),
        default="csv",
        help="csv: a row per point; benchmark-action: github-action-benchmark's JSON "
        "(default: csv)",
    )
    export.add_argument("--output", type=Path, default=None, help="file (default: stdout)")
    imports = action("import", "add the runs of earlier results.json files (creates the store)")
    imports.add_argument("files", nargs="+", type=Path, help="results.json files")
    imports.add_argument("--kind", default=None, help="the runs' kind (default: from the run)")
    imports.add_argument(
        "--run-profile", default=None, help="the runs' run profile (default: from the run)"
    )


def history_target(given: str | None) -> str:
    return given or os.environ.get(HISTORY_ENV) or DEFAULT_HISTORY


def _settings(args: argparse.Namespace) -> DetectionSettings:
    if args.min_size < 1 or args.penalty <= 0 or not 0 < args.alpha < 1 or args.min_effect < 0:
        raise SpecperfError(
            "history: --min-size >= 1, --penalty > 0, 0 < --alpha < 1, --min-effect >= 0"
        )
    return DetectionSettings(args.penalty, args.min_size, args.alpha, args.min_effect)


def _kind(store: HistoryStore, args: argparse.Namespace) -> str | None:
    """--kind as the readers take it (None: all); a kind the store does not hold is an
    error listing those it does, so a step pointed at the wrong store is never green."""
    kind = None if args.kind == "all" else args.kind
    present = store.kinds()
    if kind is not None and kind not in present:
        raise SpecperfError(
            f"history {args.action}: --kind {kind}: no run of that kind in {store.name}; "
            f"kinds there: {', '.join(present) or 'none (the store holds no run)'}"
        )
    return kind


def _findings(store: HistoryStore, args: argparse.Namespace) -> HistoryFindings:
    kind = _kind(store, args)
    if getattr(args, "fail_on_new", False) and not any(
        kind is None or run["kind"] == kind for run in store.runs(complete_only=True)
    ):
        runs = f"{kind} run" if kind else "run"
        raise SpecperfError(
            f"history changes --fail-on-new: no complete {runs} in {store.name}: nothing to "
            "judge (is this the store the runs record into?)"
        )
    return findings(store, _settings(args), kind)


def _show(store: HistoryStore, last: int) -> list[str]:
    runs = store.runs()[-last:] if last > 0 else store.runs()
    counts: dict[int, int] = {}
    for point in store.points([int(r["seq"]) for r in runs]):
        counts[point["run_seq"]] = counts.get(point["run_seq"], 0) + 1
    header = ["run", "kind", "status", "started", "commit", "sglang", "points"]
    rows = [[*header, "profile / hardware / workload"]]
    for run in runs:
        rows.append(
            [
                str(run["run_id"]),
                str(run["kind"]),
                str(run["status"]),
                str(run["started_at"]),
                (run["tested_commit"] or "-")[:10],
                run["sglang_version"] or "-",
                str(counts.get(run["seq"], 0)),
                f"{run['profile']} / {run['hardware']} / {run['workload']}",
            ]
        )
    return _columns(rows)


def _columns(rows: list[list[str]]) -> list[str]:
    """Rows as aligned columns: each as wide as its widest cell plus two spaces, the last free."""
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(len(rows[0]) - 1)]
    return [
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + row[-1]
        for row in rows
    ]


def red_range(store: HistoryStore, kind: str, commit: str) -> tuple[str, str]:
    """(good, bad): the commits of the last green complete run of ``kind`` and of the newest
    one, when the newest is red (its exit status not 0); else why not, as an error."""
    column = "tested_commit" if commit == "tested" else "sglang_git_hash"
    runs = [r for r in store.runs() if r["kind"] == kind and r["status"] != "incomplete"]
    if not runs:
        raise SpecperfError(f"history red-range: no finished {kind} run in {store.name}")

    def green(run: dict[str, Any]) -> bool:
        try:
            status = json.loads(run["results_json"] or "{}").get("exit_status")
        except ValueError:
            return False
        return bool(run["status"] == "complete" and status == 0)

    newest = runs[-1]
    if green(newest):
        raise SpecperfError(f"history red-range: the newest {kind} run is green: nothing to bisect")
    before = [r for r in runs[:-1] if green(r)]
    if not before:
        raise SpecperfError(f"history red-range: no green {kind} run before the newest one")
    good, bad = before[-1][column], newest[column]
    if not good or not bad:
        raise SpecperfError(
            f"history red-range: the runs did not record their {commit} commit "
            + (f"(set ${SGLANG_GIT_HASH_ENV} on the runner)" if commit == "sglang" else "")
        )
    return str(good), str(bad)


def run_history(args: argparse.Namespace) -> int:
    # Only import writes: the readers need a store that exists and change nothing in it.
    store = HistoryStore.open(history_target(args.history), read_only=args.action != "import")
    try:
        if args.action == "show":
            print("\n".join(_show(store, args.last)))
            return 0
        if args.action == "changes":
            found = _findings(store, args)
            print("\n".join(text_lines(found)))
            return 1 if args.fail_on_new and found.has_new else 0
        if args.action == "plot":
            found = _findings(store, args)
            if not have_matplotlib():
                raise SpecperfError("history plot: needs matplotlib (pip install matplotlib)")
            written = write_trend_plots(store, found, args.out, every=args.all)
            print("\n".join(str(p) for p in written) or "no series with a change point")
            return 0
        if args.action == "site":
            found_url = args.repo_url or repo_url_from_env(os.environ)
            kind = _kind(store, args)
            built = build_site(
                store, args.out, settings=_settings(args), kind=kind, repo_url=found_url
            )
            print(
                f"{built.index}: {counted(built.runs, 'run')}, "
                f"{counted(built.series, 'series page')}, {counted(built.changes, 'change point')}"
            )
            return 0
        if args.action == "red-range":
            good, bad = red_range(store, args.kind, args.commit)
            print(f"good={good}\nbad={bad}")
            return 0
        if args.action == "export":
            text = export_csv(store) if args.format == "csv" else export_benchmark_action(store)
            if args.output is None:
                print(text, end="" if text.endswith("\n") else "\n")
            else:
                args.output.write_text(text, encoding="utf-8")
            return 0
        if store.created:
            print(f"history store {store.name}: new, created empty by this import")
        context = RunContext(run_profile=args.run_profile, kind=args.kind)
        for line in import_results(store, args.files, context):
            print(line)
        return 0
    finally:
        store.close()
