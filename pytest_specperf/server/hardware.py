"""The hardware key that baselines are filed under, e.g. ``4x-rtx-pro-6000-blackwell``.

Real servers: read with nvidia-smi on the machine that boots the server. The simulator reports
itself in /server_info's ``sim`` block; its figures scale with its speedup, so that is in the key.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_specperf.errors import UsageError

UNKNOWN_HARDWARE = "unknown-hardware"
_EDITION_SUFFIX = re.compile(r"-(max-q-)?(workstation|server)-edition$")
# A key as the suite makes them: groups of lowercase letters and digits joined by '-', '+'
# (mixed cards: 1x-a100+2x-h200) or '.' (a simulator's speedup: sim-x2.5). One path segment
# under the baselines directory, never '.', '..' or a path.
_KEY = re.compile(r"[a-z0-9]+(?:[-+.][a-z0-9]+)*")
MAX_KEY_CHARS = 255  # a file name's limit
KEY_RULE = (
    "a key is a name: lowercase letters and digits joined by '-', '+' or '.', "
    "e.g. 1x-h200 or sim-x5"
)


def key_problem(text: str) -> str | None:
    """Why ``text`` cannot be a hardware key; None when it is one."""
    if len(text) <= MAX_KEY_CHARS and _KEY.fullmatch(text):
        return None
    return f"{text!r} is not a hardware key ({KEY_RULE})"


def slug(text: str) -> str:
    """Lowercase, alphanumerics and single dashes: safe as one path component."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return cleaned[:80] or "unnamed"


def gpu_key(names: Sequence[str]) -> str:
    """``['NVIDIA H200', 'NVIDIA H200']`` -> ``2x-h200``; mixed cards are listed each."""
    counted = Counter(_EDITION_SUFFIX.sub("", slug(re.sub(r"^NVIDIA\s+", "", n))) for n in names)
    return "+".join(f"{count}x-{name}" for name, count in sorted(counted.items()))


def local_gpu_names(timeout_s: float = 10.0) -> list[str]:
    """GPU names from nvidia-smi, honouring CUDA_VISIBLE_DEVICES only through nvidia-smi itself."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return []
    try:
        done = subprocess.run(
            [binary, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def sim_key(sim: Mapping[str, Any]) -> str:
    speedup = float(sim.get("speedup", 1.0))
    return f"sim-x{speedup:g}"


def hardware_key(
    server_info: Mapping[str, Any], *, override: str | None = None, tp_size: int | None = None
) -> str:
    """The key for this server: explicit override (a key as typed), the simulator's own, or
    local nvidia-smi.

    With ``tp_size`` only that many GPUs count (a runner may have more than the server uses).
    """
    if override:
        problem = key_problem(override)
        if problem is not None:
            raise UsageError(f"hardware key: {problem}")
        return override
    sim = server_info.get("sim")
    if isinstance(sim, Mapping):
        return sim_key(sim)
    names = local_gpu_names()
    if tp_size is not None and len(names) > tp_size:
        names = names[:tp_size]
    return gpu_key(names) if names else UNKNOWN_HARDWARE
