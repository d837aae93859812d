"""pytest_specperf.results.report: the seed's table per depth and the depth trade-off."""

from __future__ import annotations

from pytest_specperf.results.report import (
    depth_table,
    full_report,
    server_cpu_line,
    tradeoff_table,
    warmup_line,
)
from pytest_specperf.results.schema import (
    CPU_BOUND_MEANING,
    ClientHealth,
    DepthRun,
    PointMetrics,
    ServerCpu,
    ServerSummary,
    Warmup,
)
from tests.support import points

SEED_COLUMNS = "C | Agg tok/s | Per-req tok/s | Tokens | Wall (s) | Ok"


make_point = points.seed_point


def make_run(depth: int, kv_tokens: int) -> DepthRun:
    server = ServerSummary(url="u", max_total_num_tokens=kv_tokens, max_running_requests=48)
    seed = [make_point(16, 3000.0), make_point(1, 250.0), make_point(4, 900.0)]
    return points.make_run(depth, seed, server=server)


def test_seed_table_has_seed_header() -> None:
    """The column header starts with the seed's columns."""
    lines = depth_table(make_run(3, 1000)).text().splitlines()
    assert lines[1].startswith(SEED_COLUMNS)


def test_seed_table_has_one_row_per_point_sorted_by_c() -> None:
    """Each point is one row, in increasing concurrency."""
    rows = depth_table(make_run(3, 1000)).text().splitlines()[3:]
    assert [row.split(" | ")[0] for row in rows] == ["1", "4", "16"]
    assert rows[0].split(" | ")[1:6] == ["250.0", "250.0", "1,000", "10.0", "2/2"]


def test_seed_table_without_points_says_so() -> None:
    """A depth without points says no point was measured."""
    run = DepthRun(depth=1, profile="p", backend="sim", hardware="h", workload={})
    assert depth_table(run).text().splitlines()[-1] == "(no point measured)"


def test_seed_table_heading_names_depth_and_kv() -> None:
    """The heading names the depth and the KV capacity."""
    heading = depth_table(make_run(2, 28951187)).text().splitlines()[0]
    assert "steps=2" in heading and "max_total_num_tokens=28,951,187" in heading


def test_tradeoff_table_has_a_column_per_depth() -> None:
    """The trade-off header has one column per depth, in depth order."""
    table = tradeoff_table([make_run(3, 900), make_run(1, 1000)]).text()
    header = table.splitlines()[1]
    assert header.index("steps=1") < header.index("steps=3")


def test_tradeoff_table_has_a_kv_row() -> None:
    """The KV row gives each depth's token capacity and running requests."""
    lines = tradeoff_table([make_run(1, 1000), make_run(3, 900)]).text().splitlines()
    kv = [line for line in lines if line.startswith("KV | ")]
    assert kv == ["KV | 1,000 tokens, 48 running | 900 tokens, 48 running"]


def test_tradeoff_table_has_a_row_per_concurrency() -> None:
    """Each concurrency measured at any depth has a row."""
    lines = tradeoff_table([make_run(1, 1000), make_run(3, 900)]).text().splitlines()
    assert [line.split(" | ")[0] for line in lines[3:6]] == ["1", "4", "16"]


def test_point_whose_client_fell_behind_gets_a_note() -> None:
    """The table says which point's figures the client itself may have held down."""
    run = make_run(3, 1000)
    run.points[0].client = ClientHealth(
        cpu_s=9.8, wall_s=10.0, loop_lag_p50_s=0.01, loop_lag_p99_s=0.2, loop_lag_max_s=0.3,
        samples=500,
    )  # fmt: skip
    lines = depth_table(run).text().splitlines()
    notes = [line for line in lines if line.startswith("C=")]
    assert len(notes) == 1 and notes[0].startswith("C=16: the load generator fell behind")


def test_healthy_clients_add_no_note() -> None:
    run = make_run(3, 1000)
    for point in run.points:
        point.client = ClientHealth(
            cpu_s=2.0, wall_s=10.0, loop_lag_p50_s=0.0, loop_lag_p99_s=0.002,
            loop_lag_max_s=0.004, samples=900,
        )  # fmt: skip
    assert not [line for line in depth_table(run).text().splitlines() if line.startswith("C=")]


def test_full_report_places_the_speedup_table_after_the_trade_off() -> None:
    """With depth 0 in the run, the speculation sections follow the trade-off table."""
    text = full_report([make_run(0, 2000), make_run(3, 1000)])
    assert text.index("Speculation depth trade-off") < text.index("Speedup over no speculation")


def test_point_with_truth_problems_gets_a_note_per_problem() -> None:
    """Every impossible figure of a point is named beside the table."""
    run = make_run(3, 1000)
    run.points[1].truth_problems = ["2/2 requests: e2e shorter than TTFT"]
    notes = [line for line in depth_table(run).text().splitlines() if line.startswith("C=")]
    assert notes == ["C=1: figures that cannot be true: 2/2 requests: e2e shorter than TTFT"]


def _warmup(**fields: object) -> Warmup:
    values: dict[str, object] = {
        "seconds": 12.44,
        "rounds": 3,
        "settled": True,
        "stopped_by": "settled",
        "concurrency": [1, 4],
        "agg_tok_s": [[80.0, 270.0], [97.0, 340.0], [96.0, 345.5]],
        "tolerance": 0.05,
        "max_rounds": 3,
        **fields,
    }
    return Warmup(**values)  # type: ignore[arg-type]


