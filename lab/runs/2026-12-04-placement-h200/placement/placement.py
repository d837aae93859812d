"""Does the vCPU the SGLang scheduler runs on set a boot's throughput? (the run's own script)

1. every vCPU's single-thread Python speed, one at a time, three rounds;
2. boots of the NGRAM smoke profile (depth 3), until DEADLINE_EPOCH is near; in each: C=1
   throughput unpinned, then with the scheduler's threads pinned to one vCPU (the rest of the
   server and this client kept off it); in the first boot, a sweep of the scheduler over
   several vCPUs, two vCPUs, and one vCPU beside a busy loop.

    LENT_H200=1 source scripts/_lent_gpu.sh   # the SGLang bundle on PYTHONPATH
    python3 placement.py OUT_DIR DEADLINE_EPOCH
    BACKEND=sim python3 placement.py OUT_DIR DEADLINE_EPOCH   # a dry run on the simulator

Restyled for the linter after the run (same steps and figures).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

OUT = Path(sys.argv[1])
DEADLINE = float(sys.argv[2])
OUT.mkdir(parents=True, exist_ok=True)
LOG = open(OUT / "placement.log", "a", buffering=1)  # noqa: SIM115 (open for the whole run)
ROWS = open(OUT / "placement.jsonl", "a", buffering=1)  # noqa: SIM115
N = os.cpu_count() or 1
ALL = set(range(N))


def C(*cpus: int) -> set[int]:  # the vCPUs named, modulo this machine's count
    return {c % N for c in cpus}


PORT = 30123
URL = f"http://127.0.0.1:{PORT}"
START = time.time()


def say(text: str) -> None:
    LOG.write(f"[{time.time() - START:6.1f}s] {text}\n")


def row(**fields: object) -> None:
    ROWS.write(json.dumps({"t": round(time.time(), 1), **fields}) + "\n")


SPIN = (
    "import os,sys,time\nos.sched_setaffinity(0,{int(sys.argv[1])})\n"
    "end=time.perf_counter()+float(sys.argv[2]);n=0\n"
    "while time.perf_counter()<end:\n n+=1\nprint(n)"
)


def vcpu_speeds(label: str, cpus: list[int], seconds: float = 0.25) -> dict[int, float]:
    found = {}
    for cpu in cpus:
        done = subprocess.run(
            [sys.executable, "-c", SPIN, str(cpu), str(seconds)],
            capture_output=True,
            text=True,
            check=True,
        )
        found[cpu] = int(done.stdout) / seconds / 1e6
    row(kind="vcpu_speed", label=label, speeds=found)
    say(f"vcpu speed {label}: " + " ".join(f"{c}:{v:.2f}" for c, v in found.items()))
    return found


def generate(tokens: int = 128) -> int:
    body = json.dumps(
        {
            "text": "The quick brown fox jumps over the lazy dog. " * 8,
            "sampling_params": {"max_new_tokens": tokens, "temperature": 0, "ignore_eos": True},
        }
    ).encode()
    request = urllib.request.Request(
        f"{URL}/generate", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return int(json.loads(answer.read())["meta_info"]["completion_tokens"])


def tok_s(seconds: float = 3.0) -> float:
    begun = time.perf_counter()
    tokens = 0
    while time.perf_counter() - begun < seconds:
        tokens += generate()
    return tokens / (time.perf_counter() - begun)


def server_procs(root: psutil.Process) -> tuple[psutil.Process | None, list[psutil.Process]]:
    scheduler, others = None, []
    for proc in [root, *root.children(recursive=True)]:
        try:
            title = " ".join(proc.cmdline())[:40]
        except psutil.Error:
            continue
        if "scheduler" in title:
            scheduler = proc
        else:
            others.append(proc)
    return scheduler, others


def pin(proc: psutil.Process, cpus: set[int]) -> None:
    for thread in proc.threads():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(thread.id, cpus)


def thread_cpus(proc: psutil.Process) -> dict[int, tuple[int, float]]:
    """tid -> (last vCPU, CPU seconds)."""
    found = {}
    for task in Path(f"/proc/{proc.pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(task.name)] = (
            int(fields[36]),
            (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"),
        )
    return found


def measured(label: str, scheduler: psutil.Process, boot: int, seconds: float = 3.0) -> float:
    before = thread_cpus(scheduler)
    begun = time.perf_counter()
    value = tok_s(seconds)
    wall = time.perf_counter() - begun
    after = thread_cpus(scheduler)
    busy = sorted(
        ((after[t][1] - before.get(t, (0, after[t][1]))[1]) / wall, after[t][0], t) for t in after
    )[::-1][:3]
    row(
        kind="tok_s",
        boot=boot,
        label=label,
        tok_s=round(value, 1),
        busy_threads=[{"share": round(s, 2), "cpu": c, "tid": t} for s, c, t in busy],
        client_cpu=psutil.Process().cpu_num(),
    )
    say(
        f"boot {boot} {label}: {value:.1f} tok/s; scheduler threads "
        + ", ".join(f"{s:.0%}@cpu{c}" for s, c, _ in busy)
    )
    return value


def boot(number: int) -> None:
    from pytest_specperf.server.model_factory import build_model

    if os.environ.get("BACKEND") == "sim":
        argv = [
            sys.executable,
            "-m",
            "pytest_specperf.sim",
            "--port",
            str(PORT),
            "--speculative-num-steps",
            "3",
        ]
    else:
        argv = [
            sys.executable,
            "-m",
            "sglang.launch_server",
            "--model-path",
            str(build_model("tiny-qwen3")),
            "--tp-size",
            "1",
            "--host",
            "127.0.0.1",
            "--port",
            str(PORT),
            "--speculative-algorithm",
            "NGRAM",
            "--speculative-num-draft-tokens",
            "4",
            "--load-format",
            "dummy",
            "--attention-backend",
            "triton",
            "--sampling-backend",
            "pytorch",
            "--disable-radix-cache",
            "--mem-fraction-static",
            "0.2",
            "--cuda-graph-max-bs",
            "16",
            "--trust-remote-code",
        ]
    say(" ".join(argv))
    os.sched_setaffinity(0, ALL)
    logfile = open(OUT / f"server-{number}.log", "w")  # noqa: SIM115 (closed in finally)
    begun = time.time()
    server = subprocess.Popen(
        argv, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        while True:
            if server.poll() is not None:
                say(f"boot {number}: server exited {server.returncode}")
                return
            try:
                with urllib.request.urlopen(f"{URL}/health_generate", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except Exception:
                pass
            time.sleep(0.5)
        say(f"boot {number}: ready in {time.time() - begun:.1f} s")
        root = psutil.Process(server.pid)
        scheduler, others = server_procs(root)
        scheduler = scheduler or root  # the simulator is one process
        tok_s(3.0)
        tok_s(3.0)  # warm-up
        for _ in range(2):
            measured("unpinned", scheduler, number)
        client = C(8, 9, 10, 11)
        for proc in others:
            pin(proc, C(12, 13, 14, 15))
        os.sched_setaffinity(0, client)
        sweep = [6, 0, 3, 15, 9, 6, 0, 3, 15, 9] if number == 1 else [6, 6, 6]
        for cpu in sweep:
            if time.time() > DEADLINE - 60:
                break
            pin(scheduler, C(cpu))
            measured(f"scheduler on cpu{cpu}", scheduler, number)
        if number == 1 and time.time() < DEADLINE - 60:
            pin(scheduler, C(6, 7))
            measured("scheduler on cpu6,7", scheduler, number)
            hog = subprocess.Popen([sys.executable, "-c", SPIN, str(6 % N), "4"])
            pin(scheduler, C(6))
            measured("scheduler on cpu6 beside a busy loop", scheduler, number)
            hog.wait()
        for proc in [scheduler, *others]:
            pin(proc, ALL)
        os.sched_setaffinity(0, ALL)
        measured("unpinned again", scheduler, number)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        logfile.close()
        time.sleep(3)


def main() -> None:
    say(subprocess.run(["lscpu"], capture_output=True, text=True).stdout)
    cpus = sorted(ALL)
    for round_ in range(3):
        vcpu_speeds(f"idle round {round_ + 1}", cpus)
    number = 0
    while time.time() < DEADLINE - 150:
        number += 1
        boot(number)
        vcpu_speeds(f"after boot {number}", cpus)
    say("placement end")


if __name__ == "__main__":
    main()
