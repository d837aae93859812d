"""The estimate a bisection says before its first step."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_specperf.cli.bisect import suite_settings
from pytest_specperf.run.bisect.bisection import plan_line

SEED_CLASS = [
    "--spec-steps=3",
    "--specperf-backend=sglang",
    "--specperf-profile=qwen3-next-real-width-fp8-mtp",
    "--specperf-concurrency=64",
    "--specperf-max-new-tokens=256",
]


def test_a_first_run_takes_one_first_boot_and_later_ones_at_the_profiles_figures(
    tmp_path: Path,
) -> None:
    settings = replace(suite_settings(SEED_CLASS, tmp_path), ab_max_pairs=16)
    line = plan_line(settings, 8)
    assert line.startswith("8 commit(s) after good: at most 5 steps (the range, 3 to search")
    # A step of 3 pairs: 6 boots, 240 s + 5 x 90 s, and 6 warm-ups and 6 samples at their
    # least (no baseline: 6 s and 2.5 s): 741 s; of 16 pairs, 32 boots: 3,302 s. Five steps
    # boot first once: 4 x 150 s less.
    assert line.endswith(
        "about 3,105 to 15,910 server-seconds (at least: no baseline gives the speed) (the "
        "first boot at 240 s, the later ones at 90 s, profile qwen3-next-real-width-fp8-mtp)"
    )


def test_a_rerun_takes_the_pace_of_the_pairs_in_its_log(tmp_path: Path) -> None:
    settings = replace(suite_settings(SEED_CLASS, tmp_path), ab_max_pairs=16)
    line = plan_line(settings, 8, [180.0, 190.0])
    # 5 steps of 3 to 16 pairs at 185 s a pair.
    assert line.endswith(
        "each 3 to 16 pairs of boots: about 2,775 to 14,800 server-seconds in all, at the "
        "185 s a pair of the 2 pair(s) in the pair log (measured: 370 server-seconds)"
    )
