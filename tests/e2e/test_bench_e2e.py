"""`specperf bench` runs the suite's DepthSession against a running simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.gate.baselines import load_baseline, save_baseline
from pytest_specperf.server.process import inject_slowdown
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.support.sim import SimFactory, SimServer

SIM_ARGS = [
    "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3",
    "--sim-speedup", "20",
]  # fmt: skip
FAST = ["--concurrency", "1,2", "--max-new-tokens", "60", "--min-point-seconds", "0"]


def bench(url: str, out: Path, *extra: str) -> int:
    return main(["bench", "--url", url, *FAST, "--repeats", "2", "--out", str(out), *extra])


def results(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "results.json").read_text())
    return loaded


@pytest.fixture
def server(sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimServer:
    """A simulator at depth 2, the test running in its tmp_path."""
    monkeypatch.chdir(tmp_path)
    return sim(SIM_ARGS)


def test_bench_writes_the_suites_artifacts_with_every_repeat(
    server: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--repeats 2 --out DIR: results.json with 2 samples per point, report.md beside it; not
    on a terminal, each sample's progress is a line of its own as it is done."""
    assert bench(server.url, tmp_path / "out") == 0
    progress = [line for line in capsys.readouterr().out.splitlines() if " requests, " in line]
    assert [line.split(":")[0] for line in progress] == ["steps=2 C=1", "steps=2 C=2"] * 2
    run = results(tmp_path / "out")["runs"][0]
    assert run["depth"] == 2 and run["status"] == "complete"
    assert [(p["concurrency"], len(p["samples"])) for p in run["points"]] == [(1, 2), (2, 2)]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "samples per point**: 2" in report


def test_bench_gates_against_a_given_baseline(server: SimServer, tmp_path: Path) -> None:
    """A baseline promoted from one run passes the next and fails once the server slows."""
    assert bench(server.url, tmp_path / "first") == 0
    baselines = tmp_path / "baselines"
    promote = ["baseline", "promote", str(tmp_path / "first" / "results.json")]
    # A wide tolerance (floors at half the baseline): a loaded machine must not fail the pass.
    assert main([*promote, "--baselines", str(baselines), "--tolerance", "0.5"]) == 0
    (baseline,) = baselines.rglob("steps-2.json")

    assert bench(server.url, tmp_path / "same", "--baseline", str(baseline)) == 0
    verdicts = results(tmp_path / "same")["runs"][0]["verdicts"]
    assert verdicts and {v["outcome"] for v in verdicts} <= {"pass", "improvement"}

    inject_slowdown(server.url, 0.05)  # 50 ms per forward pass: far below the baseline
    assert bench(server.url, tmp_path / "slow", "--baseline", str(baseline)) == 1
    outcomes = {v["outcome"] for v in results(tmp_path / "slow")["runs"][0]["verdicts"]}
    assert "regression" in outcomes
    assert "## Verdict" in (tmp_path / "slow" / "report.md").read_text()
    assert results(tmp_path / "slow")["exit_status"] == 1
    assert results(tmp_path / "same")["exit_status"] == 0


def _shipped_at(tmp_path: Path, depth: int, **changes: Any) -> Path:
    """A copy of the shipped simulator baseline of ``depth`` (1000 tokens, C=1..64), with
    ``changes``, in a baselines directory of the test's own."""
    shipped = load_baseline(REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / f"steps-{depth}.json")
    assert shipped is not None
    return save_baseline(tmp_path / "bl", msgspec.structs.replace(shipped, **changes))


@pytest.mark.parametrize(
    ("depth", "changes", "named"),
    [
        pytest.param(1, {}, "it is the baseline of steps=1, this run measures steps=2", id="depth"),
        pytest.param(2, {}, "max_new_tokens: baseline 1000 vs run 60", id="workload"),
        pytest.param(
            2,
            {"workload": {"workload": "greedy-synthetic", "max_new_tokens": 60}, "profile": "x"},
            f"it is the baseline of profile x, this run's is {DEFAULT_PROFILE}",
            id="profile",
        ),
    ],
)
def test_bench_refuses_a_baseline_that_cannot_judge_the_server_before_it_measures(
    server: SimServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    depth: int,
    changes: dict[str, Any],
    named: str,
) -> None:
    """Against the depth-2 server: a baseline of another depth, workload (tokens) or profile
    is refused in one line, exit 4, before any sample (no progress, no results.json)."""
    baseline = _shipped_at(tmp_path, depth, **changes)
    assert bench(server.url, tmp_path / "out", "--baseline", str(baseline)) == 4
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith(f"specperf: error: --baseline: {baseline} cannot judge the server")
    assert named in line and line.endswith("nothing was measured")
    assert " requests, " not in captured.out and not (tmp_path / "out" / "results.json").exists()


def _promoted_at_c1(tmp_path: Path, url: str) -> Path:
    """A baseline of the server at C=1 only, promoted from a bench run (wide floors: half the
    baseline, so a loaded machine does not fail the judged point)."""
    first = tmp_path / "c1"
    assert main(["bench", "--url", url, *FAST, "--concurrency", "1", "--out", str(first)]) == 0
    promote = ["baseline", "promote", str(first / "results.json"), "--tolerance", "0.5"]
    assert main([*promote, "--baselines", str(tmp_path / "bl")]) == 0
    (baseline,) = (tmp_path / "bl").rglob("steps-2.json")
    return baseline


def test_bench_refuses_a_concurrency_its_baseline_has_no_point_for_before_it_measures(
    server: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """C=1,2 against a baseline of C=1: refused in one line naming C=2, exit 4, nothing
    measured; with --allow-no-baseline it measures, passes, and says C=2 was not judged
    (the notes and report.md)."""
    baseline = _promoted_at_c1(tmp_path, server.url)
    capsys.readouterr()
    assert bench(server.url, tmp_path / "out", "--baseline", str(baseline)) == 4
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith(f"specperf: error: --baseline: {baseline} has no figures for C=2 (it")
    assert "--allow-no-baseline" in line and line.endswith("nothing was measured")
    assert not (tmp_path / "out" / "results.json").exists()

    allowed = tmp_path / "allowed"
    assert bench(server.url, allowed, "--baseline", str(baseline), "--allow-no-baseline") == 0
    said = f"steps=2 C=2: not judged: no baseline point [{baseline}]"
    assert said in capsys.readouterr().out
    assert said in (allowed / "report.md").read_text()
    outcomes = {v["concurrency"]: v["outcome"] for v in results(allowed)["runs"][0]["verdicts"]}
    assert outcomes[2] == "no-baseline" and outcomes[1] in ("pass", "improvement")
