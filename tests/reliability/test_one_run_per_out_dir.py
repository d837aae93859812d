"""Issue 34, case 2: two runs started 0.5 s apart with one --specperf-out.

Before, both exited 0 and left one results.json holding a point of each. Now the run that
comes second finds the first's lock and stops before it boots anything, with one line that
names the first run; the first run's files are whole and only its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.reliability.suite_runs import (
    FOREGROUND,
    prepare_workdir,
    start_in,
    suite_env,
    wait_for_leftovers,
)
from tests.support.e2e import FAST_ARGS_WITH_PLOTS

SHORT = [
    "--spec-steps=3",
    "--specperf-concurrency=4",
    "--specperf-max-new-tokens=32",
    "--specperf-out=shared-out",
]


def _start(workdir: Path, tag: str, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    output = workdir / f"{name}.txt"
    argv = [sys.executable, "-c", FOREGROUND, "perf_tests", *FAST_ARGS_WITH_PLOTS, *SHORT]
    with open(output, "wb") as handle:
        return start_in(workdir, argv, suite_env(workdir, tag), handle), output


def test_a_second_run_into_the_same_out_dir_is_refused_before_boot(tmp_path: Path) -> None:
    workdir = prepare_workdir(tmp_path / "project")
    tag = uuid.uuid4().hex
    first, first_out = _start(workdir, tag, "first")
    time.sleep(0.5)
    second, second_out = _start(workdir, tag, "second")
    try:
        codes = [first.wait(timeout=150), second.wait(timeout=150)]
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert wait_for_leftovers(tag) == []
    outputs = [first_out.read_text(errors="replace"), second_out.read_text(errors="replace")]
    # Either may win the race to the lock (pytest's start-up time varies on a busy machine);
    # exactly one measures, the other is refused as a usage error.
    assert sorted(codes) == [0, pytest.ExitCode.USAGE_ERROR], outputs
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    winner_pid = (first, second)[winner].pid
    refusal = [line for line in outputs[loser].splitlines() if "another run" in line]
    assert len(refusal) == 1, outputs[loser]
    assert f"--specperf-out {workdir / 'shared-out'}: another run is writing there" in refusal[0]
    assert f"pid {winner_pid}, started " in refusal[0]
    assert "--specperf-out=shared-out" in refusal[0]  # the other run's command
    assert "Traceback" not in outputs[loser]
    assert "passed" not in outputs[loser]  # nothing ran, nothing booted
    # The out dir holds the winner's run alone: one server log, no moved-aside results.
    out = workdir / "shared-out"
    files = sorted(p.name for p in out.iterdir())
    assert "results.previous.json" not in files, files
    assert [f for f in files if f.startswith("server-")] == ["server-steps3.log"], files
    results = json.loads((out / "results.json").read_text())
    assert [[p["concurrency"] for p in run["points"]] for run in results["runs"]] == [[4]]
