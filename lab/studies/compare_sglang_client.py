"""`specperf bench` vs SGLang's own client (`sglang.benchmark.serving`), same sim, side by side.

    python lab/studies/compare_sglang_client.py --python /tmp/sglbench/bin/python \\
        --speedup 5 --concurrency 1,4,16,64 --repeats 3

Boots ONE simulator (EAGLE, --steps 3, default profile, --sim-speedup K) and, for every
concurrency C, runs the two clients one after the other (never at once; the order alternates
from point to point and repeat to repeat) against that same server:

- `python -m pytest_specperf.cli bench --url URL --concurrency C --out ...` (N = 4 at C = 1,
  else 2C; 1000 tokens, temperature 0, ignore_eos; its own warm-up of max(2, C) 32-token
  requests at the same C);
- `PY -m sglang.benchmark.serving --backend sglang --dataset-name random-ids
  --random-input-len W --random-output-len 1000 --random-range-ratio 1.0 --num-prompts N
  --max-concurrency C --tokenizer DIR --model x` with W = the word count of the suite's
  prompt (the sim counts one token per word). Its defaults already send temperature 0 and
  ignore_eos true (`--temperature` defaults to 0.0, `--disable-ignore-eos` is off); its
  warm-up is 1 request of 32 tokens, then 1 s of sleep.

Both hit the native `/generate` endpoint with streaming and read token counts from
meta_info.completion_tokens. What cannot be matched: the prompt text (ours is a fixed English
sentence of W words, theirs W random "wN" words per request, a different one each request;
the sim only uses the count) and SGLang's per-request aiohttp session (a new connection per
request) against our pooled keep-alive connections.

Figures are reported in SIMULATED time: at --sim-speedup K every server time is K times
shorter, so measured tok/s are divided by K and measured times multiplied by K. The raw
measured figures go to `compare.json` in --work-dir. Each printed cell is the median over
--repeats. The tokenizer is the project's own (`model_factory.build_model("tiny-qwen3")`:
WordLevel over "w0".."w{vocab-4}" plus 4 specials), so no download is needed
(HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _sim import boot_sim, sglang_serving_argv

from pytest_specperf.measure.workload import Workload
from pytest_specperf.server.model_factory import build_model

DEFAULT_SGLANG_PYTHON = "/tmp/sglbench/bin/python"


@dataclass
class SideResult:
    """One client's figures for one point, in measured (wall-clock) units."""

    client: str
    concurrency: int
    requests: int
    ok: int
    output_tokens: int
    duration_s: float
    output_tok_s: float
    median_tpot_s: float
    median_itl_s: float
    median_ttft_s: float
    accept_length: float | None
    # From the sim's ground truth for exactly the measured requests of this run.
    sim_accept_length: float | None = None
    sim_step_lateness: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def requests_for(concurrency: int) -> int:
    return Workload().requests_for(concurrency)


def _sim_truth(url: str, max_new_tokens: int) -> tuple[float | None, float | None]:
    """Accept length over this run's measured requests, and the scheduler's lateness."""
    truth = httpx.get(url + "/sim/ground_truth", timeout=30).json()
    measured = [
        r
        for r in truth["requests"]
        if r["max_new_tokens"] == max_new_tokens and r["finish_reason"] and not r["aborted"]
    ]
    verify = sum(r["spec_verify_ct"] for r in measured)
    tokens = sum(r["completion_tokens"] for r in measured)
    accept = tokens / verify if verify else None
    return accept, truth["steps"].get("achieved_over_model")


def _reset_truth(url: str) -> None:
    httpx.post(url + "/sim/reset_ground_truth", timeout=30).raise_for_status()


def run_specperf(url: str, concurrency: int, max_new_tokens: int, work: Path) -> SideResult:
    out = work / f"specperf_c{concurrency}_{time.monotonic_ns()}"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_specperf.cli",
            "bench",
            "--url",
            url,
            "--concurrency",
            str(concurrency),
            "--max-new-tokens",
            str(max_new_tokens),
            "--out",
            str(out),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    point = json.loads((out / "results.json").read_text())["runs"][0]["points"][0]
    return SideResult(
        client="specperf",
        concurrency=concurrency,
        requests=point["requests"],
        ok=point["ok"],
        output_tokens=point["tokens"],
        duration_s=point["wall_s"],
        output_tok_s=point["agg_tok_s"],
        median_tpot_s=point["tpot_s"]["p50"],
        median_itl_s=point["itl_s"]["p50"],
        median_ttft_s=point["ttft_s"]["p50"],
        accept_length=point["accept_length"],
        extra={"file": str(out), "per_req_tok_s": point["per_req_tok_s"]},
    )


