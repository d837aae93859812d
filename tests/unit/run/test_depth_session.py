"""run/depth_session.py: DepthSession with repeats: interleaved sweeps, samples recorded one
by one, remeasure, calibration across boots. The load generator is replaced by a recorder (no
server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.measure.warmup import WarmupPlan
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import Warmup
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.sampling import ServerDied
from tests.support.points import make_point


class Recorder:
    """Stands in for measure_point: records the concurrency of every call, in order."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.on_call: Any = None

    async def __call__(self, base_url: str, workload: Workload, concurrency: int, **_: Any) -> Any:
        self.calls.append(concurrency)
        if self.on_call is not None:
            self.on_call()
        agg = 100.0 + len(self.calls)
        return make_point(concurrency, agg, agg, requests=2)


def settings(tmp_path: Path, **options: str) -> Settings:
    values = {"backend": "sim", "concurrency": "1,4", **options}
    return build_settings(lambda key: values.get(key), tmp_path)


class WarmupRecorder:
    """Stands in for warm_up: records each call's concurrencies, and when it came."""

    def __init__(self, recorder: Recorder, figure: float = 1.0) -> None:
        self.recorder = recorder
        self.figure = figure  # every round's agg tok/s (0: no token came back)
        self.calls: list[tuple[list[int], int]] = []  # (concurrencies, samples before it)

    async def __call__(
        self, base_url: str, workload: Workload, levels: list[int], plan: WarmupPlan, **_: Any
    ) -> Warmup:
        self.calls.append((list(levels), len(self.recorder.calls)))
        return Warmup(
            seconds=1.0,
            rounds=2,
            settled=True,
            stopped_by="settled",
            concurrency=list(levels),
            agg_tok_s=[[self.figure] * len(levels)] * 2,
            tolerance=plan.tolerance,
            max_rounds=plan.max_rounds,
        )


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    fake = Recorder()
    monkeypatch.setattr("pytest_specperf.run.sampling.measure_point", fake)
    monkeypatch.setattr("pytest_specperf.run.sampling.warm_up", WarmupRecorder(fake))
    return fake


