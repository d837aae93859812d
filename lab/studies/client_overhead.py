"""The load generator's own cost and fidelity, side by side with SGLang's benchmark clients.

    # CPU per token (paced), ceiling (unpaced) and fidelity against the reference server's own
    # record, SGLang's Python and Rust clients beside ours, in one run
    # (docs/explanation/load-generator.md)
    python lab/studies/client_overhead.py compare --server ../shared/tools/firehose.py \
        --sglang-python .venv-sglang/bin/python --repeats 3

    # a many-core machine, no SGLang, no network: the ceiling over 1, 2, 4, 8 client processes
    PYTHONPATH=. python3 lab/studies/client_overhead.py procs --procs 1,2,4,8

    # the simulator at C=256 and 512 (2C requests): every request counted, peak client memory
    python lab/studies/client_overhead.py scale --concurrency-list 256,512

compare: --server is a reference server script with firehose.py's command line (--port,
--mode paced|firehose, --rate, --chunk, --truth): the project's reference firehose.py, or
lab/studies/stream_server.py (the default, the same shape, kept in the repository). paced: each
request streams at --rate tok/s and the server appends its own record of each request (t_start
once it has read the request, first and last token emitted, on the system-wide monotonic
clock) to the truth file; firehose: as fast as the socket drains.

CPU per token, the way the project's measure_client.py measures it: every client runs a warm-up
run and then the measured run in ONE process; only the measured run's CPU (self + children,
getrusage; the Rust client's worker threads are in self) counts, divided by its tokens. Ours
measures the suite's way: its measured run includes its own warm-up requests (their CPU counts,
their tokens do not). All clients run one after the other against the same server in one run
(order alternating per repeat); each repeat's figures are printed, then the median.

Fidelity, paced: each client's figures against the server's record of the requests that
arrived in its measured window: aggregate tok/s (tokens / first start to last token),
per-request tok/s (ours: tokens after the first chunk / first to last token, mean), TTFT p50.
The TTFT gap is split (ours) into the send-to-read wait (our send to the server's t_start) and
the delivery (the server's first emit to our read), quantile matched.
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
from typing import Any, NamedTuple

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
def server(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Served(NamedTuple):
    url: str
    pid: int


def _process_cpu_s(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


@contextmanager
def stream_server(mode: str, options: argparse.Namespace, truth: Path | None = None,
                  workers: int = 1, script: Path | None = None) -> Iterator[Served]:  # fmt: skip
    """A reference server script with the CLI firehose.py and stream_server.py share."""
    port = _free_port()
    argv = [
        sys.executable, str(script or options.server), "--port", str(port), "--mode", mode,
        "--rate", str(options.rate), "--chunk", str(options.chunk),
    ]  # fmt: skip
    if workers > 1:  # stream_server.py only
        argv += ["--workers", str(workers)]
    if truth is not None:
        argv += ["--truth", str(truth)]
    with server(argv, port) as proc:
        yield Served(f"http://127.0.0.1:{port}", proc.pid)


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
    from pytest_specperf.measure.point import measure_point
    from pytest_specperf.measure.workload import Workload

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    records: list[Any] = []

    def point(requests: int, warmup: bool = False) -> Any:
        workload = Workload(max_new_tokens=options.tokens, fixed_requests=requests)
        return loop.run(
            measure_point(
                options.url,
                workload,
                options.concurrency,
                warmup=warmup,
                client_procs=options.procs,
                on_request_done=records.append,
            )
        )

    point(8)
    records.clear()
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
                # each request's send and first-token arrival (system-wide monotonic clock)
                "sends": [r.start for r in records if r.ok],
                "firsts": [r.first_chunk for r in records if r.ok and r.first_chunk],
                "processes": measured.client.processes if measured.client else 1,
                "busiest_cpu_share": (
                    measured.client.cpu_share_of_busiest if measured.client else 0.0
                ),
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


# -- SGLang's clients, each run twice in one process: a warm-up run, then the measured run --
_SGLANG_IN_PROCESS = r"""
import json, resource, sys, time, types
from tests.support.sglang_contract import prepare_sglang_import
prepare_sglang_import()
try:
    import datasets  # noqa: F401
