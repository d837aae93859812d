"""Open-loop points in the gate and the baselines: keyed by load, never colliding with the
closed-loop point of the same concurrency."""

from __future__ import annotations

import msgspec

from pytest_specperf.gate.baselines import Baseline, baseline_from_run, encode_baseline
from pytest_specperf.gate.decision import GateSettings, judge_depth
from pytest_specperf.gate.floors import headline, point_input
from pytest_specperf.history.rows import point_rows
from pytest_specperf.results.schema import DepthRun, RunResults
from tests.support.points import make_point, make_run


def _run(per_req: float) -> DepthRun:
    closed = make_point(4, 400.0, per_req=100.0)
    rate = make_point(4, 400.0, per_req=per_req, load="rate=4", request_rate=4.0)
    return make_run(3, [closed], rate_points=[rate])


def test_a_baseline_keeps_rate_points_apart_from_the_same_concurrency() -> None:
    baseline = baseline_from_run(_run(100.0), how_recorded="test")
    assert set(baseline.points) == {"4"} and set(baseline.rate_points) == {"rate=4"}
    again = msgspec.json.decode(encode_baseline(baseline), type=Baseline)
    assert again.rate_points["rate=4"].per_req_tok_s == 100.0


def test_an_old_baseline_without_rate_points_reads() -> None:
    baseline = baseline_from_run(_run(100.0), how_recorded="test")
    raw = msgspec.to_builtins(baseline)
    del raw["rate_points"], raw["slo_max_rate"]
    assert msgspec.convert(raw, Baseline).rate_points == {}


def test_a_slower_rate_point_is_a_regression_named_by_its_load() -> None:
    baseline = baseline_from_run(_run(100.0), how_recorded="test")
    now = _run(70.0)
    inputs = [point_input(p, baseline) for p in now.rate_points]
    verdicts = judge_depth(3, inputs, GateSettings(), path="b.json", refresh_hint="rec")
    bad = [v for v in verdicts if v.outcome == "regression"]
    assert [(v.load, v.concurrency, v.metric) for v in bad] == [("rate=4", None, "per_req_tok_s")]
    assert headline(bad[0]).startswith("steps=3 rate=4 per-req 70.0 < floor 90.0")
    assert bad[0].message.startswith("steps=3 rate=4: per-req tok/s 70.0 < floor")


def test_history_rows_hold_both_points_of_concurrency_4() -> None:
    results = RunResults(run_id="r", started_at="t", tool_version="v", runs=[_run(100.0)])
    rows = point_rows(results)
    assert [(r["concurrency"], r["load"]) for r in rows] == [(4, ""), (0, "rate=4")]
