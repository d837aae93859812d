"""The gate's proof on a real GPU (issues 10 and 21); run through lab/gpu/gpu-gate-proof.sh.

    python lab/gpu/gpu_gate_proof.py OUT_DIR PROFILE [record,gate]

PROFILE is mtp, ngram (the two smoke profiles) or a profile name. Phases:
  record  record the depth-3 baseline with calibration: --specperf-calibrate across
          CAL_BOOTS boots (the suite restarts the server), REPEATS samples per point per boot.
  gate    GATE_BOOTS fresh boots, each gated against that baseline with REPEATS (expected:
          green); on the same boots, after the gate, /slow_down regressions of growing size
          (--specperf-inject-slowdown, one rung per boot, the rest on the last boot) until
          the gate catches one (expected: red). A boot here is started by this script with
          the suite's own launch code and measured through --specperf-url, so that a boot
          serves both its gate and its rung.
With RUNG_KIND=accept (profiles that simulate their accept length, like the seed-class one)
the rungs are lower accept lengths instead (RUNGS: e.g. 3.11,3.03,2.87 against 3.19 at depth
3, about 2.5/5/10% fewer tokens per verify step), each on a fresh boot of its own after the
gate boots: SGLang reads SGLANG_SIMULATE_ACC_LEN at boot, and /slow_down cost about 15% on
that server at C=1 and 4 whatever the sleep (docs/runs/2026-12-02-seed-class-gate-h200).
Baselines go to BASELINES_DIR (default /tmp/specperf-gate-proof/baselines, outside the
working tree, so that the two phases can run in two calls on a machine kept warm) and are
copied to OUT_DIR/baselines. OUT_DIR/summary.md gets a table, rewritten after every step.

Environment: BACKEND (sglang | sim, for a dry run here), RUNG_KIND (slowdown | accept),
REPEATS (3), CAL_BOOTS (2), GATE_BOOTS (3), SWEEP (extra pytest options; default per
profile), RUNGS (comma list of seconds per forward pass, or of accept lengths with
RUNG_KIND=accept; default per profile), BUDGET_S (skip a step that cannot finish in
the time left; default 570, under a 600 s call), BOOT_ESTIMATE_S (110).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from _lent_gpu import run_suite

from pytest_specperf.config.parsers import parse_backend
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.results.schema import RunResults
from pytest_specperf.server.launch import SIMULATE_ACCEPT_LENGTH_ENV, LaunchCommand, build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import ServerProcess, launch
from pytest_specperf.server.profiles import resolve_profile

DEPTH = 3
PROFILES = {"mtp": "smoke-tiny-qwen3next-mtp", "ngram": "smoke-tiny-qwen3-ngram"}
# Sweeps: the smoke sweeps (the NGRAM model needs 2048-token requests for stable points).
SWEEPS = {
    "smoke-tiny-qwen3next-mtp": "--specperf-concurrency=1,4,16 --specperf-max-new-tokens=256",
    "smoke-tiny-qwen3-ngram": "--specperf-concurrency=1,4,16 --specperf-max-new-tokens=2048",
    "qwen3-next-real-width-fp8-mtp": "--specperf-concurrency=1,4,16 --specperf-max-new-tokens=256",
}
# Seconds of sleep per forward pass. On the H200 one decode step took about 3.2 ms (MTP C=1),
# 6.5 ms (MTP C=4: 0.005 s cut 611 to 357 tok/s) and 2.4-4.1 ms (NGRAM C=1..16), so a sleep
# s cuts tok/s by about s / (step + s): the rungs below start near 5% (NGRAM C=1) and 10%
# (MTP C=1) and grow until even the noisy tiny MTP model cannot hide them.
RUNGS = {
    "smoke-tiny-qwen3next-mtp": (0.0004, 0.001, 0.0025, 0.005),
    "smoke-tiny-qwen3-ngram": (0.00012, 0.00025, 0.0005, 0.001),
    # The seed-class profile at depth 3 (simulated accept 3.19): about 290 tok/s at C = 1, so
    # about 11 ms a verify step; these are about 2.5%, 5% and 10% there (less at C = 16, where
    # a step is longer). The measured sizes are what the summary reports.
    "qwen3-next-real-width-fp8-mtp": (0.0003, 0.0006, 0.0012),
}
_THROUGHPUT_FAILED = re.compile(r"^FAILED \S*test_throughput\S*", re.MULTILINE)


@dataclass
class Step:
    name: str
    expect: str
    exit_code: int | None = None
    seconds: float = 0.0
    slowdown_s: float | None = None
    accept_length: float | None = None
    changes: dict[int, float] = field(default_factory=dict)  # C -> agg change vs baseline
    failed_points: int = 0
    note: str = ""

    @property
    def outcome(self) -> str:
        if self.exit_code is None:
            return f"skipped: {self.note}" if self.note else "skipped"
        if self.exit_code == 0:
            return "green"
        if self.exit_code == 1 and self.failed_points:
            return f"red ({self.failed_points} throughput point(s) failed)"
        if self.exit_code == 4:
            return "refused: estimated past the time left (see the step's .txt)"
        return f"error (exit {self.exit_code})"


class Proof:
    def __init__(self, out: Path, profile: str) -> None:
        self.out = out
        self.profile = profile
        self.backend = os.environ.get("BACKEND", "sglang")
        self.repeats = int(os.environ.get("REPEATS", "3"))
        self.cal_boots = int(os.environ.get("CAL_BOOTS", "2"))
        self.gate_boots = int(os.environ.get("GATE_BOOTS", "3"))
        self.sweep = os.environ.get("SWEEP", SWEEPS.get(profile, "")).split()
        rungs = os.environ.get("RUNGS")
        self.rungs = tuple(float(r) for r in rungs.split(",")) if rungs else RUNGS.get(profile, ())
        self.rung_kind = os.environ.get("RUNG_KIND", "slowdown")
        if self.rung_kind not in ("slowdown", "accept"):
            raise SystemExit(f"RUNG_KIND={self.rung_kind!r}: slowdown or accept")
        self.budget_s = float(os.environ.get("BUDGET_S", "570"))
        self.boot_estimate_s = float(os.environ.get("BOOT_ESTIMATE_S", "110"))
        self.baselines = Path(os.environ.get("BASELINES_DIR", "/tmp/specperf-gate-proof/baselines"))
        self.started = time.monotonic()
        self.steps: list[Step] = []
        self.hardware: str | None = None

    # -- running ---------------------------------------------------------------------
    def time_left(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def pytest(self, step: Step, *args: str, boots: int) -> Step:
        """Run the suite once; skip (and say so) when it would not fit in the budget."""
        self.steps.append(step)
        if self.time_left() < boots * self.boot_estimate_s + 60:
            step.note = f"{self.time_left():.0f} s of the budget left"
            self.write_summary()
            return step
        run_out = self.out / step.name
        suite_args = [
            "perf_tests",
            f"--spec-steps={DEPTH}",
            f"--specperf-profile={self.profile}",
            f"--specperf-backend={self.backend}",
            f"--specperf-baselines={self.baselines}",
            f"--specperf-out={run_out}",
            f"--specperf-repeats={self.repeats}",
            # The suite refuses at once a run it estimates past the time left (exit 4).
            f"--specperf-time-budget={max(1.0, self.time_left() - 10):.0f}",
            *self.sweep,
            *args,
        ]
        print(f"[{self.elapsed()}] {step.name}: pytest {' '.join(suite_args)}", flush=True)
        done = run_suite(suite_args, self.out / f"{step.name}.txt")
        step.seconds = done.seconds
        step.exit_code = done.exit_code
        step.failed_points = len(_THROUGHPUT_FAILED.findall(done.stdout))
        step.changes = self.changes(run_out / "results.json")
        print(f"[{self.elapsed()}] {step.name}: {step.outcome} in {step.seconds:.0f} s", flush=True)
        self.write_summary()
        return step

    def elapsed(self) -> str:
        return f"{time.monotonic() - self.started:.0f}s"

    def changes(self, results_path: Path) -> dict[int, float]:
        """Per concurrency: the run's agg tok/s median against the baseline's, as a fraction."""
        try:
            results = msgspec.json.decode(results_path.read_bytes(), type=RunResults)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return {}
        run = results.depth(DEPTH)
        if run is None:
            return {}
        self.hardware = run.hardware
        baseline = self.baseline()
        if baseline is None:
            return {}
        found: dict[int, float] = {}
        for point in run.points:
            reference = baseline.point(point.concurrency)
            if reference is not None and reference.agg_tok_s:
                found[point.concurrency] = point.agg_tok_s / reference.agg_tok_s - 1
        return found

    def baseline(self) -> Baseline | None:
        if self.hardware is None:
            return None
        return load_baseline(baseline_path(self.baselines, self.profile, self.hardware, DEPTH))

    # -- phases ----------------------------------------------------------------------
    def record(self) -> None:
        self.pytest(
            Step("record", "green"),
            "--specperf-calibrate",
            f"--specperf-calibrate-boots={self.cal_boots}",
            boots=self.cal_boots,
        )

    def gate(self) -> None:
        """The gate boots; /slow_down rungs on them, or acceptance rungs after them."""
        rungs = list(self.rungs) if self.rung_kind == "slowdown" else []
        caught = False
        for boot in range(1, self.gate_boots + 1):
            if self.time_left() < self.boot_estimate_s + 60:
                self.steps.append(Step(f"gate-boot{boot}", "green", note="no time left"))
                break
            server = self.boot(boot)
            if server is None:
                break
            try:
                url = f"--specperf-url={server.url}"
                self.pytest(Step(f"gate-boot{boot}", "green"), url, boots=0)
                last_boot = boot == self.gate_boots
                while rungs and not caught:
                    sleep = rungs.pop(0)
                    step = Step(f"regression-{sleep:g}s", "red", slowdown_s=sleep)
                    step.note = f"on gate boot {boot}"
                    self.pytest(step, url, f"--specperf-inject-slowdown={sleep:g}", boots=0)
                    caught = step.exit_code == 1 and step.failed_points > 0
                    if not last_boot:
                        break  # one rung per boot; the rest on the last one
            finally:
                server.stop()
        if self.rung_kind == "accept":
            self.accept_rungs()

    def accept_rungs(self) -> None:
        """One fresh boot per lower accept length, smallest change first, until one is caught."""
        for length in self.rungs:
            name = f"accept-{length:g}"
            if self.time_left() < self.boot_estimate_s + 60:
                self.steps.append(Step(name, "red", note="no time left"))
                return
            server = self.boot(name, accept_length=length)
            if server is None:
                return
            try:
                step = Step(name, "red", accept_length=length, note="fresh boot")
                self.pytest(step, f"--specperf-url={server.url}", boots=0)
            finally:
                server.stop()
            if step.exit_code == 1 and step.failed_points:
                return

    def boot(self, index: int | str, accept_length: float | None = None) -> ServerProcess | None:
        profile = resolve_profile(self.profile, [])
        model = str(build_model(profile.model_factory)) if profile.model_factory else None
        backend = parse_backend(self.backend)

        def command(port: int) -> LaunchCommand:
            launch_command = build_launch(
                profile,
                DEPTH,
                backend=backend,
                port=port,
                model_path=model,
                sim_speedup=5.0 if backend == "sim" else None,
            )
            if accept_length is not None:
                launch_command.env[SIMULATE_ACCEPT_LENGTH_ENV] = f"{accept_length:g}"
            return launch_command

        log = self.out / f"server-gate-boot{index}.log"
        begun = time.monotonic()
        try:
            server = launch(
                command,
                host="127.0.0.1",
                log_path=log,
                launch_timeout_s=profile.launch_timeout_s or 900,
                api_key=None,
            )
        except Exception as exc:  # the summary must say why the proof stopped
            self.steps.append(Step(f"boot{index}", "up", exit_code=2, note=str(exc)[:300]))
            self.write_summary()
            return None
        print(f"[{self.elapsed()}] boot {index}: {time.monotonic() - begun:.0f} s", flush=True)
        return server

    # -- report ----------------------------------------------------------------------
    def write_summary(self) -> None:
        levels = sorted({c for step in self.steps for c in step.changes})
        head = " | ".join(f"C={c} agg vs baseline" for c in levels)
        lines = [
            f"# gate proof: {self.profile}, steps={DEPTH}, backend={self.backend}, "
            f"R={self.repeats}, calibration boots={self.cal_boots}, hardware={self.hardware}",
            f"sweep: {' '.join(self.sweep)}",
            "",
            f"| step | injected | expected | outcome | s | {head} | note |",
            "| --- | --- | --- | --- | --- |" + " --- |" * len(levels) + " --- |",
        ]
        for step in self.steps:
            cells = " | ".join(
                f"{step.changes[c]:+.1%}" if c in step.changes else "-" for c in levels
            )
            sleep = "-"
            if step.slowdown_s is not None:
                sleep = f"/slow_down {step.slowdown_s:g} s"
            elif step.accept_length is not None:
                sleep = f"accept length {step.accept_length:g}"
            lines.append(
                f"| {step.name} | {sleep} | {step.expect} | {step.outcome} | "
                f"{step.seconds:.0f} | {cells} | {step.note} |"
            )
        caught = [s for s in self.steps if s.expect == "red" and s.failed_points]
        if caught:
            smallest = caught[0]
            worst = min(smallest.changes.values(), default=0.0)
            injected = (
                f"{smallest.slowdown_s:g} s per forward pass"
                if smallest.slowdown_s is not None
                else f"accept length {smallest.accept_length:g}"
            )
            lines += [
                "",
                f"smallest regression caught: {injected} "
                f"(largest measured drop {worst:+.1%}) at R={self.repeats}",
            ]
        (self.out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    out = Path(sys.argv[1]).resolve()
    profile = PROFILES.get(sys.argv[2], sys.argv[2])
    phases = (sys.argv[3] if len(sys.argv) > 3 else "record,gate").split(",")
    out.mkdir(parents=True, exist_ok=True)
    proof = Proof(out, profile)
    if "record" in phases:
        proof.record()
    if "gate" in phases:
        proof.gate()
    proof.write_summary()
    if proof.baselines.is_dir():
        shutil.copytree(proof.baselines, out / "baselines", dirs_exist_ok=True)
    print((out / "summary.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
