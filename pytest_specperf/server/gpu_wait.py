"""How much of a sample SGLang's scheduler spent waiting for the GPU, read from its stack.

cpu_use.py reads the scheduler's CPU time, but on a CUDA machine that time includes its wait
for each batch: the scheduler waits on a default CUDA event (``result.copy_done.synchronize()``,
SGLang 0.5.12 and 0.5.23 alike), and CUDA's default wait spins while a process has fewer CUDA
contexts than the machine has cores. So the core reads 100% beside a busy GPU
(docs/runs/2026-12-05-seed-h200). To tell the scheduler's own work from its wait, py-spy
(an optional tool: ``pip install py-spy``) samples the process's Python stacks during the
sample without stopping it (``--nonblocking``), and the share of its main thread's samples
that sit in torch's CUDA ``synchronize`` is the share of the sample's wall time it waited.

What it sees: the waits torch makes from Python, ``Event.synchronize`` and
``Stream.synchronize`` (torch/cuda/streams.py) and ``torch.cuda.synchronize``. SGLang's
overlap scheduler (on by default, and for EAGLE/MTP speculation with topk 1: "Spec v2", as the
seed-class boots logged) waits there. What it does not see: a blocking copy made
in C++ from a Python line (``.tolist()``, ``.cpu()``, ``.item()`` of a GPU tensor), which is
how SGLang waits with the overlap scheduler off (NGRAM speculation turns it off on 0.5.12;
0.5.23's NGRAM worker waits in a blocking ``.cpu()``): there the wait reads 0 and counts as
work, as it did before.

py-spy needs to read the process's memory: root, or ptrace allowed (kernel.yama.ptrace_scope 0,
or CAP_SYS_PTRACE in a container): ``ptrace_problem``. Where it cannot, nothing is read.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# --specperf-server-stacks: auto reads the stacks of a real SGLang server when py-spy is found.
ServerStacks = Literal["auto", "on", "off"]
SERVER_STACKS_CHOICES: tuple[ServerStacks, ...] = ("auto", "on", "off")
# Samples a second: enough for a share within a few percent over a sample of seconds, and
# cheap for the sampler (it reads the stacks without pausing the process).
SAMPLE_RATE_HZ = 50
# py-spy writes its file after the interrupt; a stack dump of one process takes milliseconds.
STOP_TIMEOUT_S = 10.0
# py-spy 0.4.3 killed by an interrupt 0 s after its start wrote nothing; 0.05 s later it did.
HANDLER_GRACE_S = 0.3
# Where a process waits for the GPU from Python: torch's Event.synchronize (the scheduler's
# copy_done, torch/cuda/streams.py) and torch.cuda.synchronize (torch/cuda/__init__.py).
WAIT_FRAMES = (
    ("synchronize", "torch/cuda/streams.py"),
    ("synchronize", "torch/cuda/__init__.py"),
)
# A raw (collapsed) line with --threads: ``thread (TID): NAME;frame;frame COUNT``, each frame
# ``function (file:line)``.
_LINE = re.compile(
    r"^thread \((?P<tid>[^)]*)\)(?::\s*(?P<name>[^;]*))?;?(?P<frames>.*) (?P<n>\d+)$"
)
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*):\d+\)$")
MAIN_THREAD = "MainThread"


def ptrace_problem(
    euid: int | None = None, scope_file: Path = Path("/proc/sys/kernel/yama/ptrace_scope")
) -> str | None:
    """Why py-spy may not read the server's processes here, or None. Under Yama's
    ptrace_scope 1 (Ubuntu's default) a process may read only its own descendants, and the
    server is pytest's child, not py-spy's; root may always."""
    if (os.geteuid() if euid is None else euid) == 0:
        return None
    try:
        scope = scope_file.read_text().strip()
    except OSError:
        return None  # no Yama: a process may read another of its own user
    if scope == "0":
        return None
    return (
        f"kernel.yama.ptrace_scope is {scope}: py-spy may read only its own children, and the "
        "server is not one (run as root, or sudo sysctl kernel.yama.ptrace_scope=0)"
    )


def find_py_spy() -> str | None:
    """The py-spy executable: beside this interpreter first (a virtual environment's), then
    on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("py-spy")


@dataclass(frozen=True)
class StackCounts:
    """The main thread's stack samples, and those inside a wait for the GPU."""

    samples: int
    waiting: int

    @property
    def wait_share(self) -> float | None:
        return self.waiting / self.samples if self.samples else None


def _waits(frames: str) -> bool:
    for frame in frames.split(";"):
        found = _FRAME.match(frame)
        if found is None:
            continue
        path = found["file"].replace("\\", "/")
        # py-spy names a method by its qualified name on Python 3.11+ (Event.synchronize).
        function = found["function"].rsplit(".", 1)[-1]
        if any(function == f and path.endswith(p) for f, p in WAIT_FRAMES):
            return True
    return False


def count_stacks(raw: str) -> StackCounts:
    """The main thread's samples in py-spy's raw output (``--threads --idle``): a line per
    distinct stack with its count. Without a thread named MainThread, the thread with the
    most samples in a wait stands for it."""
    by_thread: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    for line in raw.splitlines():
        found = _LINE.match(line.strip())
        if found is None:
            continue
        tid, n = found["tid"], int(found["n"])
        if found["name"]:  # py-spy cannot always name a thread: keep a name once seen
            names[tid] = found["name"].strip()
        totals = by_thread.setdefault(tid, [0, 0])
        totals[0] += n
        if _waits(found["frames"]):
            totals[1] += n
    if not by_thread:
        return StackCounts(samples=0, waiting=0)
    main = [tid for tid, name in names.items() if name == MAIN_THREAD]
    # With --idle every thread has a sample at every tick: the one that waits stands for it.
    tid = main[0] if main else max(by_thread, key=lambda t: (by_thread[t][1], by_thread[t][0]))
    samples, waiting = by_thread[tid]
    return StackCounts(samples=samples, waiting=waiting)


class StackSampler:
    """py-spy recording one process from ``start()`` to ``stop()``; ``stop()`` returns the
    main thread's counts, or None with ``problem`` saying why nothing was read."""

    def __init__(self, executable: str, pid: int, rate_hz: int = SAMPLE_RATE_HZ) -> None:
        self.executable = executable
        self.pid = pid
        self.rate_hz = rate_hz
        self.problem: str | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._started_at = 0.0

    def start(self) -> StackSampler:
        folder = tempfile.TemporaryDirectory(prefix="specperf-stacks-")
        output = Path(folder.name) / "stacks.txt"
        argv = [
            self.executable,
            "record",
            *("--pid", str(self.pid), "--rate", str(self.rate_hz)),
            *("--format", "raw", "--output", str(output)),
            "--nonblocking",
            "--idle",
            "--threads",
            "--full-filenames",
        ]
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            folder.cleanup()
            self.problem = f"py-spy could not start: {exc}"
            return self
        self._dir = folder
        self._started_at = time.monotonic()
        return self

    def stop(self) -> StackCounts | None:
        process, folder = self._process, self._dir
        self._process = self._dir = None
        if process is None or folder is None:
            return None
        with folder:
            # An interrupt before py-spy installs its handler kills it before it writes.
            time.sleep(max(0.0, self._started_at + HANDLER_GRACE_S - time.monotonic()))
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                _, err = process.communicate(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate()
                self.problem = f"py-spy did not stop within {STOP_TIMEOUT_S:g} s"
                return None
            raw = ""
            with contextlib.suppress(OSError):
                raw = (Path(folder.name) / "stacks.txt").read_text(errors="replace")
        counts = count_stacks(raw)
        if counts.samples == 0:
            said = " ".join(err.decode(errors="replace").split())[-300:]
            self.problem = "py-spy read no stack of the server's busiest process" + (
                f": {said}" if said else ""
            )
            return None
        return counts
