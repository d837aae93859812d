"""What each `/slow_down` sleep costs on one boot, and which sleep costs the target share.

SGLang sleeps in `Scheduler.run_batch` before it launches a batch. What that costs at a point
is measured, not assumed: on the seed-class profile at C=64 on an H200
(docs/runs/2026-12-05-ladder-slow10-h200) each verify step (29.7 ms without) grew by the sleep
plus 0.9-1.6 ms for sleeps of 24-36 ms on one boot and by 0.1-1.4 ms more than a 3 ms sleep in
an A/B's three head boots, while 0.12 ms cost nothing measurable there the day before. This
boots the profile once with the suite's launch code, measures one point with
`specperf bench --url` at each sleep (0 first, as the reference), and prints the change of
each. The last line, `SLOW=<seconds>`, is the measured sleep nearest the target where one came
within TOLERANCE of it; else the sleep a straight line through the measured slowdowns
(agg0 / agg - 1, which grows with the time added to a step) puts at the target, said as
fitted, where that lies within half the shortest and twice the longest sleep tried; else
nothing.

    python lab/gpu/slowdown_ladder.py OUT --profile qwen3-next-real-width-fp8-mtp \
        --concurrency 64 --sleeps 0.002 0.003 0.004 0.005 --target 0.10 \
        --server-arg=--cuda-graph-bs --server-arg=8 --server-arg=16 ...
    python lab/gpu/slowdown_ladder.py /tmp/ladder --backend sim --sleeps 0.001 0.002  # dry run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scipy import stats

from pytest_specperf.config.parsers import parse_backend
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import inject_slowdown, launch
from pytest_specperf.server.profiles import resolve_profile

DEPTH = 3
# A measured sleep whose change is this close to the target (in share) is taken as it is.
TOLERANCE = 0.03


def bench(url: str, out: Path, args: argparse.Namespace, *, warm: bool = True) -> float:
    """Median agg tok/s of one point measured by `specperf bench` at ``url``."""
    command = [
        sys.executable,
        "-m",
        "pytest_specperf.cli",
        "bench",
        "--url",
        url,
        "--specperf-profile",
        args.profile,
        "--concurrency",
        str(args.concurrency),
        "--max-new-tokens",
        str(args.max_new_tokens),
        "--repeats",
        str(args.repeats),
        "--min-point-seconds",
        str(args.min_point_seconds),
        "--out",
        str(out),
    ]
    if not warm:
        # The boot was warmed by the first bench; a changed sleep compiles nothing new.
        command += ["--specperf-warmup-rounds", "0"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    (out / "bench.txt").parent.mkdir(parents=True, exist_ok=True)
    (out / "bench.txt").write_text(done.stdout + done.stderr)
    results = json.loads((out / "results.json").read_text())
    point = results["runs"][0]["points"][0]
    return float(point["agg_tok_s"])


@dataclass(frozen=True)
class Choice:
    """The sleep to take for the target (None: none found) and the line that says why."""

    sleep: float | None
    line: str


def choose_sleep(rows: Sequence[tuple[float, float]], target: float) -> Choice:
    """The sleep costing ``target`` from (sleep, agg tok/s) rows, the first at sleep 0."""
    reference = rows[0][1]
    tried = [(sleep, agg / reference - 1) for sleep, agg in rows[1:] if agg > 0]
    if not tried:
        return Choice(None, "no sleep left the server serving")
    nearest = min(tried, key=lambda item: abs(item[1] + target))
    if abs(nearest[1] + target) <= TOLERANCE:
        return Choice(
            nearest[0], f"nearest {-target:+.0%}: {nearest[0] * 1e3:.2f} ms ({nearest[1]:+.1%})"
        )
    why_not = (
        f"no sleep came within {TOLERANCE:.0%} of {-target:+.0%} "
        f"(nearest {nearest[0] * 1e3:.2f} ms, {nearest[1]:+.1%})"
    )
    sleeps = [sleep for sleep, _ in tried]
    if len(set(sleeps)) < 2:
        return Choice(None, why_not)
    # agg0 / agg - 1 is the time a sleep adds to a step over the step's own: about linear.
    fit = stats.linregress(sleeps, [-change / (1 + change) for _, change in tried])
    if fit.slope <= 0:
        return Choice(None, f"{why_not}; the slowdowns do not grow with the sleep")
    fitted = (target / (1 - target) - fit.intercept) / fit.slope
    said = f"{why_not}; a line through them puts it at {fitted * 1e3:.2f} ms"
    if fitted < min(sleeps) / 2:
        return Choice(None, f"{said}, under half the shortest sleep tried: try shorter ones")
    if fitted > 2 * max(sleeps):
        return Choice(None, f"{said}, past twice the longest sleep tried: try longer ones")
    return Choice(fitted, f"{why_not}; fitted (not measured): {fitted * 1e3:.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--profile", default="qwen3-next-real-width-fp8-mtp")
    parser.add_argument("--backend", default="sglang")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--min-point-seconds", type=float, default=2.0)
    parser.add_argument("--sleeps", type=float, nargs="+", required=True)
    parser.add_argument("--target", type=float, default=0.10, help="the share to lose")
    parser.add_argument("--server-arg", action="append", default=[])
    parser.add_argument(
        "--warm-once",
        action="store_true",
        help="warm the boot up before the first sleep only (long requests: a round is minutes)",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    profile = resolve_profile(args.profile, [])
    model = str(build_model(profile.model_factory)) if profile.model_factory else None
    backend = parse_backend(args.backend)

    def command(port: int) -> LaunchCommand:
        return build_launch(
            profile,
            DEPTH,
            backend=backend,
            port=port,
            model_path=model,
            server_args=args.server_arg,
            sim_speedup=5.0 if backend == "sim" else None,
        )

    server = launch(
        command,
        host="127.0.0.1",
        log_path=args.out / "server.log",
        launch_timeout_s=profile.launch_timeout_s or 900,
        api_key=None,
    )
    rows: list[tuple[float, float]] = []
    try:
        for index, sleep in enumerate([0.0, *args.sleeps]):
            inject_slowdown(server.url, sleep or None, None)
            warm = index == 0 or not args.warm_once
            agg = bench(server.url, args.out / f"sleep-{index}", args, warm=warm)
            rows.append((sleep, agg))
            change = agg / rows[0][1] - 1
            print(
                f"sleep {sleep * 1e3:7.2f} ms: agg {agg:10,.1f} tok/s  {change:+6.1%}", flush=True
            )
        inject_slowdown(server.url, None, None)
    finally:
        server.stop()
    choice = choose_sleep(rows, args.target)
    print(choice.line)
    if choice.sleep is not None:
        print(f"SLOW={choice.sleep:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
