"""The ``specperf`` command: the suite's pieces without pytest (``specperf --help`` shows
``DESCRIPTION`` and ``EXAMPLES``, plain text: a terminal shows no docstring markup)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_specperf import interrupts
from pytest_specperf.cli.bench import report_text, run_bench
from pytest_specperf.cli.bisect import BISECT, add_bisect_command, run_bisect_command
from pytest_specperf.config.parsers import parse_float, parse_positive_int
from pytest_specperf.config.settings import build_settings, resolve_profile_option
from pytest_specperf.config.table import BENCH, LAUNCH_CMD, OPTIONS
from pytest_specperf.errors import BaselineMismatch, SpecperfError, UsageError
from pytest_specperf.gate import review
from pytest_specperf.gate.baselines import migrate_file
from pytest_specperf.history.commands import add_history_commands, run_history
from pytest_specperf.measure.progress import LiveProgress, PointLines, StatusLine
from pytest_specperf.results.ab_comment import ab_comment_from_file
from pytest_specperf.results.run_lock import OutDirLock, this_process
from pytest_specperf.results.speedup import control_run
from pytest_specperf.results.store import PREVIOUS_RUN_DIR, REPORT_FILE, RESULTS_FILE
from pytest_specperf.server.launch import build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.profiles import available_profiles
from pytest_specperf.version import __version__

# `specperf bench --baseline` given a baseline that cannot judge the server: pytest's usage
# error status, as a run refused before it measures anything.
NOT_COMPARABLE_EXIT = 4
_REQUIRED: dict[str, frozenset[str]] = {
    LAUNCH_CMD: frozenset({"spec_steps"}),
    BENCH: frozenset({"url"}),
}


def _add_table_options(command: argparse.ArgumentParser, name: str) -> None:
    """The options of the suite's table that this subcommand takes, under the same parsers."""
    for spec in OPTIONS:
        if name not in spec.commands:
            continue
        required = spec.key in _REQUIRED[name]
        shown = "" if required or spec.default is None else f" (default: {spec.default})"
        actions = {"value": "store", "append": "append", "flag": "store_true"}
        command.add_argument(
            *spec.cli_flags(),
            dest=spec.key,
            action=actions[spec.kind],
            required=required,
            default=None,
            help=spec.help_for(name) + shown,
        )


DESCRIPTION = "The specperf command: the suite's pieces without pytest."
EXAMPLES = """\
examples:
  specperf launch-cmd --spec-steps 3            # the exact server command the fixture runs
  specperf bench --url http://127.0.0.1:30000   # the suite's sweep against a running server
  specperf profiles                             # the deployment profiles it knows
  specperf baseline show|diff|promote|merge|migrate  # read, compare, promote, merge baselines
  specperf history show|changes|plot|site|export|import  # the history store
  specperf ab-comment .specperf/results.json    # an A/B run's verdict as a pull-request comment
  specperf bisect --repo R --good G --bad B -- --specperf-profile=P  # the commit that changed it
"""


