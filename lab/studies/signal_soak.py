"""Soak: SIGINT or SIGTERM at many seeded moments of real runs of the shipped suite (simulator).

    python lab/studies/signal_soak.py --signals 300 --seed 1

Runs ``pytest perf_tests/test_throughput.py`` on the simulator with short points and
--specperf-update-baselines, again and again, each signalled at a random delay after one of the
moments a sender can see (tests/support/signal_moments.py TRIGGERS: header, results.json
created, server ready, first point, every point, server stopped, report printed; then up to 4
more times at short gaps: its teardown, hurried), until --signals were sent. Prints the signals
sent, lost (a signalled run that did not exit 2), baselines written by interrupted runs, orphan
processes, unreadable or unmarked results.json, and where the first signals landed. Exit status
1 if anything went wrong. The CI version (50 signals):
tests/reliability/test_signal_moments.py.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's tests/

from tests.support.signal_moments import (
    Outcome,
    clean_run_seconds,
    moments,
    run_moment,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=300, help="signals to send in all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--at-once", type=int, default=2, help="runs at the same time")
    parser.add_argument("--strata", type=int, default=21, help="runs per seed")
    args = parser.parse_args()
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="specperf-signal-soak-"))
    span_s, status, baselines = clean_run_seconds(root / "clean")
    print(f"uninterrupted run (control): {span_s:.1f} s, exit {status}, baselines {baselines}")
    outcomes: list[Outcome] = []
    seed = args.seed
    with ThreadPoolExecutor(args.at_once) as pool:
        while sum(o.signals_sent for o in outcomes) < args.signals:
            batch = moments(args.strata, seed, most_signals=5)
            for start in range(0, len(batch), args.at_once):
                group = batch[start : start + args.at_once]
                dirs = [root / f"s{seed}-m{m.index}" for m in group]
                for outcome in pool.map(run_moment, group, dirs):
                    outcomes.append(outcome)
                    mark = "ok" if not outcome.problems() else "; ".join(outcome.problems())
                    print(f"{outcome.describe()}: exit {outcome.returncode}: {mark}", flush=True)
                if sum(o.signals_sent for o in outcomes) >= args.signals:
                    break
            seed += 1
    report(outcomes, time.monotonic() - started, root)
    return 1 if any(o.problems() for o in outcomes) else 0


def report(outcomes: list[Outcome], wall_s: float, root: Path) -> None:
    signalled = [o for o in outcomes if o.sent]
    print()
    print(f"runs: {len(outcomes)} ({len(signalled)} signalled; the others ended first)")
    print(f"signals sent: {sum(o.signals_sent for o in outcomes)}")
    lost = sum(o.returncode != 2 for o in signalled)
    print(f"lost (a signalled run that did not exit 2): {lost}")
    print(f"baselines written by interrupted runs: {sum(bool(o.baselines) for o in signalled)}")
    orphans = sum(len(o.leftovers) for o in signalled)
    print(f"orphans (processes of a run alive after it): {orphans}")
    unreadable = sum("unreadable" in (o.results_problem or "") for o in signalled)
    print(f"results.json unreadable: {unreadable}")
    other = sum(
        bool(o.results_problem) and "unreadable" not in (o.results_problem or "") for o in signalled
    )
    print(f"results.json lost, unmarked or naming a measured point: {other}")
    print("first signals by phase:")
    for phase, count in collections.Counter(o.phase for o in signalled).most_common():
        print(f"  {phase}: {count}")
    print(f"wall: {wall_s / 60:.1f} min; runs kept in {root}")


if __name__ == "__main__":
    sys.exit(main())