def run_sglang(
    python: str,
    url: str,
    concurrency: int,
    max_new_tokens: int,
    input_len: int,
    tokenizer: Path,
    work: Path,
) -> SideResult:
    out = work / f"sglang_c{concurrency}_{time.monotonic_ns()}.jsonl"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    serving = sglang_serving_argv(
        python, url, tokenizer=str(tokenizer), model="x", input_len=input_len,
        output_len=max_new_tokens, prompts=requests_for(concurrency),
        concurrency=concurrency, output_file=str(out),
    )  # fmt: skip
    log = out.with_suffix(".log")
    with log.open("wb") as sink:
        subprocess.run(
            [*serving, "--output-details"],
            check=True,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=work,
        )
    result = json.loads(out.read_text().splitlines()[-1])
    return SideResult(
        client="sglang",
        concurrency=concurrency,
        requests=requests_for(concurrency),
        ok=result["completed"],
        output_tokens=result["total_output_tokens"],
        duration_s=result["duration"],
        output_tok_s=result["output_throughput"],
        median_tpot_s=result["median_tpot_ms"] / 1000,
        median_itl_s=result["median_itl_ms"] / 1000,
        median_ttft_s=result["median_ttft_ms"] / 1000,
        accept_length=result["accept_length"],
        extra={"file": str(out), "total_input_tokens": result["total_input_tokens"]},
    )


def _diff(ours: float, theirs: float) -> str:
    return f"{100 * (ours / theirs - 1):+.1f}%" if theirs else "n/a"