def _values(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The subcommand's table options parsed, errors named by the flag the CLI shows first."""
    return {
        spec.key: spec.value(getattr(args, spec.key), option=spec.cli_flags()[0])
        for spec in OPTIONS
        if name in spec.commands
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specperf",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    launch = commands.add_parser(LAUNCH_CMD, help="print the server command the suite would run")
    _add_table_options(launch, LAUNCH_CMD)
    launch.add_argument(
        "--host", default="127.0.0.1", help="the host the server listens on (default: 127.0.0.1)"
    )
    launch.add_argument(
        "--port", default="30000", help="the port the server listens on (default: 30000)"
    )

    bench = commands.add_parser(
        BENCH,
        help="the suite's sweep against a running server: repeats, the gate against a "
        "baseline, results.json, report.md and plots in --out",
    )
    _add_table_options(bench, BENCH)
    bench.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a baseline file (steps-N.json) to gate the throughput against",
    )

    commands.add_parser("profiles", help="list deployment profiles")
    _add_baseline_commands(commands)
    add_history_commands(commands)
    add_bisect_command(commands)
    comment = commands.add_parser(
        "ab-comment", help="an A/B run's verdict as pull-request markdown (from results.json)"
    )
    comment.add_argument("results", type=Path, help="the A/B run's results.json")
    comment.add_argument("--forest-url", default=None, help="where the forest plot is linked")
    comment.add_argument("--run-url", default=None, help="the CI run, linked at the end")
    return parser


def _add_baseline_commands(commands: Any) -> None:
    baseline = commands.add_parser(
        "baseline", help="show, diff, promote, merge or migrate baselines"
    )
    actions = baseline.add_subparsers(dest="action", required=True)
    show = actions.add_parser("show", help="a baseline's figures, noise and provenance")
    show.add_argument("path", type=Path, help="a baseline file (steps-N.json)")
    show.add_argument(
        "--samples",
        type=_samples,
        default=3,
        help="samples a point of the run whose floor it works out (default 3: the seed-class "
        "nightly's; --specperf-repeats of your run)",
    )
    diff = actions.add_parser(
        "diff", help="compare two baselines, or a baseline and a run's results.json"
    )
    diff.add_argument("old", type=Path, help="baseline file or results.json")
    diff.add_argument("new", type=Path, help="baseline file or results.json")
    promote = actions.add_parser(
        "promote", help="write a reviewed run's results.json as the baseline of its key"
    )
    promote.add_argument("results", type=Path, help="the run's results.json")
    promote.add_argument(
        "--specperf-baselines",
        "--baselines",
        dest="baselines",
        type=Path,
        default=Path("baselines"),
        help="baselines directory (default: baselines)",
    )
    promote.add_argument(
        "--tolerance",
        default=None,
        help="explicit throughput tolerance (default: the replaced baseline's, else 0.10)",
    )
    promote.add_argument(
        "--force",
        action="store_true",
        help="promote a run the gate judged a regression, a depth of an A/B run (whatever "
        "its outcome), or one that would downgrade the baseline (fewer boots or samples, "
        "another workload or sweep)",
    )
    promote.add_argument(
        "--dry-run",
        action="store_true",
        help="print the diff against the current baseline; write nothing",
    )
    for command in (diff, promote):
        command.add_argument(
            "--spec-steps", default=None, help="the depth to take from a results.json"
        )
        command.add_argument(
            "--allow-other-hardware",
            action="store_true",
            help="compare figures of different hardware keys anyway",
        )
    merge = actions.add_parser(
        "merge",
        help="one baseline from runs of one key on several machines: its floors take the "
        "spread between them (a nightly on a fresh runner of the pool differs by that)",
    )
    merge.add_argument("results", type=Path, nargs="+", help="each machine's results.json")
    merge.add_argument(
        "--specperf-baselines",
        "--baselines",
        dest="baselines",
        type=Path,
        default=Path("baselines"),
        help="baselines directory (default: baselines)",
    )
    merge.add_argument("--spec-steps", default=None, help="the depth to take from each run")
    merge.add_argument(
        "--force",
        action="store_true",
        help="merge runs the gate judged a regression or whose session failed, or replace a "
        "baseline the merge would downgrade",
    )
    merge.add_argument(
        "--dry-run", action="store_true", help="print what it rests on and the diff; write nothing"
    )
    migrate = actions.add_parser("migrate", help="rewrite baselines in the current schema")
    migrate.add_argument("paths", type=Path, nargs="+", help="baseline files")


def _samples(raw: str) -> int:
    try:
        return parse_positive_int("--samples", raw)
    except UsageError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _depth_option(raw: str | None) -> int | None:
    return parse_positive_int("--spec-steps", raw) if raw is not None else None


def _figures(path: Path, depth: int | None) -> review.DiffSide:
    """A baseline file or a results.json, told apart by what it holds."""
    if path.name == "results.json" or _holds_runs(path):
        run = review.pick_run(review.read_results(path), depth, path)
        return review.figures_of_run(run, f"{path} steps={run.depth}")
    return review.figures_of_baseline(review.read_baseline(path), str(path))


def _holds_runs(path: Path) -> bool:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "runs" in data


def _baseline(args: argparse.Namespace) -> int:
    if args.action == "show":
        print(review.show(review.read_baseline(args.path), args.path, samples=args.samples))
        return 0
    if args.action == "diff":
        depth = _depth_option(args.spec_steps)
        old, new = _figures(args.old, depth), _figures(args.new, depth)
        print(review.diff(old, new, allow_other_hardware=args.allow_other_hardware))
        return 0
    if args.action == "promote":
        results = review.read_results(args.results)
        run = review.pick_run(results, _depth_option(args.spec_steps), args.results)
        tolerance = (
            parse_float("--tolerance", args.tolerance, low=0.0, high=0.99)
            if args.tolerance is not None
            else None
        )
        path, report = review.promote(
            run,
            args.baselines,
            results_path=args.results,
            tolerance=tolerance,
            allow_other_hardware=args.allow_other_hardware,
            control=control_run(results.runs),
            slo=results.slo,
            ab=next((c for c in results.ab if c.depth == run.depth), None),
            run_exit=review.RunExit.of(results),
            force=args.force,
            dry_run=args.dry_run,
        )
        print(report)
        if args.dry_run:
            print(f"dry run: {path} not written")
        else:
            print(f"wrote {path}: review the diff above, then commit the file")
        return 0
    if args.action == "merge":
        path, report = review.merge(
            args.results,
            args.baselines,
            depth=_depth_option(args.spec_steps),
            force=args.force,
            dry_run=args.dry_run,
        )
        print(report)
        print(
            f"dry run: {path} not written"
            if args.dry_run
            else f"wrote {path}: review the figures above, then commit the file"
        )
        return 0
    for path in args.paths:
        changed = migrate_file(path)
        print(f"{path}: {'migrated' if changed else 'already current'}")
    return 0


def _launch_cmd(args: argparse.Namespace) -> int:
    values = _values(args, LAUNCH_CMD)
    depths = values["spec_steps"]
    if len(depths) != 1:
        raise UsageError("--spec-steps: launch-cmd takes one depth")
    profile = resolve_profile_option(values["profile"], values["profile_dir"], Path.cwd())
    backend = values["backend"]
    command = build_launch(
        profile,
        depths[0],
        backend=backend,
        host=args.host,
        port=parse_positive_int("--port", args.port),
        server_args=values["server_arg"],
        model_path=str(build_model(profile.model_factory)) if profile.model_factory else None,
        sim_speedup=values["sim_speedup"] if backend == "sim" else None,
    )
    env = " ".join(f"{k}={v}" for k, v in sorted(command.env.items()))
    print(f"{env} {command.display()}" if env else command.display())
    return 0


def _bench(args: argparse.Namespace) -> int:
    """The suite's DepthSession attached to --url (pytest_specperf/cli/bench.py)."""
    _values(args, BENCH)  # a bad value is reported under the flag the CLI shows
    settings = build_settings(lambda key: getattr(args, key, None), Path.cwd())
    lock = OutDirLock(settings.out_dir, this_process(), option="--out")
    lock.acquire()  # one run per out dir: a second one is refused before it measures
    try:
        outcome = run_bench(settings, args.baseline, observer=_bench_progress())
    finally:
        lock.release()
    print(report_text(outcome.results))
    for line in outcome.notes:
        print(line)
    print(f"results: {settings.out_dir / RESULTS_FILE}  report: {settings.out_dir / REPORT_FILE}")
    if lock.set_aside:
        print(
            f"the previous run's files: {settings.out_dir / PREVIOUS_RUN_DIR} "
            f"({len(lock.set_aside)} moved there when this run began)"
        )
    for line in outcome.problems:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if outcome.problems else 0


def _bench_progress() -> LiveProgress | PointLines:
    """A status line rewritten in place on a terminal; elsewhere a line per sample."""
    if not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return PointLines(print)

    def write(text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()

    status = StatusLine(write, lambda: shutil.get_terminal_size().columns)
    return LiveProgress(status, contextlib.nullcontext)


def _profiles() -> int:
    for name, profile in sorted(available_profiles().items()):
        print(f"{name}: {profile.description} [{profile.source}]")
    return 0


def _command(args: argparse.Namespace) -> int:
    if args.command == "launch-cmd":
        return _launch_cmd(args)
    if args.command == "bench":
        return _bench(args)
    if args.command == "baseline":
        return _baseline(args)
    if args.command == "history":
        return run_history(args)
    if args.command == BISECT:
        return run_bisect_command(args)
    if args.command == "ab-comment":
        text = ab_comment_from_file(args.results, forest_url=args.forest_url, run_url=args.run_url)
        print(text, end="")
        return 0
    return _profiles()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    owns_signals = interrupts.install()
    try:
        code = _command(args)
        sys.stdout.flush()  # a closed pipe is met here, not by the interpreter at exit
        if code != interrupts.COMMAND_INTERRUPTED_STATUS:  # else it has said so itself
            interrupts.checkpoint()  # a signal swallowed on the way still ends the command
        return code
    except BaselineMismatch as exc:
        print(f"specperf: error: {exc}", file=sys.stderr)
        return NOT_COMPARABLE_EXIT
    except SpecperfError as exc:
        print(f"specperf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"specperf: interrupted ({interrupts.interrupt_name(exc)})", file=sys.stderr)
        return interrupts.COMMAND_INTERRUPTED_STATUS
    except BrokenPipeError:
        return _reader_gone()
    finally:
        if owns_signals:
            interrupts.ending()
            interrupts.uninstall()


def _reader_gone() -> int:
    """stdout's reader closed it (``specperf history export | head``): end quietly, as a Unix
    tool killed by SIGPIPE does, with nothing left for Python to flush at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