def test_each_boots_warmup_is_a_line_under_the_depths_table() -> None:
    run = DepthRun(depth=3, profile="p", backend="sim", hardware="h", workload={})
    run.points = [make_point(1, 96.0)]
    run.warmups = [_warmup(), _warmup(boot=1, settled=False, stopped_by="rounds")]
    text = depth_table(run).text()
    assert (
        "warm-up boot 1: 3 rounds in 12.4 s, settled within 5%; agg tok/s by round: "
        "C=1 80.0 / 97.0 / 96.0; C=4 270.0 / 340.0 / 345.5" in text
    )
    assert "warm-up boot 2: 3 rounds in 12.4 s, NOT settled within 5% in 3 rounds" in text


def test_a_warmup_stopped_by_its_time_bound_says_so() -> None:
    line = warmup_line(_warmup(rounds=1, settled=False, stopped_by="seconds", max_seconds=30.0))
    assert "1 round in 12.4 s, NOT settled within 5%: stopped by the 30 s bound" in line


def _with_cpu(concurrency: int, process: str, share: float) -> PointMetrics:
    point = make_point(concurrency, 100.0 * concurrency)
    point.server_cpu = ServerCpu(process=process, share=share)
    return point


def test_a_depth_cpu_bound_at_every_point_says_so_under_its_table() -> None:
    run = points.make_run(
        3, [_with_cpu(1, "sglang::scheduler", 1.0), _with_cpu(4, "sglang::scheduler", 0.96)]
    )
    text = depth_table(run).text()
    assert (
        "server CPU: sglang::scheduler at C=1 100%, C=4 96% of one core; CPU-bound at every "
        f"point (at 90% of a core or more): {CPU_BOUND_MEANING}" in text
    )


def test_points_below_the_cpu_bound_share_are_shown_without_the_warning() -> None:
    line = server_cpu_line([_with_cpu(1, "python3", 0.4), _with_cpu(4, "python3", 0.85)])
    assert line == "server CPU: python3 at C=1 40%, C=4 85% of one core"


def test_only_the_cpu_bound_points_are_named_and_several_processes_each_shown() -> None:
    line = server_cpu_line([_with_cpu(1, "a", 0.5), _with_cpu(4, "b", 0.93)])
    assert line is not None
    assert line.startswith("server CPU, the busiest process of one core: C=1 a 50%, C=4 b 93%")
    assert "; CPU-bound at C=4 (at 90% of a core or more)" in line


def test_the_cpu_bound_process_vcpu_speeds_over_the_samples_follow_the_warning() -> None:
    slow, fast = _with_cpu(1, "sglang::scheduler", 1.0), _with_cpu(4, "sglang::scheduler", 1.0)
    slow.samples = [
        points.make_point(
            1, 90.0, server_cpu=ServerCpu(process="s", share=1.0, core=3, core_speed=4.5)
        ),
        points.make_point(
            1, 95.0, server_cpu=ServerCpu(process="s", share=1.0, core=3, core_speed=4.6)
        ),
    ]
    fast.server_cpu = ServerCpu(process="sglang::scheduler", share=1.0, core=6, core_speed=7.2)
    line = server_cpu_line([slow, fast])
    assert line is not None
    assert line.endswith(
        f"{CPU_BOUND_MEANING}; its vCPU ran a single-thread probe at 4.5-7.2 M loops/s over 3 "
        "samples, the fastest 1.6x the slowest: this runner's cores do not all run at one speed"
    )


def test_vcpu_speeds_close_together_add_no_uneven_cores_warning() -> None:
    point = _with_cpu(1, "sglang::scheduler", 1.0)
    point.server_cpu = ServerCpu(process="sglang::scheduler", share=1.0, core=0, core_speed=7.0)
    line = server_cpu_line([point])
    assert line is not None
    assert line.endswith("its vCPU ran a single-thread probe at 7.0 M loops/s over 1 sample")


def test_a_share_over_one_core_says_why() -> None:
    line = server_cpu_line([_with_cpu(1, "sglang::scheduler", 1.04)])
    assert line is not None
    assert line.startswith(
        "server CPU: sglang::scheduler at C=1 104% of one core (over 100%: the process has "
        "more than one busy thread); CPU-bound at every point"
    )


def test_a_full_core_beside_a_busy_gpu_is_called_gpu_bound_not_cpu_bound() -> None:
    waiting = _with_cpu(64, "sglang::scheduler", 1.0)
    waiting.bound = "gpu-bound"  # the seed point on the H200: GPU 93-96% busy
    working = _with_cpu(16, "sglang::scheduler", 1.0)
    working.bound = "cpu-bound"
    line = server_cpu_line([working, waiting])
    assert line is not None
    assert "; gpu-bound at C=64 (the GPU busy 90% or more" in line
    assert "; CPU-bound at C=16 (at 90% of a core or more)" in line
    assert server_cpu_line([waiting]) == (
        "server CPU: sglang::scheduler at C=64 100% of one core; gpu-bound at C=64 (the GPU "
        "busy 90% or more: the scheduler's core reads full while it spins waiting for the GPU)"
    )


def test_points_without_a_server_cpu_add_no_line() -> None:
    assert server_cpu_line([make_point(1, 100.0)]) is None


def test_a_single_warmup_round_that_could_not_settle_reads_in_the_singular() -> None:
    line = warmup_line(_warmup(rounds=1, settled=False, stopped_by="rounds", max_rounds=1))
    assert "1 round in 12.4 s, NOT settled within 5% in 1 round;" in line