except ImportError:
    # serving.py imports its MMMU loader, which imports `datasets` at module level; the
    # random-ids data set measured here never calls it.
    stub = types.ModuleType("datasets")
    def load_dataset(*args, **kwargs):
        raise ImportError("the datasets package is not installed")
    stub.load_dataset = load_dataset
    sys.modules["datasets"] = stub
kind, warm, measured = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
if kind == "rust":
    from sglang.benchmark.rust_client import main as rust_main
    def run(argv):
        code = rust_main(["sglang-bench", *argv])
        if code:
            raise SystemExit(code)
else:
    try:
        import sglang.benchmark.serving as serving
        def run(argv):
            sys.argv = ["serving", *argv]
            serving.cli_main()
    except ImportError:  # SGLang before the benchmark package (0.5.12): sglang.bench_serving
        import runpy
        def run(argv):
            sys.argv = ["bench_serving", *argv]
            runpy.run_module("sglang.bench_serving", run_name="__main__")
def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
if measured == ["--help"]:
    run(measured)
    raise SystemExit(0)
run(warm)
before, started = cpu(), time.monotonic()
run(measured)
print("CPU_S", cpu() - before, "WINDOW", started, time.monotonic(), file=sys.stderr)
"""  # noqa: E501

SGLANG_KINDS = {"SGLang Python": "python", "SGLang Rust": "rust"}


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


def _sglang_run(python: str, kind: str, warm: list[str], measured: list[str]) -> tuple[int, str]:
    done = subprocess.run(
        [python, "-c", _SGLANG_IN_PROCESS, kind, json.dumps(warm), json.dumps(measured)],
        capture_output=True, text=True, env=_child_env(), check=False,
    )  # fmt: skip
    return done.returncode, done.stderr


def run_sglang(
    client: str, url: str, options: argparse.Namespace, work: Path
) -> dict[str, Any] | None:
    """One SGLang client, the measure_client.py way; None (and why, printed) if it failed."""
    kind = SGLANG_KINDS[client]
    warm = _sglang_args(url, options, 8, work / f"{kind}-warm.jsonl")
    measured_out = work / f"{kind}.jsonl"
    measured = _sglang_args(url, options, options.requests, measured_out)
    code, stderr = _sglang_run(options.sglang_python, kind, warm, measured)
    found = re.search(r"CPU_S ([0-9.]+) WINDOW ([0-9.]+) ([0-9.]+)", stderr)
    if code != 0 or not found or not measured_out.exists():
        print(f"  {client} failed (exit {code}): {stderr.strip()[-800:]}", flush=True)
        return None
    summary = _last_json(measured_out)
    measured_out.unlink()
    return {
        "cpu_s": float(found.group(1)),
        "window": [float(found.group(2)), float(found.group(3))],
        "tokens": summary["total_output_tokens"],
        "agg_tok_s": summary["output_throughput"],
        "ttft_p50_s": summary["median_ttft_ms"] / 1e3,
    }


def sglang_client_runs(python: str, kind: str) -> str | None:
    """None when this SGLang client starts here, else the last line of why not."""
    code, stderr = _sglang_run(python, kind, [], ["--help"])
    if code == 0:
        return None
    return (stderr.strip().splitlines() or ["no output"])[-1]


# -- the machine's floor: a blocking socket, one request at a time --------------------------
PROBE_TOKENS = 40


def probe_ttft(url: str, requests: int = 8) -> tuple[list[float], list[float]]:
    """TTFTs a plain blocking socket sees, one request at a time, and the probe's window.

    Each request on a connection of its own (the reference server closes it after each
    response), timed from the send, after the connect, as our client times its requests.
    What is left above the server's own TTFT is the kernel and the scheduler.
    """
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"text": "probe", "stream": True,
                       "sampling_params": {"max_new_tokens": PROBE_TOKENS}}).encode()  # fmt: skip
    request = (
        b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    ttfts = []
    window = [time.monotonic(), 0.0]
    for _ in range(requests):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sent = time.monotonic()
            sock.sendall(request)
            received = b""
            first = None
            while True:
                data = sock.recv(1 << 16)
                if not data:
                    break
                received += data
                if first is None and b"completion_tokens" in received:
                    first = time.monotonic()
            ttfts.append((first or sent) - sent)
    window[1] = time.monotonic()
    return ttfts, window


# -- the server's own record -----------------------------------------------------------------
def server_rows(
    truth: Path, window: Sequence[float], tokens: int, count: int
) -> list[dict[str, Any]]:
    """The server's records of the last ``count`` ``tokens``-long requests that arrived in
    ``window`` (a client's own warm-up request, if it falls inside, comes first)."""
    rows = [json.loads(line) for line in truth.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if window[0] <= r["t_start"] <= window[1] and r["tokens"] == tokens]
    rows.sort(key=lambda r: r["t_start"])
    if not rows:
        raise SystemExit("the server recorded no request inside the client's window")
    return rows[-count:]


def server_record(rows: Sequence[dict[str, Any]], chunk: int) -> dict[str, float]:
    """Agg, per-request and TTFT p50 by the server's record.

    agg: tokens over first request start to last token; per-request: tokens after the first
    chunk over first to last token, mean; TTFT: first token emitted minus ``t_start``, which
    both reference servers take once they have read and parsed the request (so their TTFT
    does not include the time a request waited to be read).
    """
    span = max(r["t_last"] for r in rows) - min(r["t_start"] for r in rows)
    rates = [
        (r["tokens"] - r.get("first_tokens", min(chunk, r["tokens"])))
        / (r["t_last"] - r["t_first"])
        for r in rows
        if r["t_last"] > r["t_first"]
    ]
    return {
        "requests": len(rows),
        "agg_tok_s": sum(r["tokens"] for r in rows) / span,
        "per_req_tok_s": statistics.fmean(rates),
        "ttft_p50_s": statistics.median(r["t_first"] - r["t_start"] for r in rows),
    }


def _matched_gap(earlier: Sequence[float], later: Sequence[float]) -> float:
    """Median of later - earlier, the two sets sorted and paired in order (quantile matched:
    the server's records carry no request id, so this is the shift between the two times'
    distributions, not a per-request figure)."""
    return statistics.median(b - a for a, b in zip(sorted(earlier), sorted(later), strict=False))


# -- modes -----------------------------------------------------------------------------------
def _us_per_token(result: dict[str, Any]) -> float:
    return float(result["cpu_s"]) / float(result["tokens"]) * 1e6


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _cell(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "-"
    each = ", ".join(format(v, fmt) for v in values)
    return f"{format(_median(values), fmt)} ({each})" if len(values) > 1 else each


def compare(options: argparse.Namespace) -> None:
    """Ours and SGLang's clients, side by side, repeat by repeat, against one server script."""
    if options.tokenizer is None:
        from pytest_specperf.server.model_factory import build_model

        options.tokenizer = build_model("tiny-qwen3")
    clients = ["specperf"]
    for client, kind in SGLANG_KINDS.items():
        if options.sglang_python is None:
            break
        why_not = sglang_client_runs(options.sglang_python, kind)
        if why_not is None:
            clients.append(client)
        else:
            print(f"{client} left out: it does not start here ({why_not})")
    work = Path(tempfile.mkdtemp(prefix="client-overhead-"))
    table: dict[tuple[str, str], list[float]] = {}

    def add(figure: str, client: str, value: float) -> None:
        table.setdefault((figure, client), []).append(value)

    for repeat in range(options.repeats):
        order = clients if repeat % 2 == 0 else list(reversed(clients))
        truth = work / f"truth-{repeat}.jsonl"
        with stream_server("paced", options, truth) as (url, _pid):
            probe, window = probe_ttft(url)
            probe_rows = server_rows(truth, window, PROBE_TOKENS, len(probe))
            floor = _median(probe) - server_record(probe_rows, options.chunk)["ttft_p50_s"]
            add("ttft_floor_ms", "probe", floor * 1e3)
            for client in order:
                result = _run(client, url, options, work)
                if result is None:
                    continue
                add("cpu_us", client, _us_per_token(result))
                rows = server_rows(truth, result["window"], options.tokens, options.requests)
                record = server_record(rows, options.chunk)
                add("agg_pct", client, (result["agg_tok_s"] / record["agg_tok_s"] - 1) * 100)
                add("ttft_ms", client, (result["ttft_p50_s"] - record["ttft_p50_s"]) * 1e3)
                add("server_ttft_ms", client, record["ttft_p50_s"] * 1e3)
                if client == "specperf":
                    add(
                        "per_req_pct",
                        client,
                        (result["per_req_tok_s"] / record["per_req_tok_s"] - 1) * 100,
                    )
                    add(
                        "read_ms",
                        client,
                        _matched_gap(result["sends"], [r["t_start"] for r in rows]) * 1e3,
                    )
                    add(
                        "delivery_ms",
                        client,
                        _matched_gap([r["t_first"] for r in rows], result["firsts"]) * 1e3,
                    )
                    add("memory_mib", client, result["peak_rss_mib"])
                print(
                    f"  repeat {repeat + 1} paced, {client}: "
                    f"{_us_per_token(result):.1f} us CPU/token, agg {result['agg_tok_s']:,.0f} "
                    f"(server {record['agg_tok_s']:,.0f}) tok/s, TTFT p50 "
                    f"{result['ttft_p50_s'] * 1e3:.1f} ms "
                    f"(server {record['ttft_p50_s'] * 1e3:.1f})",
                    flush=True,
                )
        with stream_server("firehose", options) as (url, pid):
            for client in order:
                # The server's CPU per measured token (the clients' warm-ups, the same for all,
                # included): on a small machine the single-process reference server is what
                # saturates, and how much it works per token depends on the client (a reader
                # that falls behind lets it batch its writes).
                before = _process_cpu_s(pid)
                result = _run(client, url, options, work)
                if result is not None:
                    server_us = (_process_cpu_s(pid) - before) / result["tokens"] * 1e6
                    add("ceiling", client, result["agg_tok_s"])
                    add("server_us", client, server_us)
                    print(
                        f"  repeat {repeat + 1} firehose, {client}: "
                        f"{result['agg_tok_s']:,.0f} tok/s, the server's CPU "
                        f"{server_us:.1f} us/token",
                        flush=True,
                    )
    _print_compare(options, clients, table)


def _print_compare(
    options: argparse.Namespace, clients: list[str], table: dict[tuple[str, str], list[float]]
) -> None:
    from pytest_specperf.measure import loop

    print(
        f"\n{Path(options.server).name}, C={options.concurrency}, {options.requests} requests of "
        f"{options.tokens} tokens, {options.chunk} tokens per chunk, paced at {options.rate:g} "
        f"tok/s per request; {options.repeats} repeats (median, then each repeat); our event loop: "
        f"{loop.loop_name()}; {os.cpu_count()} cores\n"
    )  # fmt: skip
    rows = [
        ("client CPU per streamed token, paced (us)", "cpu_us", ".1f"),
        ("ceiling, unpaced (tok/s)", "ceiling", ",.0f"),
        ("  the reference server's CPU per token meanwhile (us)", "server_us", ".1f"),
        ("agg tok/s vs the server's record, paced (%)", "agg_pct", "+.2f"),
        ("per-request tok/s vs the server's record, paced (%)", "per_req_pct", "+.2f"),
        ("TTFT p50 minus the server's, paced (ms)", "ttft_ms", "+.1f"),
        ("  of which: send to the server's read (ms)", "read_ms", "+.1f"),
        ("  of which: server's first emit to our read (ms)", "delivery_ms", "+.1f"),
        ("the server's own TTFT p50 (ms)", "server_ttft_ms", ".1f"),
        ("peak client memory (MiB)", "memory_mib", ".0f"),
    ]
    print("| figure | " + " | ".join(clients) + " |")
    print("| --- |" + " --- |" * len(clients))
    for label, key, fmt in rows:
        cells = [_cell(table.get((key, client), []), fmt) for client in clients]
        print(f"| {label} | " + " | ".join(cells) + " |")
    floor = table.get(("ttft_floor_ms", "probe"), [])
    print(f"\nTTFT floor, a blocking socket, one request at a time: {_cell(floor, '+.1f')} ms")
    ours = table.get(("cpu_us", "specperf"), [])
    python = table.get(("cpu_us", "SGLang Python"), [])
    if ours and python:
        ratios = [a / b for a, b in zip(ours, python, strict=False)]
        print(f"CPU per token, ours / SGLang's Python client: {_cell(ratios, '.2f')}")


def _run(client: str, url: str, options: argparse.Namespace, work: Path) -> dict[str, Any] | None:
    if client == "specperf":
        return run_ours(url, options, options.requests, options.client_procs)
    return run_sglang(client, url, options, work)


def procs(options: argparse.Namespace) -> None:
    """The ceiling at one concurrency over several client-process counts (no SGLang needed).

    The server is --server unpaced: lab/studies/stream_server.py (the default) over
    --server-workers processes on one port (default: half the cores), so that it outruns the
    client as long as it can, or a one-process script such as firehose.py; each
    line says how busy the busiest client process was, so a count that no longer raises the
    ceiling shows whether the client (near 100%) or the server (below) stopped it.
    """
    began = time.monotonic()
    counts = [int(p) for p in options.procs.split(",")]
    script = Path(options.server)
    # stream_server.py serves from several processes on one port (SO_REUSEPORT); a script
    # given by --server (the project's firehose.py) is one process with no --workers flag.
    several = script.name == "stream_server.py"
    workers = (options.server_workers or max(1, (os.cpu_count() or 2) // 2)) if several else 1
    results: dict[int, list[dict[str, Any]]] = {p: [] for p in counts}
    loop_name = _event_loop_name()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, event loop {loop_name}"
        + ("" if loop_name == "uvloop" else " (uvloop is not installed: asyncio's own loop)"),
        flush=True,
    )
    with stream_server("firehose", options, workers=workers, script=script) as (url, _pid):
        for repeat in range(options.repeats):
            for count in counts if repeat % 2 == 0 else list(reversed(counts)):
                result = run_ours(url, options, options.requests, count)
                results[count].append(result)
                print(
                    f"  procs={count}: {result['agg_tok_s']:,.0f} tok/s, "
                    f"{_us_per_token(result):.1f} us CPU/token, busiest client process "
                    f"{result['busiest_cpu_share']:.0%} of a core, ok {result['ok']}/"
                    f"{result['requests']}, client_bound={result['client_bound']}",
                    flush=True,
                )
    print(f"\nceiling, {script.name} unpaced ({workers} server processes), "
          f"C={options.concurrency}, {options.requests} requests of {options.tokens} tokens, "
          f"{os.cpu_count()} cores, event loop {loop_name}, medians of {options.repeats} "
          f"({time.monotonic() - began:.0f} s in all):")  # fmt: skip
    for count, runs in results.items():
        agg = _median([r["agg_tok_s"] for r in runs])
        used = _median([_us_per_token(r) for r in runs])
        busiest = _median([r["busiest_cpu_share"] for r in runs])
        print(
            f"  client procs {count}: {agg:,.0f} tok/s, {used:.1f} us CPU/token, "
            f"busiest client process {busiest:.0%} of a core"
        )


def _event_loop_name() -> str:
    """The loop our client runs on here, asked in a child as the client itself would."""
    done = subprocess.run(
        [sys.executable, "-c", "from pytest_specperf.measure import loop; print(loop.loop_name())"],
        capture_output=True, text=True, env=_child_env(), check=False,
    )  # fmt: skip
    return done.stdout.strip() or f"unknown ({done.stderr.strip()[-200:]})"


def scale(options: argparse.Namespace) -> None:
    """Sim sweeps at high concurrency: every request accounted for, peak client memory."""
    sys.path.insert(0, str(HERE))
    from _sim import boot_sim

    work = Path(tempfile.mkdtemp(prefix="client-overhead-scale-"))
    for concurrency in [int(c) for c in options.concurrency_list.split(",")]:
        extra = ("--max-running-requests", str(concurrency))
        sim = boot_sim(3, options.speedup, work / f"sim-{concurrency}.log", extra)
        try:
            options.concurrency = concurrency
            result = run_ours(sim.url, options, 2 * concurrency, options.client_procs)
        finally:
            sim.stop()
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
    parser.add_argument(
        "--server",
        default=str(HERE / "stream_server.py"),
        help="the reference server script (firehose.py's command line); procs mode: default "
        "stream_server.py over --server-workers processes",
    )
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
