"""How long must a point run? Spread of repeated points against --specperf-min-point-seconds.

    python lab/studies/point_length.py --tokens 64 --min-seconds 0,1,2,4 --repeats 5

Boots ONE simulator (the default profile at depth 3, through the suite's own launch code,
with per-step jitter so that a short point sees few steps to average over) and measures
each concurrency R times per minimum duration, the concurrencies interleaved as the suite
does with --specperf-repeats. Prints, per (minimum, C), the mean point duration and the
coefficient of variation (CV) of agg and per-request tok/s over the repeats.

What the simulator shows is the share of the spread that comes from the point's length
(steps averaged, the closed loop's ramp and tail, the client's own timing on this machine);
a real server's boot-to-boot and model noise come on top (docs/explanation/repeats.md).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.workload import Workload
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.process import launch
from pytest_specperf.server.profiles import DEFAULT_PROFILE, builtin_profiles


def _cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


def _numbers(text: str, kind: type[float] | type[int]) -> list[float]:
    return [kind(item) for item in text.split(",") if item.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=64, help="max new tokens per request")
    parser.add_argument("--min-seconds", default="0,1,2,4", help="minimum point durations")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--speedup", type=float, default=5.0)
    parser.add_argument("--jitter", type=float, default=0.2, help="sim per-step jitter (CV)")
    args = parser.parse_args()

    profile = builtin_profiles()[DEFAULT_PROFILE]
    extra = ("--sim-jitter", str(args.jitter))

    def command(port: int) -> LaunchCommand:
        return build_launch(
            profile, 3, backend="sim", port=port, sim_speedup=args.speedup, server_args=extra
        )

    levels = [int(c) for c in _numbers(args.concurrency, int)]
    print(
        f"sim speedup {args.speedup:g}, steps 3, {args.tokens} tokens per request, "
        f"per-step jitter {args.jitter:g}, {args.repeats} repeats, C={levels} interleaved"
    )
    print("| min s | C | mean point s | requests | CV agg | CV per-req |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="specperf-length-") as workdir:
        server = launch(
            command,
            host="127.0.0.1",
            log_path=Path(workdir) / "sim.log",
            launch_timeout_s=60,
            api_key=None,
        )
        try:
            for min_seconds in _numbers(args.min_seconds, float):
                workload = Workload(max_new_tokens=args.tokens, min_point_seconds=min_seconds)
                samples: dict[int, list[tuple[float, float, float, int]]] = {c: [] for c in levels}
                for _ in range(args.repeats):
                    for level in levels:
                        point = event_loop.run(
                            measure_point(server.url, workload, level, warmup=True)
                        )
                        samples[level].append(
                            (point.wall_s, point.agg_tok_s, point.per_req_tok_s or 0.0, point.ok)
                        )
                for level in levels:
                    rows = samples[level]
                    print(
                        f"| {min_seconds:g} | {level} | "
                        f"{statistics.mean(r[0] for r in rows):.2f} | "
                        f"{statistics.mean(r[3] for r in rows):.0f} | "
                        f"{_cv([r[1] for r in rows]):.1%} | {_cv([r[2] for r in rows]):.1%} |",
                        flush=True,
                    )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
