"""Which GPUs each server gets, so that parallel servers (xdist workers) never share one.

Two servers on the same GPUs measure each other: a server that sizes its KV pool while
another holds its share reports a fraction of its capacity, and a run once passed and put
that figure into a baseline (docs/how-to/several-gpus.md). So with
``--specperf-gpus-per-server K`` worker gwN's server is started with ``CUDA_VISIBLE_DEVICES``
= GPUs [N*K, (N+1)*K) of those present, and xdist on the sglang backend without it is refused.

GPUs present: ``--specperf-gpus`` or ``$SPECPERF_GPUS`` (a count, ``4``, or ids, ``0,1,5``),
else ``$CUDA_VISIBLE_DEVICES`` (the ids this process may use), else ``nvidia-smi -L``.
Plain code, no pytest.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pytest_specperf.errors import UsageError

CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
GPUS_ENV = "SPECPERF_GPUS"
GPUS_OPTION = "--specperf-gpus"
PER_SERVER_OPTION = "--specperf-gpus-per-server"
_WORKER_ID = re.compile(r"^gw(\d+)$")


@dataclass(frozen=True)
class PresentGpus:
    ids: tuple[str, ...]
    source: str  # where the list came from, for messages


def nvidia_smi_gpu_count(timeout_s: float = 10.0) -> int | None:
    """GPUs that ``nvidia-smi -L`` lists, or None without a working nvidia-smi."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "-L"], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))


def parse_gpu_ids(option: str, raw: str) -> tuple[str, ...]:
    """``"4"`` -> 0,1,2,3; ``"0,1,5"`` or ``"GPU-uuid,..."`` -> those ids, in order."""
    text = str(raw).strip()
    if text.isdigit() and "," not in text:
        return tuple(str(i) for i in range(int(text)))
    ids = tuple(part.strip() for part in text.split(","))
    if not text or any(not part for part in ids):
        raise UsageError(f"{option}: {raw!r} is not a GPU count (4) or a list of GPU ids (0,1,5)")
    if len(set(ids)) != len(ids):
        raise UsageError(f"{option}: {raw!r} names a GPU twice")
    return ids


def present_gpus(
    override: str | None,
    environ: Mapping[str, str] | None = None,
    count_gpus: Callable[[], int | None] = nvidia_smi_gpu_count,
) -> PresentGpus:
    environ = os.environ if environ is None else environ
    if override:
        return PresentGpus(parse_gpu_ids(GPUS_OPTION, override), GPUS_OPTION)
    if environ.get(GPUS_ENV):
        return PresentGpus(parse_gpu_ids(f"${GPUS_ENV}", environ[GPUS_ENV]), f"${GPUS_ENV}")
    if CUDA_VISIBLE_DEVICES in environ:
        visible = environ[CUDA_VISIBLE_DEVICES].strip()
        ids = tuple(part.strip() for part in visible.split(",") if part.strip())
        return PresentGpus(ids, f"{CUDA_VISIBLE_DEVICES}={visible!r}")
    count = count_gpus()
    if count is None:
        return PresentGpus((), "nvidia-smi -L (not found or failed)")
    return PresentGpus(tuple(str(i) for i in range(count)), "nvidia-smi -L")


def worker_index(worker_id: str | None) -> int:
    """``gw3`` -> 3; no xdist (None, ``master``) -> 0."""
    match = _WORKER_ID.match(worker_id or "")
    return int(match.group(1)) if match else 0


def xdist_worker_count(dist: str | None, tx: Sequence[str] | None) -> int:
    """Workers an xdist run starts (``-n 4`` becomes tx = 4 x popen); 1 without xdist."""
    if not dist or dist == "no" or not tx:
        return 1
    count = 0
    for spec in tx:
        times, star, _ = spec.partition("*")
        count += int(times) if star and times.isdigit() else 1
    return max(count, 1)


def check_gpu_plan(
    *,
    backend: str,
    attached: bool,
    workers: int,
    parallel_servers: int,
    per_server: int | None,
    present: PresentGpus | None,
    tp_size: int,
) -> None:
    """UsageError when servers would share GPUs or the GPUs asked for are not there."""
    if per_server is None:
        if backend == "sglang" and not attached and parallel_servers > 1:
            raise UsageError(
                f"{workers} xdist workers would boot SGLang servers side by side on the same "
                "GPUs, and servers sharing GPUs measure each other (one H200 run: a depth-1 "
                "server sized its KV pool while another held its share and reported "
                "max_total_num_tokens 30,835 instead of 57,934,502, and that went into a "
                f"baseline). Give each server its own GPUs with {PER_SERVER_OPTION}=K "
                f"(workers x K <= GPUs present), or run without -n"
            )
        return
    if attached:
        raise UsageError(
            f"{PER_SERVER_OPTION}: nothing is booted with --specperf-url; drop one of the two"
        )
    if per_server < 1:
        raise UsageError(f"{PER_SERVER_OPTION}: {per_server} must be >= 1")
    if backend == "sglang" and per_server < tp_size:
        raise UsageError(
            f"{PER_SERVER_OPTION}={per_server}: the profile runs with --tp-size {tp_size}, "
            f"which needs {tp_size} GPUs per server"
        )
    needed = workers * per_server
    if present is None:
        raise UsageError(f"{PER_SERVER_OPTION}: the GPUs present were not looked up")
    if needed > len(present.ids):
        raise UsageError(
            f"{PER_SERVER_OPTION}={per_server} x {workers} worker(s) needs {needed} GPUs, "
            f"but {len(present.ids)} are present (from {present.source}); "
            f"use fewer workers (-n) or fewer GPUs per server"
        )


def gpu_slice(present: PresentGpus, worker_id: str | None, per_server: int) -> tuple[str, ...]:
    """Worker gwN's GPUs: [N*K, (N+1)*K) of those present."""
    index = worker_index(worker_id)
    chosen = present.ids[index * per_server : (index + 1) * per_server]
    if len(chosen) < per_server:
        # A worker that replaced a crashed one gets a new, higher id: no slice is left for it.
        raise UsageError(
            f"worker {worker_id} has no GPUs left: {PER_SERVER_OPTION}={per_server} and "
            f"{len(present.ids)} GPUs present (from {present.source})"
        )
    return chosen


def visible_gpus(environ: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The GPU ids ``$CUDA_VISIBLE_DEVICES`` gives a server started from here (None: unset,
    every GPU)."""
    environ = os.environ if environ is None else environ
    if CUDA_VISIBLE_DEVICES not in environ:
        return None
    return tuple(part.strip() for part in environ[CUDA_VISIBLE_DEVICES].split(",") if part.strip())


def gpu_env(gpus: Sequence[str] | None) -> dict[str, str]:
    """The environment that pins a server to its GPUs (nothing when none were assigned)."""
    return {} if gpus is None else {CUDA_VISIBLE_DEVICES: ",".join(gpus)}
