"""One depth's run: boot (or attach to) a server, warm it up, measure points, record them.

Plain code, no pytest: the plugin's fixtures and ``specperf bench`` drive it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pytest_specperf import interrupts
from pytest_specperf.commands import record_command
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import BaselineError, SpecperfError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.gate.baselines import (
    Baseline,
    Tolerance,
    baseline_from_run,
    baseline_from_runs,
    baseline_path,
    load_baseline,
    save_baseline,
)
from pytest_specperf.gate.decision import GateSettings
from pytest_specperf.gate.floors import workload_mismatch
from pytest_specperf.gate.provenance import downgrade_message, downgrade_reasons
from pytest_specperf.gate.recommend import recommend, refine_concurrencies
from pytest_specperf.gate.review import incomplete_reason
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.lossless import fetch_greedy_outputs, record_and_compare
from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.repeats import interleaved, merge_samples, split_by_boot
from pytest_specperf.measure.warmup import warm_up
from pytest_specperf.options import ALLOW_DOWNGRADE_FLAG, Settings
from pytest_specperf.results.acceptance import merge_histograms, position_accept_rates
from pytest_specperf.results.schema import (
    DepthRun,
    OutputComparison,
    PointMetrics,
    RequestRecord,
    RunResults,
    SelfTest,
    ServerSummary,
    Speedup,
    Testbed,
    Warmup,
    point_bound,
)
from pytest_specperf.results.speedup import control_run, depth_speedups, speedups
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.results.testbed import measured as measured_testbed
from pytest_specperf.self_test import measure_with, run_self_test
from pytest_specperf.server import cpu_use
from pytest_specperf.server.gpu_use import ServerGpus
from pytest_specperf.server.gpus import gpu_env, visible_gpus
from pytest_specperf.server.hardware import hardware_key
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import (
    ServerProcess,
    fetch_server_info,
    inject_slowdown,
    launch,
    summarize_server_info,
)
from pytest_specperf.server.testbed import collect as collect_testbed


class ServerDied(SpecperfError):
    """The server process exited while a point was being measured."""


class ServerGone(SpecperfError):
    """The server of this depth failed earlier; later points cannot be measured."""


_DEPTH_IN_ID = re.compile(r"\[(?:[^\]]*-)?(steps\d+)(?:-[^\]]*)?\]$")


def depth_scope(nodeid: str) -> str:
    """The scheduling scope of a test: its depth (``steps3``) for the suite's tests, else itself.

    The suite's tests carry the depth in their parameter ids (``test_x[steps3-c16]``).
    """
    match = _DEPTH_IN_ID.search(nodeid)
    return f"specperf-{match.group(1)}" if match else nodeid


# How long a point whose connections broke waits for the server process to be seen gone.
CONNECTION_LOSS_SETTLE_S = 2.0


def _settle_after(sample: PointMetrics) -> float:
    """Seconds to give the server to exit before asking whether it died: only after a point
    whose connections broke or were refused (a healthy server returns at once)."""
    broken = any(kind.startswith("connection") for kind in sample.errors)
    return CONNECTION_LOSS_SETTLE_S if broken else 0.0


def _settle_after_warmup(warmup: Warmup) -> float:
    """As ``_settle_after``, for a warm-up: one of its points that produced no token at all
    is the sign (its record keeps no failure counts)."""
    silent = any(figure == 0 for figures in warmup.agg_tok_s for figure in figures)
    return CONNECTION_LOSS_SETTLE_S if silent else 0.0


def describe_exit(code: int | None) -> str:
    """``-9`` -> ``was killed by SIGKILL``; ``1`` -> ``exited with code 1``."""
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class PointObserver(Protocol):
    """Sees each point being measured: e.g. the live progress line."""

    def point_started(
        self, depth: int, concurrency: int, total: int
    ) -> Callable[[RequestRecord], None]:
        """A point begins; the returned function is called with each finished request."""
        ...

    def point_finished(self) -> None: ...


class DepthSession:
    def __init__(self, settings: Settings, depth: int, store: ResultsStore) -> None:
        self.settings = settings
        self.depth = depth
        self.store = store
        self.server: ServerProcess | None = None
        self.summary: ServerSummary | None = None
        self.hardware = settings.hardware or "unknown-hardware"
        self.base_url: str | None = settings.url
        self.failure: str | None = None
        # The reported point per concurrency (with repeats: merged from its samples so far).
        self.points: dict[int, PointMetrics] = {}
        # Concurrencies whose planned samples have all been measured.
        self.complete: set[int] = set()
        # Which boot of this depth the server is (calibration across boots restarts it).
        self.boot = 0
        # End-to-end seconds of each successful request of a point measured by this process
        # (not stored in results: the pytest-benchmark bridge reads them as its rounds).
        self.request_e2e_s: dict[int, list[float]] = {}
        self.model_path: str | None = None
        # What the session is doing now, for an interruption's message.
        self.activity: str | None = None
        # The plugin fails the first test that meets self.failure and skips the others.
        self.failure_reported = False
        self.observer: PointObserver | None = None
        # This server's own GPUs (server/gpus.py), or None: the environment's, unchanged.
        self.gpus: tuple[str, ...] | None = None
        # Under xdist: (this worker's index, the workers); the rotation's share of the vCPUs.
        self.worker: tuple[int, int] = (0, 1)
        # The boot whose warm-up ran (measure/warmup.py): one warm-up per boot.
        self.warmed_boot: int | None = None
        # --specperf-rotate-server-cpu: this boot's vCPUs in turn, and this boot's last CPU
        # reading (a sample's or the warm-up's: which process to pin next); reboot() clears both.
        self.rotation: cpu_use.CoreRotation | None = None
        self.last_cpu: tuple[cpu_use.CpuSnapshot, cpu_use.CpuSnapshot] | None = None
        # --specperf-server-cpu=pin-fastest: the free vCPUs' speeds timed before this boot.
        self.free_core_speeds: dict[int, float] = {}
        # The launched server's GPUs through NVML (server/gpu_use.py), opened each boot;
        # None: not a real server this run launched, or no NVML.
        self.server_gpus: ServerGpus | None = None
        # The machine this boot runs on (server/testbed.py); None: a server given by URL.
        self.testbed: Testbed | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def launch_command(self, port: int) -> LaunchCommand:
        s = self.settings
        command = build_launch(
            s.profile,
            self.depth,
            backend=s.backend,
            host="127.0.0.1",
            port=port,
            server_args=s.server_args,
            api_key=s.api_key,
            model_path=self.model_path,
            python=s.python,
            sim_speedup=s.sim_speedup if s.backend == "sim" else None,
        )
        command.env.update(gpu_env(self.gpus))
        if s.server_cpu == "sglang-affinity":
            command.env.update(cpu_use.SGLANG_AFFINITY_ENV)
        return command

    @property
    def log_path(self) -> Path:
        """This boot's server log: a restart (calibration, a fresh-boot confirmation) keeps
        the earlier boots' logs beside it."""
        suffix = f"-boot{self.boot + 1}" if self.boot else ""
        return self.settings.out_dir / f"server-steps{self.depth}{suffix}.log"

    def open(self, fresh: bool = True) -> ServerSummary:
        """Boot the server (or attach to --specperf-url) and record what it reports.

        ``fresh``: no session of this depth was opened before in this process. If this run's
        results already hold the depth, another process started it (an xdist worker that
        died mid-sweep): its points are kept, and the depth is not measured again.
        """
        s = self.settings
        if fresh:
            self._refuse_abandoned_run()
        self._record_run()
        self.activity = "booting the server"
        try:
            if s.url is None:
                if s.profile.model_factory:
                    self.model_path = str(build_model(s.profile.model_factory))
                timeout = s.profile.launch_timeout_s or s.launch_timeout_s
                if s.server_cpu == "pin-fastest":
                    self._time_free_cores()
                self.server = launch(
                    self.launch_command,
                    host="127.0.0.1",
                    log_path=self.log_path,
                    launch_timeout_s=timeout,
                    api_key=s.api_key,
                    started=self._server_started,
                    silence_timeout_s=s.boot_silence_timeout_s,
                )
                self.base_url = self.server.url
            assert self.base_url is not None
            info = fetch_server_info(self.base_url, s.api_key)
            if s.inject_slowdown_s is not None:
                inject_slowdown(self.base_url, s.inject_slowdown_s, s.api_key)
        except SpecperfError as exc:
            self.fail_run(str(exc))
            raise
        except KeyboardInterrupt as exc:
            self.interrupt(exc)
            raise
        finally:
            self.activity = None
        summary = summarize_server_info(self.base_url, info)
        if self.server is not None:
            summary.launch_command = self.server.command.display()
            summary.boot_s = self.server.boot_s
            summary.gpus = list(self.gpus) if self.gpus is not None else None
            summary.cpu_placement = s.server_cpu
            summary.free_core_speeds = dict(self.free_core_speeds) or None
            if self.rotation is not None and s.server_cpu == "pin-fastest":
                summary.pinned_core = self.rotation.cores[0]
        if self.server is not None and s.backend == "sglang":
            self.server_gpus = ServerGpus.open(
                self.gpus if self.gpus is not None else visible_gpus(), summary.tp_size
            )
        if self.server is not None:
            self.testbed = collect_testbed(
                gpus=self.server_gpus,
                python=s.python,
                sglang_reported=summary.version,
                real_server=s.backend == "sglang",
            )
            if summary.pinned_core is not None:
                self.testbed.core_speed = self.free_core_speeds.get(summary.pinned_core)
        self.summary = summary
        self.hardware = hardware_key(info, override=s.hardware, tp_size=summary.tp_size)
        self._record_run()
        return summary

    def _time_free_cores(self) -> None:
        """pin-fastest: this worker's vCPUs timed while nothing of the server runs yet, the
        fastest kept as the one vCPU of this boot's rotation."""
        cores = cpu_use.CoreRotation.for_worker(
            cpu_use.allowed_cores(os.getpid()), *self.worker
        ).cores
        self.free_core_speeds = cpu_use.time_cores(cores)
        fastest = cpu_use.fastest_core(self.free_core_speeds)
        # None timed: an empty rotation, so that nothing is pinned (not a rotation over all).
        self.rotation = cpu_use.CoreRotation([fastest] if fastest is not None else [])

    def _server_started(self, server: ServerProcess) -> None:
        """Held from the moment it runs: an interrupt during its boot still stops it."""
        self.server = server

    def _refuse_abandoned_run(self) -> None:
        results = self.store.load()
        earlier = results.depth(self.depth) if results else None
        if earlier is None:
            return
        measured = ", ".join(f"C={p.concurrency}" for p in earlier.points) or "none"
        what = f"; it had failed: {earlier.failure.splitlines()[0]}" if earlier.failure else ""
        message = (
            f"steps={self.depth} was already started in this run by another process that "
            f"did not finish it (an xdist worker that died mid-sweep?){what}; "
            f"points it measured are kept in {self.store.path} ({measured}); not measured again"
        )
        self.fail_run(message)
        raise ServerGone(message)

    def close(self) -> None:
        """Stop the server and record the run's end; a Ctrl-C meanwhile waits until done."""
        with interrupts.deferred():
            if self.server is not None:
                self.server.stop()
            self.store.update(self._finish)

    def reboot(self) -> ServerSummary:
        """Stop the server and boot a fresh one of the same depth (calibration across boots)."""
        if self.server is None:
            raise SpecperfError(
                f"steps={self.depth}: cannot restart a server the suite did not boot "
                "(--specperf-url); calibrate across boots on a server the suite launches"
            )
        self.server.stop()
        self.server = None
        self.boot += 1
        self.rotation = self.last_cpu = self.server_gpus = None
        return self.open(fresh=False)

    def interrupt(self, exc: BaseException) -> None:
        """Record an interruption (Ctrl-C, SIGTERM): what was running, and what was not run."""
        if self.failure is not None:
            return
        missing = [c for c in self.settings.concurrency if c not in self.complete]
        if self.activity is not None:
            doing = f"while {self.activity}"
        elif missing:
            doing = f"before C={missing[0]} was measured"
        else:
            return  # every point was measured: the run is complete
        self.fail_run(f"interrupted ({interrupts.interrupt_name(exc)}) {doing}")

    def _finish(self, results: RunResults) -> None:
        run = self._run_in(results)
        if run.status == "running":
            run.status = "complete"
        refresh_recommendation(results)

    # -- measuring ---------------------------------------------------------------------
    @property
    def repeats(self) -> int:
        return self.settings.repeats

    @property
    def boots(self) -> int:
        return self.settings.calibrate_boots if self.settings.calibrate else 1

    @property
    def samples_per_point(self) -> int:
        """Samples of each planned point once the sweep is done (confirmation may add more)."""
        return self.repeats * self.boots

    @property
    def sweeps_together(self) -> bool:
        """Repeats and calibration measure every point in one interleaved sweep."""
        return self.repeats > 1 or self.boots > 1

    def measure(self, concurrency: int) -> PointMetrics:
        """The point at this concurrency, measuring it (or, with repeats, the whole sweep) first.

        Without repeats each point is measured when first asked for. With repeats the first
        request measures every planned point R times, interleaved (sweep()), and each test
        then judges its own point.
        """
        if concurrency in self.complete:
            return self.points[concurrency]
        if self.failure is not None:
            raise ServerGone(self.failure)
        if self.sweeps_together and concurrency in self.settings.concurrency:
            self.sweep()
            if concurrency in self.complete:
                return self.points[concurrency]
            raise ServerGone(self.failure or f"steps={self.depth}: C={concurrency} not measured")
        return self._sample(concurrency, label=f"measuring C={concurrency}", completes=True)

    def measure_refined(self, concurrency: int) -> PointMetrics:
        """A point between the planned ones (--specperf-refine), R samples like every point."""
        if concurrency in self.complete:
            return self.points[concurrency]
        if self.failure is not None:
            raise ServerGone(self.failure)
        for index in range(self.repeats):
            label = f"refining C={concurrency}"
            if self.repeats > 1:
                label += f" (sample {index + 1}/{self.repeats})"
            last = index == self.repeats - 1
            self._sample(concurrency, label=label, refined=True, completes=last)
        return self.points[concurrency]

    def sweep(self) -> None:
        """Every planned point, R samples each, interleaved by round; over every boot.

        results.json is rewritten after every sample, so an interruption loses at most the
        sample being measured. A server that dies raises ServerDied, recorded as the failure.
        """
        levels = [c for c in self.settings.concurrency if c not in self.complete]
        if not levels:
            # Swept already: every later test that asks for the sweep would otherwise restart
            # the server once per calibration boot for nothing (on a GPU, 60-200 s a boot).
            return
        for boot in range(self.boots):
            if boot > 0:
                try:
                    self.reboot()
                except SpecperfError as exc:  # recorded by open(); reported like a crash
                    raise ServerDied(self.failure or str(exc)) from None
            for round_index, level in interleaved(levels, self.repeats):
                if self.failure is not None:
                    raise ServerGone(self.failure)
                label = f"measuring C={level} (sample {round_index + 1}/{self.repeats}"
                label += f", boot {boot + 1}/{self.boots})" if self.boots > 1 else ")"
                self._sample(level, label=label)
        self.complete.update(levels)

    def remeasure(self, concurrency: int) -> PointMetrics:
        """R more samples of one point (confirmation of a borderline verdict); the merged point.

        The new samples are added to the point's earlier ones in results.json.
        """
        if self.failure is not None:
            raise ServerGone(self.failure)
        if concurrency not in self.points:
            return self.measure(concurrency)
        for index in range(self.repeats):
            self._sample(
                concurrency,
                label=f"re-measuring C={concurrency} (sample {index + 1}/{self.repeats})",
            )
        return self.points[concurrency]

    def _sample(
        self, concurrency: int, *, label: str, refined: bool = False, completes: bool = False
    ) -> PointMetrics:
        """Measure one sample, merge it into the point, record it; the point as merged.

        ``refined``: a point --specperf-refine added between the planned ones. ``completes``:
        this sample is the point's last, so recording it marks the point measured. Recording
        is one step for a Ctrl-C: results.json and the session agree on what was measured, so
        an interruption names the right point."""
        assert self.base_url is not None, "open() first"
        s = self.settings
        try:
            self._warm_up_boot(concurrency)
        except KeyboardInterrupt as exc:
            self.interrupt(exc)
            raise
        finally:
            self.activity = None
        self.activity = label
        durations: list[float] = []
        observed = (
            self.observer.point_started(
                self.depth, concurrency, s.workload.requests_for(concurrency)
            )
            if self.observer is not None
            else None
        )

        def request_done(record: RequestRecord) -> None:
            if record.ok:
                durations.append(record.end - record.start)
            if observed is not None:
                observed(record)

        server_pid = self.server.pid if self.server is not None else None
        cpu_before = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if s.pins_server_process and server_pid is not None and cpu_before is not None:
            self._pin_next_core(server_pid, cpu_before)
        gpu_reader = self.server_gpus.sampler().start() if self.server_gpus is not None else None
        try:
            sample = event_loop.run(
                measure_point(
                    self.base_url,
                    s.workload,
                    concurrency,
                    model=self.summary.model_path
                    if self.summary and self.summary.model_path
                    else "default",
                    api_key=s.api_key,
                    warmup=True,
                    slo=s.slo,
                    client_procs=s.client_procs,
                    on_request_done=request_done,
                )
            )
        except KeyboardInterrupt as exc:
            self.interrupt(exc)
            raise
        finally:
            self.activity = None
            gpu_use = gpu_reader.stop() if gpu_reader is not None else None
            if self.observer is not None:
                self.observer.point_finished()
        cpu_after = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if cpu_before is not None and cpu_after is not None:
            self.last_cpu = (cpu_before, cpu_after)
            found = cpu_use.busiest(cpu_before, cpu_after)
            sample.server_cpu = cpu_use.with_core_speed(found) if found is not None else None
        sample.gpu = gpu_use
        sample.bound = point_bound(sample.server_cpu, gpu_use)
        sample.boot = self.boot
        sample.refined = refined
        # Every draft position of this depth, accepted or not (a short histogram stops early).
        sample.position_accept_rate = position_accept_rates(
            sample.accept_histogram, self.depth or None
        )
        earlier = self.points.get(concurrency)
        point = merge_samples([earlier, sample]) if earlier is not None else sample
        if self.server is not None and not self.server.alive(_settle_after(sample)):
            message = (
                f"server (steps={self.depth}) {describe_exit(self.server.exit_code())} "
                f"while {label}; {sample.ok}/{sample.requests} requests had "
                f"succeeded (log: {self.log_path})\n"
                f"--- server log tail ---\n{self.server.log_tail()}"
            )
            self.fail_run(message, point)
            raise ServerDied(message)
        with interrupts.deferred():
            self.points[concurrency] = point
            self.request_e2e_s.setdefault(concurrency, []).extend(durations)
            self.store.update(lambda results: self._add_point(results, point))
            if completes:
                self.complete.add(concurrency)
        return point

    def _pin_next_core(self, server_pid: int, now: cpu_use.CpuSnapshot) -> None:
        """The busiest server process of the last sample or of the boot's warm-up (without
        either: the one with the most CPU time) onto this boot's next vCPU; the rotation
        restarts each boot."""
        if self.rotation is None:
            self.rotation = cpu_use.CoreRotation.for_worker(
                cpu_use.allowed_cores(server_pid), *self.worker
            )
        if not self.rotation.cores:
            return
        before, after = self.last_cpu if self.last_cpu is not None else (None, now)
        pid = cpu_use.busiest_pid(before, after)
        if pid is not None:
            cpu_use.pin_process(pid, self.rotation.next_core())

    def _warm_up_boot(self, concurrency: int) -> None:
        """Before the first sample of a boot: warm every concurrency of the sweep (and this
        one), so that no measured sample pays for shapes the server runs for the first time."""
        s = self.settings
        if self.warmed_boot == self.boot or not s.warmup.enabled:
            return
        assert self.base_url is not None
        self.warmed_boot = self.boot
        self.activity = f"warming up (boot {self.boot + 1})"
        # With --specperf-rotate-server-cpu: which process works hardest under the warm-up's
        # load names the one to pin for the boot's first sample.
        server_pid = self.server.pid if s.pins_server_process and self.server is not None else None
        cpu_before = cpu_use.snapshot(server_pid) if server_pid is not None else None
        warmup = event_loop.run(
            warm_up(
                self.base_url,
                s.workload,
                sorted({*s.concurrency, concurrency}),
                s.warmup,
                model=self.summary.model_path
                if self.summary and self.summary.model_path
                else "default",
                api_key=s.api_key,
                client_procs=s.client_procs,
            )
        )
        warmup.boot = self.boot
        cpu_after = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if cpu_before is not None and cpu_after is not None:
            self.last_cpu = (cpu_before, cpu_after)
        self.store.update(lambda results: self._run_in(results).warmups.append(warmup))
        if self.server is not None and not self.server.alive(_settle_after_warmup(warmup)):
            message = (
                f"server (steps={self.depth}) {describe_exit(self.server.exit_code())} "
                f"while warming up (boot {self.boot + 1}) (log: {self.log_path})\n"
                f"--- server log tail ---\n{self.server.log_tail()}"
            )
            self.fail_run(message)
            raise ServerDied(message)

    def _add_point(self, results: RunResults, point: PointMetrics) -> None:
        run = self._run_in(results)
        _put_point(run, point)
        if self.testbed is not None:
            run.testbed = measured_testbed(self.testbed, run.points)
        run.accept_histogram = merge_histograms(p.accept_histogram for p in run.points)
        run.position_accept_rate = position_accept_rates(run.accept_histogram, self.depth or None)
        results.speedup = speedups(results.runs)
        refresh_recommendation(results)

    # -- the gate's self-test ----------------------------------------------------------
    def self_test(self) -> SelfTest:
        """Inject a known /slow_down, let the gate judge the lowest concurrency, reset it."""
        assert self.base_url is not None and self.points, "measure the points first"
        s = self.settings
        point = self.points[min(self.points)]
        path, baseline, _ = load_baseline_safely(self)
        if baseline is not None and workload_mismatch(s.workload.key(), baseline) is not None:
            baseline = None  # not comparable: the run's own point is the reference
        model = self.summary.model_path if self.summary and self.summary.model_path else "default"
        result = run_self_test(
            base_url=self.base_url,
            api_key=s.api_key,
            run=self.run_snapshot(),
            point=point,
            baseline=(path, baseline) if path is not None and baseline is not None else None,
            tolerance=s.tolerance,
            measure=measure_with(self.base_url, s.workload, point.concurrency, model, s.api_key),
            gate_settings=GateSettings(alpha=s.alpha, min_effect=s.min_effect),
            time_scale=s.sim_speedup if s.backend == "sim" and s.url is None else 1.0,
        )
        self.store.update(lambda results: setattr(self._run_in(results), "self_test", result))
        return result

    # -- checks across depths ----------------------------------------------------------
    def compare_greedy_outputs(self) -> list[OutputComparison]:
        """Store this depth's greedy outputs; compare them with every depth stored before."""
        assert self.base_url is not None, "open() first"
        outputs = fetch_greedy_outputs(
            self.base_url,
            api_key=self.settings.api_key,
            timeout_s=self.settings.workload.request_timeout_s,
        )
        found: list[OutputComparison] = []

        def change(results: RunResults) -> None:
            found.extend(record_and_compare(results, self._run_in(results), outputs))

        self.store.update(change)
        return found

    def speedups_to_judge(self) -> list[tuple[int, list[Speedup]]]:
        """(depth, its speedups) for every depth whose speedup is judgeable now and was not yet.

        A pair (depth, control) is judged once both swept all their planned points, by the
        first test of either that finds it so (under the results lock: exactly once).
        """
        found: list[tuple[int, list[Speedup]]] = []

        def change(results: RunResults) -> None:
            control = control_run(results.runs)
            if control is None or not _swept(control, self.samples_per_point):
                return
            for run in results.runs:
                if run.depth == CONTROL_DEPTH or run.depth in results.speedup_judged:
                    continue
                if run.depth != self.depth and self.depth != CONTROL_DEPTH:
                    continue
                if _swept(run, self.samples_per_point):
                    results.speedup_judged.append(run.depth)
                    found.append((run.depth, depth_speedups(run, control)))

        self.store.update(change)
        return found

    def measure_all(self) -> DepthRun:
        """Every planned point not measured yet, in order; then the run as recorded."""
        if self.sweeps_together:
            if self.failure is None:
                with contextlib.suppress(ServerDied):
                    self.sweep()
            return self.run_snapshot()
        for concurrency in self.settings.concurrency:
            if concurrency not in self.complete and self.failure is None:
                with contextlib.suppress(ServerDied):
                    self.measure(concurrency)
        return self.run_snapshot()

    def run_snapshot(self) -> DepthRun:
        results = self.store.load()
        run = results.depth(self.depth) if results else None
        return run if run is not None else self._new_run()

    # -- baselines ---------------------------------------------------------------------
    def baseline_file(self) -> Path:
        return baseline_path(
            self.settings.baselines_dir,
            self.settings.profile.name,
            self.hardware,
            self.depth,
            self.settings.workload.name,
        )

    def baseline(self) -> tuple[Path, Baseline | None]:
        """The baseline for this key, or None; BaselineError if the file is bad."""
        path = self.baseline_file()
        return path, load_baseline(path)

    # -- results bookkeeping -----------------------------------------------------------
    def fail_run(self, message: str, point: PointMetrics | None = None) -> None:
        self.failure = message

        def change(results: RunResults) -> None:
            run = self._run_in(results)
            run.status = "failed"
            run.failure = message
            if point is not None:
                _put_point(run, point)

        with interrupts.deferred():
            self.store.update(change)

    def _new_run(self) -> DepthRun:
        s = self.settings
        return DepthRun(
            depth=self.depth,
            profile=s.profile.name,
            backend="external" if s.url else s.backend,
            hardware=self.hardware,
            workload=s.workload.key(),
            planned_concurrency=list(s.concurrency),
        )

    def _run_in(self, results: RunResults) -> DepthRun:
        run = results.depth(self.depth)
        if run is None:
            run = self._new_run()
            results.runs.append(run)
            results.runs.sort(key=lambda r: r.depth)
        return run

    def _record_run(self) -> None:
        def change(results: RunResults) -> None:
            run = self._run_in(results)
            run.server = self.summary
            run.hardware = self.hardware
            if self.testbed is not None:
                run.testbed = measured_testbed(self.testbed, run.points)
            results.slo = self.settings.slo

        self.store.update(change)


