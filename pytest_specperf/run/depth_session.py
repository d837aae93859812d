"""One depth's run: boot (or attach to) a server, warm it up, measure points, record them.

Plain code, no pytest: the plugin's fixtures, ``specperf bench`` and A/B mode's boots drive
it. Its collaborators each do one job: ``Sampler`` (run/sampling.py) takes the samples,
``RunRecord`` (run/run_record.py) keeps the depth's record in results.json.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import ServerArgumentsRefused, SpecperfError
from pytest_specperf.measure.repeats import interleaved, merge_samples
from pytest_specperf.results.schema import DepthRun, PointMetrics, ServerSummary
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.open_loop import OpenLoopPoints, with_metrics
from pytest_specperf.run.run_record import RunRecord
from pytest_specperf.run.sampling import (
    PointObserver,
    Sampler,
    ServerDied,
    ServerGone,
    Target,
    describe_exit,
    settle_after,
    settle_after_warmup,
)
from pytest_specperf.server import cpu_use
from pytest_specperf.server.fingerprint import collect as collect_testbed
from pytest_specperf.server.gpu_use import ServerGpus
from pytest_specperf.server.gpus import gpu_env, visible_gpus
from pytest_specperf.server.hardware import hardware_key
from pytest_specperf.server.launch import (
    LaunchCommand,
    build_launch,
    require_server_module,
    server_environment,
)
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import (
    ServerProcess,
    fetch_server_info,
    inject_slowdown,
    launch,
    summarize_server_info,
)


class SamplingPlan:
    """How much each planned point is measured: R samples on each of B boots."""

    def __init__(self, settings: Settings) -> None:
        self.repeats = settings.repeats
        self.boots = settings.calibrate_boots if settings.calibrate else 1

    @property
    def samples_per_point(self) -> int:
        """Samples of each planned point once the sweep is done (confirmation may add more)."""
        return self.repeats * self.boots

    @property
    def sweeps_together(self) -> bool:
        """Repeats and calibration measure every point in one interleaved sweep."""
        return self.repeats > 1 or self.boots > 1


class DepthSession:
    def __init__(self, settings: Settings, depth: int, store: ResultsStore) -> None:
        self.settings = settings
        self.depth = depth
        self.store = store
        self.plan = SamplingPlan(settings)
        self.record = RunRecord(settings, depth, store)
        self.sampler = Sampler(settings, depth)
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
        # Open-loop points by load, those measured in full, and the SLO rate search.
        self.open_loop = OpenLoopPoints(self, self.plan.repeats)

    # -- lifecycle ---------------------------------------------------------------------
    def launch_command(self, port: int) -> LaunchCommand:
        s = self.settings
        command = build_launch(
            s.profile,
            self.depth,
            backend=s.backend,
            host="127.0.0.1",
            port=port,
            server_args=with_metrics(s),
            api_key=s.api_key,
            model_path=self.model_path,
            python=s.python,
            sim_speedup=s.sim_speedup if s.backend == "sim" else None,
        )
        command.env.update(gpu_env(self.gpus))
        command.env.update(server_environment(s.server_env))
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
        self.record.server(self.summary, self.hardware)
        self.activity = "booting the server"
        try:
            if s.url is None:
                require_server_module(self.launch_command(0))
                if s.profile.model_factory:
                    self.model_path = str(build_model(s.profile.model_factory))
                timeout = s.profile.launch_timeout_s or s.launch_timeout_s
                if s.server_cpu == "pin-fastest":
                    self.sampler.time_free_cores(self.worker)
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
        except ServerArgumentsRefused as exc:
            message = f"steps={self.depth}: {exc}"
            self.fail_run(message)
            raise ServerArgumentsRefused(message) from exc
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
            summary.free_core_speeds = dict(self.sampler.free_core_speeds) or None
            rotation = self.sampler.rotation
            if rotation is not None and s.server_cpu == "pin-fastest":
                summary.pinned_core = rotation.cores[0]
        if self.server is not None and s.backend == "sglang":
            self.sampler.server_gpus = ServerGpus.open(
                self.gpus if self.gpus is not None else visible_gpus(), summary.tp_size
            )
        if self.server is not None:
            testbed = collect_testbed(
                gpus=self.sampler.server_gpus,
                python=s.python,
                sglang_reported=summary.version,
                real_server=s.backend == "sglang",
            )
            if summary.pinned_core is not None:
                testbed.core_speed = self.sampler.free_core_speeds.get(summary.pinned_core)
            self.record.testbed = testbed
        self.summary = summary
        self.hardware = hardware_key(info, override=s.hardware, tp_size=summary.tp_size)
        self.record.server(self.summary, self.hardware)
        return summary

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
            self.record.finished(self.hardware)

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
        self.sampler.new_boot()
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
        if self.plan.sweeps_together and concurrency in self.settings.concurrency:
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
        for index in range(self.plan.repeats):
            label = f"refining C={concurrency}"
            if self.plan.repeats > 1:
                label += f" (sample {index + 1}/{self.plan.repeats})"
            last = index == self.plan.repeats - 1
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
        for boot in range(self.plan.boots):
            if boot > 0:
                try:
                    self.reboot()
                except SpecperfError as exc:  # recorded by open(); reported like a crash
                    raise ServerDied(self.failure or str(exc)) from None
            for round_index, level in interleaved(levels, self.plan.repeats):
                if self.failure is not None:
                    raise ServerGone(self.failure)
                label = f"measuring C={level} (sample {round_index + 1}/{self.plan.repeats}"
                label += f", boot {boot + 1}/{self.plan.boots})" if self.plan.boots > 1 else ")"
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
        for index in range(self.plan.repeats):
            self._sample(
                concurrency,
                label=f"re-measuring C={concurrency} (sample {index + 1}/{self.plan.repeats})",
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
        with self.sampling(label, warm_up_at=concurrency) as target:
            sample, durations = self.sampler.sample(
                target, concurrency, self.observer, refined=refined
            )
        earlier = self.points.get(concurrency)
        point = merge_samples([earlier, sample]) if earlier is not None else sample
        succeeded = f"; {sample.ok}/{sample.requests} requests had succeeded"
        self.check_alive(label + succeeded, settle_after(sample), point)
        with interrupts.deferred():
            self.points[concurrency] = point
            self.request_e2e_s.setdefault(concurrency, []).extend(durations)
            self.record.point(point, self.hardware)
            if completes:
                self.complete.add(concurrency)
        return point

    @contextlib.contextmanager
    def sampling(self, label: str, *, warm_up_at: int) -> Iterator[Target]:
        """One sample on the current boot, closed-loop or open-loop (run/open_loop.py): the
        server to send it to, the boot warmed up first (at concurrency ``warm_up_at``, if it
        was not yet), ``label`` the session's activity while it runs; a Ctrl-C meanwhile is
        recorded as the run's failure. The caller checks the server lived (``check_alive``)."""
        target = self._target()
        try:
            self._warm_up_boot(target, warm_up_at)
            self.activity = label
            yield target
        except KeyboardInterrupt as exc:
            self.interrupt(exc)
            raise
        finally:
            self.activity = None

    def _target(self) -> Target:
        assert self.base_url is not None, "open() first"
        model = self.summary.model_path if self.summary and self.summary.model_path else "default"
        return Target(self.base_url, model, self.boot, self.server, self.worker)

    def _warm_up_boot(self, target: Target, concurrency: int) -> None:
        """Before the first sample of a boot: its warm-up, recorded (run/sampling.py)."""
        if not self.sampler.needs_warm_up(self.boot):
            return
        doing = f"warming up (boot {self.boot + 1})"
        self.activity = doing
        warmup = self.sampler.warm_up(target, concurrency)
        self.record.warmup(warmup, self.hardware)
        self.check_alive(doing, settle_after_warmup(warmup))

    def check_alive(self, doing: str, settle_s: float, point: PointMetrics | None = None) -> None:
        """ServerDied (recorded as the run's failure, with the log's tail) if the server this
        session started exited while ``doing``."""
        if self.server is None or self.server.alive(settle_s):
            return
        message = (
            f"server (steps={self.depth}) {describe_exit(self.server.exit_code())} "
            f"while {doing} (log: {self.log_path})\n"
            f"--- server log tail ---\n{self.server.log_tail()}"
        )
        self.fail_run(message, point)
        raise ServerDied(message)

    def measure_all(self) -> DepthRun:
        """Every planned point not measured yet, in order; then the run as recorded."""
        if self.plan.sweeps_together:
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
        return self.record.snapshot(self.hardware)

    def fail_run(self, message: str, point: PointMetrics | None = None) -> None:
        self.failure = message
        with interrupts.deferred():
            self.record.failed(message, point, self.hardware)
