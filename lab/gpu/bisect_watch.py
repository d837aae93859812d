"""Beside a running ``specperf bisect`` on a lent GPU: keep a copy of its pairs, stop it in time.

A lent machine goes back when the session's device time ends, and /tmp with it. Every pair a
bisection measures is in its history store (``<out>/history.sqlite``, SQLite in WAL mode), and
a rerun of the same command on the next machine goes on from the pairs in it. So after every
pair, and every ``--every-s``, this copies the store whole (SQLite's backup API: one file, no
WAL beside it) to ``--copy``, which the session's polls carry back. With ``--stop-after-s`` it
sends the bisection SIGTERM (which ends it as interrupted, writing what it knows) as soon as a
pair has landed after which one more would not end in time, a pair's time being the mean wall
time of the pairs this run measured (``--pair-s`` until one has). Past the deadline it stops
the bisection whatever it is doing: the pair in flight is lost, the others are kept.

    python lab/gpu/bisect_watch.py --pid PID --store OUT/history.sqlite \
        --copy STATE/history.sqlite --stop-after-s 1300 --pair-s 230
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path


def pairs_recorded(store: Path) -> int:
    """How many pairs of boots the store holds, of every bisection (0 before it exists)."""
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as store_db:
            (count,) = store_db.execute("SELECT COUNT(*) FROM bisect_pairs").fetchone()
    except sqlite3.Error:  # not made yet by the bisection's first open
        return 0
    return int(count)


def copy_store(store: Path, copy: Path) -> None:
    """The store as one consistent file at ``copy`` (replaced whole, never half written)."""
    if not store.exists():
        return
    copy.parent.mkdir(parents=True, exist_ok=True)
    partial = copy.with_name(copy.name + ".partial")
    partial.unlink(missing_ok=True)
    with (
        closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as source,
        closing(sqlite3.connect(partial)) as target,
    ):
        source.backup(target)
        # The copy keeps the store's WAL mode, under which even a reader makes side files.
        target.execute("PRAGMA journal_mode = DELETE")
    os.replace(partial, copy)


def keep_a_copy(store: Path, copy: Path) -> None:
    """copy_store, a failure said and left for the next try (the watch must go on)."""
    try:
        copy_store(store, copy)
    except (sqlite3.Error, OSError) as exc:
        print(f"bisect_watch: no copy this time: {exc}", flush=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A child that exited but was not yet reaped by its shell reads as alive: ask its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


class Deadline:
    """When to stop: after a pair, if one more would end past ``stop_after_s`` from the start."""

    def __init__(self, stop_after_s: float, pair_s: float, start: float, pairs: int) -> None:
        self.stop_after_s = stop_after_s
        self.pair_s = pair_s
        self.start = start
        self.pairs = pairs
        self.landed: list[float] = []

    def expected_pair_s(self) -> float:
        if not self.landed:
            return self.pair_s
        return (self.landed[-1] - self.start) / len(self.landed)

    def why_stop(self, now: float, pairs: int) -> str | None:
        """A line saying why the bisection is stopped now, or None to let it go on."""
        elapsed = now - self.start
        landed = pairs > self.pairs
        if landed:
            self.landed.extend([now] * (pairs - self.pairs))
            self.pairs = pairs
        if elapsed > self.stop_after_s:
            return (
                f"stopping at the deadline, {self.stop_after_s:.0f} s: the pair in flight is lost"
            )
        pair_s = self.expected_pair_s()
        if landed and elapsed + pair_s > self.stop_after_s:
            return (
                f"stopping after pair {len(self.landed)} of this run at {elapsed:.0f} s: "
                f"another of about {pair_s:.0f} s would end past {self.stop_after_s:.0f} s"
            )
        return None


def terminate(pid: int) -> bool:
    """SIGTERM to ``pid``; False when it had already ended (a bisection that ends with the pair
    the deadline would have stopped after: on 2026-12-07 the signal then raised)."""
    if not alive(pid):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    return True


def watch(
    pid: int,
    store: Path,
    copy: Path,
    *,
    every_s: float,
    deadline: Deadline | None,
    poll_s: float = 2.0,
) -> None:
    """Until ``pid`` ends: a copy after every pair and every ``every_s``, the deadline's
    SIGTERM; a last copy at the end."""
    stopped = False
    copied_at, copied_pairs = time.monotonic(), -1
    while alive(pid):
        time.sleep(poll_s)
        now, pairs = time.monotonic(), pairs_recorded(store)
        if pairs != copied_pairs or now - copied_at >= every_s:
            keep_a_copy(store, copy)
            copied_at, copied_pairs = now, pairs
        if deadline is None or stopped:
            continue
        why = deadline.why_stop(now, pairs)
        if why is not None:
            stopped = True
            if terminate(pid):
                print(f"bisect_watch: {why}", flush=True)
    keep_a_copy(store, copy)
    print(f"bisect_watch: {pairs_recorded(copy)} pair(s) in {copy}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pid", type=int, required=True, help="the specperf bisect process")
    parser.add_argument("--store", type=Path, required=True, help="its history store")
    parser.add_argument("--copy", type=Path, required=True, help="where the copy goes")
    parser.add_argument("--every-s", type=float, default=15.0)
    parser.add_argument(
        "--stop-after-s", type=float, default=None, help="seconds from now (default: never)"
    )
    parser.add_argument(
        "--pair-s", type=float, default=300.0, help="a pair's time until one has been measured"
    )
    args = parser.parse_args(argv)
    deadline = None
    if args.stop_after_s is not None:
        deadline = Deadline(
            args.stop_after_s, args.pair_s, time.monotonic(), pairs_recorded(args.store)
        )
    watch(args.pid, args.store, args.copy, every_s=args.every_s, deadline=deadline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