def _put_point(run: DepthRun, point: PointMetrics) -> None:
    """Add the point to the run, replacing the earlier version of it (fewer samples)."""
    run.points = [p for p in run.points if p.concurrency != point.concurrency] + [point]
    run.points.sort(key=lambda p: p.concurrency)


def refresh_recommendation(results: RunResults) -> None:
    """Recomputed from every point recorded so far (a run cut short still gets one)."""
    results.recommendation = recommend(results.runs)


def refine(sessions: list[DepthSession]) -> list[str]:
    """--specperf-refine: measure the switch points of the recommendation's boundaries on
    every depth whose server is still up; one line per point measured or not measured."""
    if not sessions:
        return []
    results = sessions[0].store.load()
    measured = {p.concurrency for run in (results.runs if results else []) for p in run.points}
    targets = refine_concurrencies(results.recommendation if results else None, measured)
    if not targets:
        return ["refine: the best depth does not change between measured concurrencies"]
    lines: list[str] = []
    for concurrency in targets:
        for session in sorted(sessions, key=lambda item: item.depth):
            if session.failure is not None:
                lines.append(f"refine: steps={session.depth} C={concurrency} not measured")
                continue
            with contextlib.suppress(ServerDied):
                point = session.measure_refined(concurrency)
                lines.append(
                    f"refine: steps={session.depth} C={concurrency} measured "
                    f"({point.agg_tok_s:,.1f} agg tok/s)"
                )
    return lines


