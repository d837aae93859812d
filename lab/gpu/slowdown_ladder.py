"""What each `/slow_down` sleep costs on one boot, and which sleep costs the target share.

Under SGLang's overlap scheduler (EAGLE/MTP, "Spec v2") a sleep is spent inside the
scheduler's wait for the GPU, so it costs nothing up to that wait and then all of itself
(docs/runs/2026-12-05-bounds-slow10-h200: 0.12 ms cost nothing against a wait of 24-27 ms
a step at C=64). An A/B of "a head about 10% slower" therefore needs its sleep measured, not
guessed. This boots the profile once with the suite's launch code, measures one point with
`specperf bench --url` at each sleep (0 first, as the reference), and prints the change of
each and the sleep nearest the target as `SLOW=<seconds>` (last line).

    python lab/gpu/slowdown_ladder.py OUT --profile qwen3-next-real-width-fp8-mtp \
        --concurrency 64 --sleeps 0.024 0.027 0.030 0.033 0.036 --target 0.10 \
        --server-arg=--cuda-graph-bs --server-arg=8 --server-arg=16 ...
    python lab/gpu/slowdown_ladder.py /tmp/ladder --backend sim --sleeps 0.001 0.002  # dry run
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

from pytest_specperf.config.parsers import parse_backend
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import inject_slowdown, launch
from pytest_specperf.server.profiles import resolve_profile

DEPTH = 3


def bench(url: str, out: Path, args: argparse.Namespace) -> float:
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
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    (out / "bench.txt").parent.mkdir(parents=True, exist_ok=True)
    (out / "bench.txt").write_text(done.stdout + done.stderr)
    results = json.loads((out / "results.json").read_text())
    point = results["runs"][0]["points"][0]
    return float(point["agg_tok_s"])


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
            agg = bench(server.url, args.out / f"sleep-{index}", args)
            rows.append((sleep, agg))
            change = agg / rows[0][1] - 1
            print(
                f"sleep {sleep * 1e3:7.2f} ms: agg {agg:10,.1f} tok/s  {change:+6.1%}", flush=True
            )
        inject_slowdown(server.url, None, None)
    finally:
        server.stop()
    reference = rows[0][1]
    tried = [(sleep, agg / reference - 1) for sleep, agg in rows[1:]]
    best = min(tried, key=lambda item: abs(math.log1p(item[1]) - math.log1p(-args.target)))
    print(f"nearest {-args.target:+.0%}: {best[0] * 1e3:.2f} ms ({best[1]:+.1%})")
    print(f"SLOW={best[0]:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
