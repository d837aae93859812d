"""lab/gpu/gpu_testbed_proof.py's interleaved placement A/As: every choice's pair N before
any choice's pair N+1, the choices' and the sides' order reversed every other pair."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_specperf.results.schema import RunResults
from tests.support.data import REPO
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def proof() -> ModuleType:
    return load_script(REPO / "lab" / "gpu" / "gpu_testbed_proof.py")


def test_the_choices_pairs_are_interleaved(
    proof: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    booted: list[str] = []

    def boot(summary: Any, args: list[str], out: Path) -> RunResults:
        placement = next(a for a in args if a.startswith("--specperf-server-cpu="))
        booted.append(f"{placement.split('=')[1]} {out.name}")
        return RunResults(run_id="r", started_at="t", tool_version="0")

    def judge(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 0, "pair changes: +0.0%\n", "")

    monkeypatch.setattr(proof, "suite", boot)
    monkeypatch.setattr(proof.subprocess, "run", judge)
    monkeypatch.setenv("MAX_PAIRS", "3")
    summary = proof.Summary(tmp_path / "summary.md", "test")
    proof.interleaved_aa(tmp_path, summary, ["rotate", "none"])
    assert booted == [
        "rotate pair1-base", "rotate pair1-head", "none pair1-base", "none pair1-head",
        "none pair2-head", "none pair2-base", "rotate pair2-head", "rotate pair2-base",
        "rotate pair3-base", "rotate pair3-head", "none pair3-base", "none pair3-head",
    ]  # fmt: skip
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert text.count("--specperf-server-cpu=none after pair") == 3


def test_fewer_than_three_pairs_are_refused_before_any_boot(
    proof: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_PAIRS", "2")
    monkeypatch.setattr(proof, "suite", lambda *_: pytest.fail("booted"))
    with pytest.raises(SystemExit, match="MAX_PAIRS=2: at least 3"):
        proof.interleaved_aa(tmp_path, proof.Summary(tmp_path / "s.md", "t"), ["none"])


def test_no_round_starts_that_would_end_past_the_time_bound(
    proof: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [0.0]
    booted: list[str] = []

    def boot(summary: Any, args: list[str], out: Path) -> RunResults:
        clock[0] += 100.0
        booted.append(out.name)
        return RunResults(run_id="r", started_at="t", tool_version="0")

    def judge(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 0, "pair changes: +0.0%\n", "")

    monkeypatch.setattr(proof, "suite", boot)
    monkeypatch.setattr(proof.subprocess, "run", judge)
    monkeypatch.setattr(proof.time, "monotonic", lambda: clock[0])
    monkeypatch.setenv("MAX_PAIRS", "8")
    monkeypatch.setenv("STOP_AFTER_S", "1000")
    summary = proof.Summary(tmp_path / "summary.md", "test")
    proof.interleaved_aa(tmp_path, summary, ["rotate", "none"])
    assert len(booted) == 8  # two rounds of 400 s: a third would end at 1,200 s
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "stopped before pair 3: 800 s gone, its longest round 400 s" in text