def write_baselines(
    settings: Settings, runs: list[DepthRun], session_problem: str | None = None
) -> list[str]:
    """Record the baseline of every depth whose run completed cleanly; one line per depth.

    Nothing is written from a run that failed, was interrupted, never finished (its process
    died), missed a planned point or had a failed request, nor from any depth when the test
    session itself did not pass (``session_problem`` says why). A baseline that the new one
    would downgrade (fewer boots or samples, another workload or sweep) is kept unless
    --specperf-allow-baseline-downgrade: the line shows the old and new provenance and the
    command that re-records it as it was (see ``refused_downgrades``).
    """
    lines: list[str] = []
    source = "url" if settings.url else settings.backend
    how = f"pytest-specperf --specperf-update-baselines ({source})"
    control = control_run(runs)
    usable_control = control if control is not None and not incomplete_reason(control) else None
    for run in runs:
        problem = incomplete_reason(run) or session_problem
        if problem is not None:
            lines.append(f"steps={run.depth}: NOT written ({problem})")
            continue
        if settings.calibrate:
            baseline = baseline_from_runs(
                split_by_boot(run),
                tolerance=Tolerance(throughput=settings.tolerance),
                how_recorded=how.replace("--specperf-update-baselines", "--specperf-calibrate"),
                source="calibrated",
                control=usable_control,
                slo=settings.slo,
            )
        else:
            baseline = baseline_from_run(
                run,
                tolerance=Tolerance(throughput=settings.tolerance),
                how_recorded=how,
                control=usable_control,
                slo=settings.slo,
            )
        try:
            refusal = _downgrade_refusal(settings, baseline)
            if refusal is not None:
                lines.append(f"steps={run.depth}: {REFUSED_DOWNGRADE}: {refusal}")
                continue
            path = _save_unless_interrupted(settings.baselines_dir, baseline)
        except SpecperfError as exc:
            lines.append(f"steps={run.depth}: NOT written: {exc}")
            continue
        if path is None:
            lines.append(f"steps={run.depth}: NOT written (the run was interrupted)")
            continue
        lines.append(f"steps={run.depth}: wrote {path}")
    return lines


