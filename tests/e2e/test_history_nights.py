"""A few tiny nights on the simulator into one history store (lab/studies/nightly_demo.py,
shortened): a slowdown from night 4 is named by night 4 and attributed to step time.

Tiny nights (0.2 s points) on a loaded machine drift by about 5% from night to night, so the
slowdown here is large (50%), and 3 nights a side (with 2 before it, the Welch test has about
one degree of freedom); the 5% of the issue's done-when is the full demo's job. No warm-up:
the simulator has no cold shapes unless told (as in CI's perf step)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_in_repo, run_slowdown_nights


def test_a_slowdown_from_night_4_is_named_by_night_4(tmp_path: Path) -> None:
    done = run_slowdown_nights(
        tmp_path, "--depths=3", "--concurrency=4", "--warmup-rounds=0", timeout=900
    )
    assert "PASS: every change point names night04" in done.stdout, done.stdout + done.stderr
    assert "PASS: attribution 'step time'" in done.stdout
    # The store keeps every night, each complete, with its tested commit.
    shown = run_in_repo(
        "-m",
        "pytest_specperf.cli",
        "history",
        "show",
        "--history",
        str(tmp_path / "history.sqlite"),
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    store = shown.stdout
    assert [f"night0{n}" in store for n in range(1, 7)] == [True] * 6
    assert store.count(" complete ") == 6