def _acc(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def table(results: list[SideResult], speedup: float) -> str:
    k = speedup
    head = (
        "| C | N | specperf out tok/s | sglang out tok/s | diff | specperf TPOT / ITL (ms) "
        "| sglang TPOT / ITL (ms) | TPOT diff | specperf TTFT (ms) | sglang TTFT (ms) "
        "| TTFT diff | accept len specperf / sglang / sim truth |"
    )
    lines = [head, "|" + "---|" * 12]
    for c in sorted({r.concurrency for r in results}):
        ours = [r for r in results if r.concurrency == c and r.client == "specperf"]
        theirs = [r for r in results if r.concurrency == c and r.client == "sglang"]

        def med(rows: list[SideResult], name: str) -> float:
            return statistics.median(float(getattr(r, name)) for r in rows)

        o_tps, t_tps = med(ours, "output_tok_s") / k, med(theirs, "output_tok_s") / k
        o_tpot, t_tpot = med(ours, "median_tpot_s") * k, med(theirs, "median_tpot_s") * k
        o_itl, t_itl = med(ours, "median_itl_s") * k, med(theirs, "median_itl_s") * k
        o_ttft, t_ttft = med(ours, "median_ttft_s") * k, med(theirs, "median_ttft_s") * k
        truth = _median([r.sim_accept_length for r in ours + theirs])
        lines.append(
            f"| {c} | {ours[0].requests} | {o_tps:,.1f} | {t_tps:,.1f} | {_diff(o_tps, t_tps)} "
            f"| {1000 * o_tpot:.2f} / {1000 * o_itl:.2f} | {1000 * t_tpot:.2f} / "
            f"{1000 * t_itl:.2f} | {_diff(o_tpot, t_tpot)} | {1000 * o_ttft:,.1f} "
            f"| {1000 * t_ttft:,.1f} | {_diff(o_ttft, t_ttft)} "
            f"| {_acc(_median([r.accept_length for r in ours]))} / "
            f"{_acc(_median([r.accept_length for r in theirs]))} / {_acc(truth)} |"
        )
    return "\n".join(lines)


def raw_table(results: list[SideResult]) -> str:
    lines = [
        "| C | rep/order | client | ok | tokens | duration (s) | out tok/s | TPOT (ms) "
        "| ITL (ms) | TTFT (ms) | accept | sim step achieved/model |",
        "|" + "---|" * 12,
    ]
    for r in results:
        lines.append(
            f"| {r.concurrency} | {r.extra['rep']}/{r.extra['order']} | {r.client} | {r.ok} "
            f"| {r.output_tokens} | {r.duration_s:.3f} | {r.output_tok_s:,.1f} "
            f"| {1000 * r.median_tpot_s:.3f} | {1000 * r.median_itl_s:.3f} "
            f"| {1000 * r.median_ttft_s:.2f} | {_acc(r.accept_length)} "
            f"| {_acc(r.sim_step_lateness)} |"
        )
    return "\n".join(lines)


def _versions(python: str, url: str) -> dict[str, str]:
    sglang = subprocess.run(
        [python, "-c", "import sglang, sys; print(sglang.__version__, sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    info = httpx.get(url + "/server_info", timeout=10).json()
    ours = subprocess.run(
        [sys.executable, "-m", "pip", "show", "pytest-specperf"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    version = next(
        (ln.split(":", 1)[1].strip() for ln in ours.splitlines() if ln.startswith("Version")), "?"
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "sglang client (version, python)": sglang,
        "simulator /server_info version": str(info.get("version")),
        "pytest-specperf": f"{version} (git {commit})",
        "specperf python": platform.python_version(),
    }


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--python", default=DEFAULT_SGLANG_PYTHON, help="interpreter with sglang")
    p.add_argument("--speedup", type=float, default=5.0, help="--sim-speedup of the simulator")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--concurrency", default="1,4,16,64")
    p.add_argument("--max-new-tokens", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=1, help="pairs per point; cells are medians")
    p.add_argument("--work-dir", default=None, help="raw outputs (default: a new /tmp dir)")
    a = p.parse_args()
    concurrencies = [int(c) for c in a.concurrency.split(",")]
    work = Path(a.work_dir or tempfile.mkdtemp(prefix="specperf-vs-sglang-"))
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = build_model("tiny-qwen3", work / "cache")
    input_len = len(Workload().prompt.split())
    server = boot_sim(a.steps, a.speedup, work / "sim.log")
    url = server.url
    results: list[SideResult] = []
    try:
        versions = _versions(a.python, url)
        flip = 0
        for rep in range(a.repeats):
            for c in concurrencies:
                order = ("specperf", "sglang") if flip % 2 == 0 else ("sglang", "specperf")
                flip += 1
                for position, client in enumerate(order):
                    _reset_truth(url)
                    if client == "specperf":
                        r = run_specperf(url, c, a.max_new_tokens, work)
                    else:
                        r = run_sglang(
                            a.python, url, c, a.max_new_tokens, input_len, tokenizer, work
                        )
                    r.sim_accept_length, r.sim_step_lateness = _sim_truth(url, a.max_new_tokens)
                    r.extra.update(rep=rep + 1, order=position + 1)
                    results.append(r)
                    print(
                        f"rep {rep + 1} C={c} {client:8s}: {r.output_tok_s / a.speedup:8.1f} "
                        f"tok/s (sim time), {r.ok}/{r.requests} ok",
                        flush=True,
                    )
    finally:
        server.stop()
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    summary = {
        "date": stamp,
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "speedup": a.speedup,
        "steps": a.steps,
        "input_len": input_len,
        "versions": versions,
        "results": [asdict(r) for r in results],
    }
    (work / "compare.json").write_text(json.dumps(summary, indent=1))
    print(f"\n{stamp}; steps={a.steps}; sim speedup K={a.speedup:g}; prompt {input_len} tokens")
    for name, value in versions.items():
        print(f"- {name}: {value}")
    print(
        f"\nSimulated-time figures (measured tok/s / {a.speedup:g}, measured times x "
        f"{a.speedup:g}); each cell the median of {a.repeats} run(s); diff = specperf/sglang - 1."
    )
    print(table(results, a.speedup))
    print("\nEvery run, MEASURED (wall-clock) units:")
    print(raw_table(results))
    print(f"\nraw outputs: {work}")
    return 0 if all(r.ok == r.requests for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
