"""The ``specperf`` command: the suite's pieces without pytest.

specperf launch-cmd --spec-steps 3            # the exact server command the fixture runs
specperf bench --url http://127.0.0.1:30000   # one sweep against any running server
specperf profiles                             # the deployment profiles it knows
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.loadgen import measure_point
from pytest_specperf.measure.workload import SEED_CONCURRENCY, Workload
from pytest_specperf.options import (
    API_KEY_ENV,
    DEFAULT_SIM_SPEEDUP,
    parse_backend,
    parse_concurrency,
    parse_depths,
    parse_positive_int,
    parse_server_args,
    parse_url,
)
from pytest_specperf.profiles import DEFAULT_PROFILE, available_profiles, resolve_profile
from pytest_specperf.results.report import seed_table
from pytest_specperf.results.schema import DepthRun, RunResults
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.server.hardware import hardware_key
from pytest_specperf.server.launch import BACKENDS, build_launch
from pytest_specperf.server.model_factory import build_model
from pytest_specperf.server.process import depth_of, fetch_server_info, summarize_server_info


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specperf", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    launch = commands.add_parser("launch-cmd", help="print the server command the suite would run")
    launch.add_argument("--spec-steps", required=True, help="speculation depth (one number)")
    launch.add_argument(
        "--specperf-profile", default=DEFAULT_PROFILE, help="profile name or .toml path"
    )
    launch.add_argument(
        "--specperf-profile-dir", action="append", default=[], help="extra profile dir"
    )
    launch.add_argument(
        "--specperf-backend", default="sglang", help=f"one of {', '.join(BACKENDS)}"
    )
    launch.add_argument(
        "--specperf-server-arg", action="append", default=[], help="extra server flag"
    )
    launch.add_argument("--specperf-sim-speedup", default=None, help="simulator speedup")
    launch.add_argument("--host", default="127.0.0.1")
    launch.add_argument("--port", default="30000")

    bench = commands.add_parser("bench", help="one closed-loop sweep against a running server")
    bench.add_argument("--url", required=True, help="server base URL, e.g. http://127.0.0.1:30000")
    bench.add_argument("--concurrency", default=",".join(map(str, SEED_CONCURRENCY)))
    bench.add_argument(
        "--requests", default=None, help="requests per point (default 4 at C=1, else 2C)"
    )
    bench.add_argument("--max-new-tokens", default="1000")
    bench.add_argument("--temperature", type=float, default=0.0)
    bench.add_argument("--endpoint", choices=("generate", "completions"), default="generate")
    bench.add_argument("--no-warmup", action="store_true", help="skip the warm-up requests")
    bench.add_argument(
        "--out", default=None, help="write results (the suite's schema) to this file"
    )
    bench.add_argument("--hardware", default=None, help="hardware key to record")

    commands.add_parser("profiles", help="list deployment profiles")
    return parser


def _launch_cmd(args: argparse.Namespace) -> int:
    depths = parse_depths(args.spec_steps)
    if len(depths) != 1:
        raise UsageError("--spec-steps: launch-cmd takes one depth")
    profile = resolve_profile(args.specperf_profile, [Path(d) for d in args.specperf_profile_dir])
    backend = parse_backend(args.specperf_backend)
    speedup = None
    if backend == "sim":
        speedup = float(args.specperf_sim_speedup or DEFAULT_SIM_SPEEDUP)
    command = build_launch(
        profile,
        depths[0],
        backend=backend,
        host=args.host,
        port=parse_positive_int("--port", args.port),
        server_args=parse_server_args(args.specperf_server_arg),
        model_path=str(build_model(profile.model_factory)) if profile.model_factory else None,
        sim_speedup=speedup,
    )
    env = " ".join(f"{k}={v}" for k, v in sorted(command.env.items()))
    print(f"{env} {command.display()}" if env else command.display())
    return 0


def _bench(args: argparse.Namespace) -> int:
    url = parse_url(args.url)
    api_key = os.environ.get(API_KEY_ENV) or None
    workload = Workload(
        max_new_tokens=parse_positive_int("--max-new-tokens", args.max_new_tokens),
        temperature=args.temperature,
        endpoint=args.endpoint,
        fixed_requests=parse_positive_int("--requests", args.requests) if args.requests else None,
    )
    concurrency = parse_concurrency(args.concurrency)
    info = fetch_server_info(url, api_key)
    summary = summarize_server_info(url, info)
    depth = depth_of(info) or 0
    run = DepthRun(
        depth=depth,
        profile="external",
        backend="external",
        hardware=hardware_key(info, override=args.hardware, tp_size=summary.tp_size),
        workload=workload.key(),
        server=summary,
        planned_concurrency=list(concurrency),
    )
    model = summary.model_path or "default"
    print(f"measuring {url}: {summary.speculative_algorithm or 'no speculation'} depth={depth}")
    for index, level in enumerate(concurrency):
        point = event_loop.run(
            measure_point(
                url,
                workload,
                level,
                model=model,
                api_key=api_key,
                warmup=index == 0 and not args.no_warmup,
            )
        )
        run.points.append(point)
        print(f"  C={level}: {point.agg_tok_s:,.1f} agg tok/s, {point.ok}/{point.requests} ok")
        if args.out:
            _write_results(Path(args.out), run)
    run.status = "complete"
    if args.out:
        _write_results(Path(args.out), run)
    print(seed_table(run))
    return 0 if all(p.failed == 0 for p in run.points) else 1


def _write_results(path: Path, run: DepthRun) -> None:
    store = ResultsStore(path.parent)
    results = RunResults(run_id=store.run_id, started_at="", tool_version="", runs=[run])
    atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(results), indent=1))


def _profiles() -> int:
    for name, profile in sorted(available_profiles().items()):
        print(f"{name}: {profile.description} [{profile.source}]")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "launch-cmd":
            return _launch_cmd(args)
        if args.command == "bench":
            return _bench(args)
        return _profiles()
    except SpecperfError as exc:
        print(f"specperf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("specperf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
