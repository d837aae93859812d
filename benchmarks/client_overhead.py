"""The load generator's own cost and fidelity, side by side with SGLang's benchmark clients.

    # this machine: CPU per token (paced), ceiling (firehose), fidelity against the server's
    # own record; SGLang's Python client (and Rust client, where its wheel has one) beside ours
    python benchmarks/client_overhead.py compare --sglang-python .venv-sglang/bin/python

    # a many-core machine, no SGLang, no network: the ceiling over 1, 2, 4, 8 client processes
    PYTHONPATH=. python3 benchmarks/client_overhead.py procs --procs 1,2,4,8

    # the simulator at C=256 and 512 (2C requests): every request counted, peak client memory
    python benchmarks/client_overhead.py scale --concurrency 256,512

Server: benchmarks/stream_server.py (SGLang-shaped /generate, cumulative text, --chunk 4 tokens
per chunk, 1000-token requests). paced: every request streams at --rate tok/s and the server
logs its own record (arrival, first and last token emit, on the system-wide monotonic clock);
firehose: as fast as the socket drains.

CPU per token: every Python client runs a warm-up run and then the measured run in ONE process;
only the measured run's CPU (self + children, getrusage) counts, divided by its tokens. SGLang's
Rust client starts in well under a second: its whole-process CPU for N requests minus that for
8 requests, over N - 8 requests' tokens. Clients run one after the other (order alternating per
repeat) against the same server; every figure printed is the median over --repeats.

Fidelity (ours, paced): the server's record of the measured requests (those that arrived
inside the client's measured window) against ours: aggregate tok/s (tokens / first arrival to
last token), per-request tok/s (tokens after the first chunk / first to last token, mean), TTFT
p50 (arrival to first token).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not start listening")


@contextmanager
def server(argv: list[str], port: int) -> Iterator[None]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port, proc)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def stream_server(mode: str, options: argparse.Namespace, truth: Path | None = None,
                  workers: int = 1) -> Iterator[str]:  # fmt: skip
    port = _free_port()
    argv = [
        sys.executable, str(HERE / "stream_server.py"), "--port", str(port), "--mode", mode,
        "--rate", str(options.rate), "--chunk", str(options.chunk), "--workers", str(workers),
    ]  # fmt: skip
    if truth is not None:
        argv += ["--truth", str(truth)]
    with server(argv, port):
        yield f"http://127.0.0.1:{port}"


def _child_env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


# -- our client, run in its own process (`client_overhead.py _ours ...`) ------------------------
def _ours_main(argv: Sequence[str]) -> None:
    """Warm-up point then the measured point in this process; prints one JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--procs", type=int, default=None)
    options = parser.parse_args(argv)

    from pytest_specperf.measure import loop
    from pytest_specperf.measure.loadgen import measure_point
    from pytest_specperf.measure.workload import Workload

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def point(requests: int, warmup: bool = False) -> Any:
        workload = Workload(max_new_tokens=options.tokens, fixed_requests=requests)
        return loop.run(
            measure_point(
                options.url,
                workload,
                options.concurrency,
                warmup=warmup,
                client_procs=options.procs,
            )
        )

    point(8)
    before = cpu()
    started = time.monotonic()
    measured = point(options.requests, warmup=True)  # connections open, as in the suite
    used = cpu() - before
    peak_kib = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    print(
        json.dumps(
            {
                "cpu_s": used,
                "tokens": measured.tokens,
                "requests": measured.requests,
                "ok": measured.ok,
                "errors": measured.errors,
                "agg_tok_s": measured.agg_tok_s,
                "per_req_tok_s": measured.per_req_tok_s,
                "ttft_p50_s": measured.ttft_s.p50 if measured.ttft_s else None,
                "window": [started, time.monotonic()],
                "processes": measured.client.processes if measured.client else 1,
                "client_bound": measured.client_bound,
                "truth_problems": measured.truth_problems,
                "peak_rss_mib": peak_kib / 1024,
                "loop": loop.loop_name(),
            }
        )
    )