# The start of a write_baselines line for a recording refused as a downgrade.
REFUSED_DOWNGRADE = "NOT written (it would downgrade the baseline)"


def _downgrade_refusal(settings: Settings, new: Baseline) -> str | None:
    """Why writing ``new`` would downgrade the baseline it replaces (and what to run), or None."""
    if settings.allow_baseline_downgrade:
        return None
    path = baseline_path(
        settings.baselines_dir, new.profile, new.hardware, new.depth, new.workload_name
    )
    old = load_baseline(path)
    if old is None:
        return None
    reasons = downgrade_reasons(old, new)
    if not reasons:
        return None
    message = downgrade_message(str(path), old, new, reasons)
    if not old.workload or old.workload == new.workload:
        like_before = record_command(settings, [new.depth], old=old)
        message += f"; re-record it as it was with: {like_before}"
    return f"{message}; or replace it anyway with {ALLOW_DOWNGRADE_FLAG}"


def _save_unless_interrupted(root: Path, baseline: Baseline) -> Path | None:
    """The baseline's path once saved; None if the run was interrupted before or meanwhile
    (the file is then as it was). A signal later in the run takes it back too
    (interrupts.conclude): an interrupted run writes no baseline."""
    if interrupts.interrupted() is not None:
        return None
    path = baseline_path(
        root, baseline.profile, baseline.hardware, baseline.depth, baseline.workload_name
    )
    previous = path.read_bytes() if path.is_file() else None

    def put_back() -> None:
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write_bytes(path, previous)

    with interrupts.deferred():
        save_baseline(root, baseline)
        interrupts.on_interrupt(put_back)
    if interrupts.interrupted() is not None:
        put_back()
        return None
    return path


