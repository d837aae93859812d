"""The simulator's command line for the benchmark scripts (EAGLE, topk 1, steps + 1 drafts)."""

from __future__ import annotations

import sys


def sim_argv(steps: int, port: int, speedup: float, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest_specperf.sim", "--port", str(port),
        "--speculative-algorithm", "EAGLE", "--speculative-num-steps", str(steps),
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(steps + 1),
        "--sim-speedup", str(speedup), *extra,
    ]  # fmt: skip