def run_ours(
    url: str, options: argparse.Namespace, requests: int, procs: int | None
) -> dict[str, Any]:
    argv = [
        sys.executable, str(Path(__file__).resolve()), "_ours", "--url", url,
        "--concurrency", str(options.concurrency), "--requests", str(requests),
        "--tokens", str(options.tokens),
    ]  # fmt: skip
    if procs is not None:
        argv += ["--procs", str(procs)]
    done = subprocess.run(argv, capture_output=True, text=True, env=_child_env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"our client failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- SGLang's clients ------------------------------------------------------------------------
_SGLANG_IN_PROCESS = r"""
import json, resource, sys
from pytest_specperf.contract import prepare_sglang_import
prepare_sglang_import()
import sglang.benchmark.serving as serving
def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
warm, measured = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["serving", *warm]
serving.cli_main()
before = cpu()
sys.argv = ["serving", *measured]
serving.cli_main()
print("CPU_S", cpu() - before, file=sys.stderr)
"""  # noqa: E501


def _sglang_args(url: str, options: argparse.Namespace, requests: int, out: Path) -> list[str]:
    return [
        "--backend", "sglang", "--base-url", url, "--tokenizer", str(options.tokenizer),
        "--model", "m", "--dataset-name", "random-ids", "--random-input-len", "16",
        "--random-output-len", str(options.tokens), "--random-range-ratio", "1.0",
        "--num-prompts", str(requests), "--max-concurrency", str(options.concurrency),
        "--warmup-requests", "1", "--output-file", str(out),
    ]  # fmt: skip


def _last_json(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_text().strip().splitlines()[-1])
    return result


def run_sglang_python(url: str, options: argparse.Namespace, work: Path) -> dict[str, Any]:
    warm = _sglang_args(url, options, 8, work / "sgl-warm.jsonl")
    measured_out = work / "sgl.jsonl"
    measured = _sglang_args(url, options, options.requests, measured_out)
    done = subprocess.run(
        [options.sglang_python, "-c", _SGLANG_IN_PROCESS, json.dumps(warm), json.dumps(measured)],
        capture_output=True, text=True, env=_child_env(), check=False,
    )  # fmt: skip
    found = re.search(r"CPU_S ([0-9.]+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"SGLang's Python client failed:\n{done.stderr[-3000:]}")
    summary = _last_json(measured_out)
    measured_out.unlink()
    tokens = summary["total_output_tokens"]
    return {"cpu_s": float(found.group(1)), "tokens": tokens, **_sglang_figures(summary)}


def _sglang_figures(summary: dict[str, Any]) -> dict[str, Any]:
    return {
        "agg_tok_s": summary["output_throughput"],
        "ttft_p50_s": summary["median_ttft_ms"] / 1e3,
    }


def has_rust_client(python: str) -> bool:
    probe = [python, "-m", "sglang.benchmark.rust_client", "--help"]
    return subprocess.run(probe, capture_output=True, env=_child_env(), check=False).returncode == 0


def _rust_run(url: str, options: argparse.Namespace, requests: int, out: Path) -> float | None:
    before = os.times()
    done = subprocess.run(
        [options.sglang_python, "-m", "sglang.benchmark.rust_client",
         *_sglang_args(url, options, requests, out)],
        capture_output=True, env=_child_env(), check=False,
    )  # fmt: skip
    after = os.times()
    if done.returncode != 0:
        return None
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def run_sglang_rust(url: str, options: argparse.Namespace, work: Path) -> dict[str, Any] | None:
    small = _rust_run(url, options, 8, work / "rust-warm.jsonl")
    full = _rust_run(url, options, options.requests, work / "rust.jsonl")
    if small is None or full is None:
        return None
    summary = _last_json(work / "rust.jsonl")
    (work / "rust.jsonl").unlink()
    per_request_tokens = summary["total_output_tokens"] / options.requests
    return {
        "cpu_s": full - small,
        "tokens": per_request_tokens * (options.requests - 8),
        **_sglang_figures(summary),
    }


# -- the machine's floor: a blocking socket, one request at a time --------------------------
PROBE_TOKENS = 40


def probe_ttft(url: str, requests: int = 8) -> tuple[list[float], list[float]]:
    """TTFTs a plain blocking socket sees, one request at a time, and the probe's window.

    The least any client can see on this machine at this moment: what is left above the
    server's own TTFT is the kernel and the scheduler (other processes waking it late).
    """
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"text": "probe", "stream": True,
                       "sampling_params": {"max_new_tokens": PROBE_TOKENS}}).encode()  # fmt: skip
    request = (
        b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    ttfts = []
    window = [time.monotonic(), 0.0]
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for _ in range(requests):
            sent = time.monotonic()
            sock.sendall(request)
            received = b""
            first = None
            while not received.endswith(b"0\r\n\r\n"):
                received += sock.recv(1 << 16)
                if first is None and b"completion_tokens" in received:
                    first = time.monotonic()
            ttfts.append((first or sent) - sent)
    window[1] = time.monotonic()
    return ttfts, window


# -- the server's own record -----------------------------------------------------------------
def server_record(truth: Path, window: Sequence[float], tokens: int) -> dict[str, float]:
    """Agg, per-request and TTFT p50 of the ``tokens``-long requests that arrived in ``window``."""
    rows = [json.loads(line) for line in truth.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if window[0] <= r["t_start"] <= window[1] and r["tokens"] == tokens]
    if not rows:
        raise SystemExit("the server recorded no request inside the client's window")
    span = max(r["t_last"] for r in rows) - min(r["t_start"] for r in rows)
    rates = [
        (r["tokens"] - r["first_tokens"]) / (r["t_last"] - r["t_first"])
        for r in rows
        if r["t_last"] > r["t_first"]
    ]
    return {
        "requests": len(rows),
        "agg_tok_s": sum(r["tokens"] for r in rows) / span,
        "per_req_tok_s": statistics.fmean(rates),
        "ttft_p50_s": statistics.median(r["t_first"] - r["t_start"] for r in rows),
    }


# -- modes -----------------------------------------------------------------------------------
def _us_per_token(result: dict[str, Any]) -> float:
    return float(result["cpu_s"]) / float(result["tokens"]) * 1e6


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def compare(options: argparse.Namespace) -> None:
    if options.tokenizer is None:
        from pytest_specperf.server.model_factory import build_model

        options.tokenizer = build_model("tiny-qwen3")
    sglang = options.sglang_python
    rust = sglang is not None and has_rust_client(sglang)
    work = Path(tempfile.mkdtemp(prefix="client-overhead-"))
    cpu: dict[str, list[float]] = {"specperf": [], "SGLang Python": [], "SGLang Rust": []}
    ceiling: dict[str, list[float]] = {k: [] for k in cpu}
    fidelity: dict[str, list[float]] = {"agg": [], "per_req": [], "ttft_ms": [], "floor_ms": []}
    memory: list[float] = []
    for repeat in range(options.repeats):
        clients = [
            "specperf",
            *(["SGLang Python"] if sglang else []),
            *(["SGLang Rust"] if rust else []),
        ]
        if repeat % 2:
            clients.reverse()
        truth = work / f"truth-{repeat}.jsonl"
        with stream_server("paced", options, truth) as url:
            probe, window = probe_ttft(url)
            floor = (
                statistics.median(probe) - server_record(truth, window, PROBE_TOKENS)["ttft_p50_s"]
            )
            fidelity["floor_ms"].append(floor * 1e3)
            for client in clients:
                result = _run(client, url, options, work)
                if result is None:
                    continue
                cpu[client].append(_us_per_token(result))
                if client == "specperf":
                    record = server_record(truth, result["window"], options.tokens)
                    fidelity["agg"].append(result["agg_tok_s"] / record["agg_tok_s"] - 1)
                    fidelity["per_req"].append(
                        result["per_req_tok_s"] / record["per_req_tok_s"] - 1
                    )
                    fidelity["ttft_ms"].append((result["ttft_p50_s"] - record["ttft_p50_s"]) * 1e3)
                    memory.append(result["peak_rss_mib"])
                    print(f"  repeat {repeat + 1}: server record {record}, ours {result}")
        with stream_server("firehose", options) as url:
            for client in clients:
                result = _run(client, url, options, work)
                if result is not None:
                    ceiling[client].append(result["agg_tok_s"])
        print(f"repeat {repeat + 1}/{options.repeats} done", flush=True)
    c = options.concurrency
    print(f"\nmedians over {options.repeats} repeats, C={c}, {options.requests} requests of "
          f"{options.tokens} tokens, {options.chunk} tokens per chunk")  # fmt: skip
    line = ", ".join(f"{k} {_median(v):.1f} us" for k, v in cpu.items() if v)
    print(f"CPU per token, paced at {options.rate:g} tok/s per request: {line}")
    line = ", ".join(f"{k} {_median(v):,.0f} tok/s" for k, v in ceiling.items() if v)
    print(f"ceiling, firehose: {line}")
    print(
        f"fidelity vs the server's record (paced): agg {_median(fidelity['agg']):+.2%}, "
        f"per-request {_median(fidelity['per_req']):+.2%}, "
        f"TTFT p50 {_median(fidelity['ttft_ms']):+.1f} ms (a blocking socket, one request at a "
        f"time: {_median(fidelity['floor_ms']):+.1f} ms); peak client memory "
        f"{_median(memory):.0f} MiB"
    )
    print(f"raw: cpu {cpu}\nceiling {ceiling}\nfidelity {fidelity}")


def _run(client: str, url: str, options: argparse.Namespace, work: Path) -> dict[str, Any] | None:
    if client == "specperf":
        return run_ours(url, options, options.requests, options.client_procs)
    if client == "SGLang Python":
        return run_sglang_python(url, options, work)
    return run_sglang_rust(url, options, work)


def procs(options: argparse.Namespace) -> None:
    """The ceiling at one concurrency over several client-process counts (no SGLang needed)."""
    counts = [int(p) for p in options.procs.split(",")]
    workers = options.server_workers or max(1, (os.cpu_count() or 2) // 2)
    results: dict[int, list[dict[str, Any]]] = {p: [] for p in counts}
    with stream_server("firehose", options, workers=workers) as url:
        for repeat in range(options.repeats):
            for count in counts if repeat % 2 == 0 else list(reversed(counts)):
                result = run_ours(url, options, options.requests, count)
                results[count].append(result)
                print(
                    f"  procs={count}: {result['agg_tok_s']:,.0f} tok/s, "
                    f"{_us_per_token(result):.1f} us CPU/token, ok {result['ok']}/"
                    f"{result['requests']}, client_bound={result['client_bound']}",
                    flush=True,
                )
    print(f"\nceiling, firehose ({workers} server processes), C={options.concurrency}, "
          f"{options.requests} requests of {options.tokens} tokens, {os.cpu_count()} cores, "
          f"medians of {options.repeats}:")  # fmt: skip
    for count, runs in results.items():
        agg = _median([r["agg_tok_s"] for r in runs])
        used = _median([_us_per_token(r) for r in runs])
        print(f"  client procs {count}: {agg:,.0f} tok/s, {used:.1f} us CPU/token")


def scale(options: argparse.Namespace) -> None:
    """Sim sweeps at high concurrency: every request accounted for, peak client memory."""
    sys.path.insert(0, str(HERE))
    from _sim import sim_argv

    for concurrency in [int(c) for c in options.concurrency_list.split(",")]:
        port = _free_port()
        argv = sim_argv(3, port, options.speedup, "--max-running-requests", str(concurrency))
        with server(argv, port):
            options.concurrency = concurrency
            result = run_ours(
                f"http://127.0.0.1:{port}", options, 2 * concurrency, options.client_procs
            )
        accounted = result["ok"] + sum(result["errors"].values())
        print(
            f"sim C={concurrency}: {result['requests']} requests, {result['ok']} ok, errors "
            f"{result['errors']}, accounted {accounted}/{2 * concurrency}; "
            f"agg {result['agg_tok_s']:,.0f} tok/s (speedup {options.speedup:g}); "
            f"{result['processes']} client processes; peak client memory "
            f"{result['peak_rss_mib']:.0f} MiB; client_bound={result['client_bound']}; "
            f"truth problems {result['truth_problems']}",
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["_ours"]:
        _ours_main(args[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("compare", "procs", "scale"))
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=None, help="default 2C")
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=234.0)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--client-procs", type=int, default=None)
    parser.add_argument("--sglang-python", default=None, help="a python with sglang 0.5.23")
    parser.add_argument("--tokenizer", default=None, help="default: the project's tiny one")
    parser.add_argument("--procs", default="1,2,4,8", help="procs mode: client processes")
    parser.add_argument("--server-workers", type=int, default=None, help="procs mode")
    parser.add_argument("--concurrency-list", default="256,512", help="scale mode")
    parser.add_argument("--speedup", type=float, default=5.0, help="scale mode: sim speedup")
    options = parser.parse_args(args)
    options.requests = options.requests or 2 * options.concurrency
    {"compare": compare, "procs": procs, "scale": scale}[options.mode](options)


if __name__ == "__main__":
    main()