def _swept(run: DepthRun, samples: int) -> bool:
    """Every planned point of the run holds at least ``samples`` samples."""
    for concurrency in run.planned_concurrency:
        point = run.point(concurrency)
        if point is None or len(point.all_samples()) < samples:
            return False
    return True


def load_baseline_safely(session: DepthSession) -> tuple[Path | None, Baseline | None, str | None]:
    """(path, baseline, None), or (path or None, None, error line) for a bad file or key."""
    try:
        path, baseline = session.baseline()
    except BaselineError as exc:
        return None, None, str(exc)
    return path, baseline, None


def why_unjudged(
    settings: Settings, depth: int, hardware: str
) -> tuple[str, Baseline | None, bool]:
    """Why a depth's throughput got no verdict, as a few words: (reason, the baseline found
    or None, whether it is another workload's, which a re-recording must replace on purpose)."""
    try:
        path = baseline_path(
            settings.baselines_dir, settings.profile.name, hardware, depth, settings.workload.name
        )
        baseline = load_baseline(path)
    except BaselineError as exc:
        return str(exc), None, False
    if baseline is None:
        return f"no baseline ({path} is missing)", None, False
    mismatch = workload_mismatch(settings.workload.key(), baseline)
    if mismatch:
        return f"{mismatch}: not comparable ({path})", baseline, True
    measured = [c for c in settings.concurrency if baseline.point(c) is not None]
    if not measured:
        levels = ",".join(sorted(baseline.points, key=int))
        return (
            f"{path} has no figures for the measured concurrencies (it has C={levels})",
            (baseline),
            False,
        )
    return f"every throughput check was skipped ({path})", baseline, False