@pytest.fixture
def warmups(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> WarmupRecorder:
    fake = WarmupRecorder(recorder)
    monkeypatch.setattr("pytest_specperf.run.sampling.warm_up", fake)
    return fake


def session(tmp_path: Path, **options: str) -> DepthSession:
    depth = DepthSession(settings(tmp_path, **options), 3, ResultsStore(tmp_path / "out"))
    depth.base_url = "http://127.0.0.1:1"
    return depth


def test_first_point_asked_for_measures_the_whole_sweep_interleaved(
    tmp_path: Path, recorder: Recorder
) -> None:
    depth = session(tmp_path, repeats="3")
    point = depth.measure(4)
    assert recorder.calls == [1, 4, 1, 4, 1, 4]
    assert len(point.samples) == 3


def test_later_points_of_a_swept_depth_are_not_measured_again(
    tmp_path: Path, recorder: Recorder
) -> None:
    depth = session(tmp_path, repeats="2")
    depth.measure(1)
    depth.measure(4)
    assert len(recorder.calls) == 4


def test_without_repeats_each_point_is_measured_when_asked_for(
    tmp_path: Path, recorder: Recorder
) -> None:
    depth = session(tmp_path)
    depth.measure(4)
    assert recorder.calls == [4]


def test_results_json_holds_every_sample_measured_so_far(
    tmp_path: Path, recorder: Recorder
) -> None:
    """Written after every sample: what an interruption would leave behind."""
    depth = session(tmp_path, repeats="2")
    seen: list[int] = []

    def count_samples() -> None:
        results = depth.store.load()
        run = results.depth(3) if results else None
        seen.append(sum(len(p.samples) or 1 for p in run.points) if run else 0)

    recorder.on_call = count_samples
    depth.measure(1)
    assert seen == [0, 1, 2, 3]
    run = depth.run_snapshot()
    assert [len(p.samples) for p in run.points] == [2, 2]


def test_remeasure_adds_r_samples_to_the_point(tmp_path: Path, recorder: Recorder) -> None:
    depth = session(tmp_path, repeats="2")
    depth.measure(1)
    point = depth.remeasure(4)
    assert recorder.calls[-2:] == [4, 4]
    assert len(point.samples) == 4
    assert len(depth.run_snapshot().point(4).samples) == 4  # type: ignore[union-attr]


def counted_reboots(
    depth: DepthSession, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> list[int]:
    """The depth's reboots, each as the number of samples measured before it."""
    reboots: list[int] = []

    def reboot() -> None:
        reboots.append(len(recorder.calls))
        depth.boot += 1

    monkeypatch.setattr(depth, "reboot", reboot)
    return reboots


def test_calibration_across_boots_reboots_between_rounds_and_tags_samples(
    tmp_path: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    depth = session(tmp_path, repeats="2", calibrate="1", calibrate_boots="2")
    reboots = counted_reboots(depth, recorder, monkeypatch)
    point = depth.measure(1)
    assert reboots == [4]
    assert [s.boot for s in point.samples] == [0, 0, 1, 1]


def test_a_calibrated_depth_swept_already_is_not_booted_again(
    tmp_path: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tests after the sweep ask for it again: no further boot (the seed-class record on
    the H200 took 1,188 s for an estimated 842: each of them restarted the server twice)."""
    depth = session(tmp_path, repeats="2", calibrate="1", calibrate_boots="3")
    reboots = counted_reboots(depth, recorder, monkeypatch)
    depth.measure(1)
    for _ in range(4):
        depth.measure_all()
    assert reboots == [4, 8]
    assert len(recorder.calls) == 12


def test_each_boot_of_a_depth_keeps_its_own_server_log(tmp_path: Path) -> None:
    depth = session(tmp_path, calibrate="1", calibrate_boots="3")
    names = []
    for boot in range(3):
        depth.boot = boot
        names.append(depth.log_path.name)
    assert names == ["server-steps3.log", "server-steps3-boot2.log", "server-steps3-boot3.log"]


def test_calibrate_implies_recording_baselines(tmp_path: Path) -> None:
    assert settings(tmp_path, calibrate="1").update_baselines


def test_min_point_seconds_reaches_the_workload(tmp_path: Path) -> None:
    assert settings(tmp_path, min_point_seconds="3.5").workload.min_point_seconds == 3.5


def test_calibrate_boots_without_calibrate_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="only with --specperf-calibrate"):
        settings(tmp_path, calibrate_boots="2")


def test_calibration_boots_three_times_unless_told_or_on_a_given_url(tmp_path: Path) -> None:
    """Fewer than 3 boots cannot estimate the noise between boots (issue 19)."""
    assert settings(tmp_path, calibrate="1").calibrate_boots == 3
    assert settings(tmp_path, calibrate="1", url="http://127.0.0.1:1").calibrate_boots == 1
    assert settings(tmp_path).calibrate_boots == 1


def test_calibrate_boots_on_a_given_url_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot be restarted"):
        settings(tmp_path, calibrate="1", calibrate_boots="2", url="http://127.0.0.1:1")


def test_a_boot_that_fails_during_calibration_ends_the_sweep_as_a_dead_server(
    tmp_path: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    depth = session(tmp_path, repeats="1", calibrate="1", calibrate_boots="2")

    def reboot() -> None:
        depth.fail_run("server did not become healthy within 1 s")
        raise SpecperfError("server did not become healthy within 1 s")

    monkeypatch.setattr(depth, "reboot", reboot)
    with pytest.raises(ServerDied, match="did not become healthy"):
        depth.measure(1)
    assert depth.run_snapshot().status == "failed"


def test_each_boot_is_warmed_over_the_whole_sweep_before_its_first_sample(
    tmp_path: Path, recorder: Recorder, warmups: WarmupRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    depth = session(tmp_path, repeats="2", calibrate="1", calibrate_boots="2")

    def reboot() -> None:
        depth.boot += 1

    monkeypatch.setattr(depth, "reboot", reboot)
    depth.measure(1)
    depth.remeasure(4)  # same boot: no second warm-up
    assert warmups.calls == [([1, 4], 0), ([1, 4], 4)]
    recorded = depth.run_snapshot().warmups
    assert [w.boot for w in recorded] == [0, 1]


def test_a_point_outside_the_sweep_is_warmed_too(
    tmp_path: Path, recorder: Recorder, warmups: WarmupRecorder
) -> None:
    depth = session(tmp_path)
    depth.measure_refined(2)
    assert warmups.calls == [([1, 2, 4], 0)]


def test_zero_warmup_rounds_turn_the_boot_warmup_off(
    tmp_path: Path, recorder: Recorder, warmups: WarmupRecorder
) -> None:
    depth = session(tmp_path, warmup_rounds="0")
    depth.measure(4)
    assert warmups.calls == [] and recorder.calls == [4]
    assert depth.run_snapshot().warmups == []


class DeadServer:
    """A server process that died (as ServerProcess reports it)."""

    def alive(self, settle_s: float = 0.0) -> bool:
        return False

    def exit_code(self) -> int:
        return -9

    def log_tail(self) -> str:
        return "killed"


class ExitingServer(DeadServer):
    """Its connections died, its process not yet seen gone: dead once given time to exit."""

    def alive(self, settle_s: float = 0.0) -> bool:
        return settle_s == 0


class RefusedRecorder(Recorder):
    """measure_point whose requests were refused: the server died during the point."""

    def __init__(self, depth: DepthSession) -> None:
        super().__init__()
        self.depth = depth

    async def __call__(self, base_url: str, workload: Workload, concurrency: int, **_: Any) -> Any:
        point = await super().__call__(base_url, workload, concurrency)
        point.errors = {"connection refused": point.requests}
        self.depth.server = ExitingServer()  # type: ignore[assignment]
        return point


def test_a_point_whose_connections_broke_gives_the_server_time_to_be_seen_dead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not reported one point late: the crash is named at the point it happened."""
    depth = session(tmp_path)
    fake = RefusedRecorder(depth)
    monkeypatch.setattr("pytest_specperf.run.sampling.measure_point", fake)
    monkeypatch.setattr("pytest_specperf.run.sampling.warm_up", WarmupRecorder(fake))
    with pytest.raises(ServerDied, match=r"was killed by SIGKILL while measuring C=1"):
        depth.measure(1)


def test_a_warmup_that_got_no_token_gives_the_server_time_to_be_seen_dead(
    tmp_path: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "pytest_specperf.run.sampling.warm_up", WarmupRecorder(recorder, figure=0.0)
    )
    depth = session(tmp_path)
    depth.server = ExitingServer()  # type: ignore[assignment]
    with pytest.raises(ServerDied, match=r"while warming up \(boot 1\)"):
        depth.measure(1)


def test_a_server_that_dies_during_the_warmup_fails_the_run_before_any_sample(
    tmp_path: Path, recorder: Recorder, warmups: WarmupRecorder
) -> None:
    depth = session(tmp_path)
    depth.server = DeadServer()  # type: ignore[assignment]
    with pytest.raises(ServerDied, match=r"was killed by SIGKILL while warming up \(boot 1\)"):
        depth.measure(1)
    assert recorder.calls == []
    assert depth.run_snapshot().status == "failed"


def test_a_sample_on_the_boot_names_its_activity_and_an_interrupt_in_it_fails_the_run(
    tmp_path: Path,
) -> None:
    """sampling(), the way onto the current boot that the open-loop points share with the
    session's own samples: the activity while it runs, a Ctrl-C in it recorded."""
    depth = session(tmp_path, warmup_rounds="0")
    with depth.sampling("measuring rate=4", warm_up_at=1) as target:
        assert target.base_url == "http://127.0.0.1:1"
        assert depth.activity == "measuring rate=4"
    assert depth.activity is None and depth.failure is None
    with pytest.raises(KeyboardInterrupt), depth.sampling("measuring rate=4", warm_up_at=1):
        raise KeyboardInterrupt
    assert depth.failure == "interrupted (Ctrl-C / SIGINT) while measuring rate=4"
    assert depth.activity is None
